package metadatalog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/clusterid"
	"github.com/kraftd/kraftd/metadatalog/vfs"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

// Kafka defaults and limits of the metadata log (KRaftConfigs, MetadataLogConfig).
const (
	DefaultSegmentBytes    = 1 << 30           // metadata.log.segment.bytes
	MinSegmentBytes        = 8 << 20           // metadata.log.segment.min.bytes (internal)
	DefaultSegmentMs       = 7 * 24 * 3600_000 // metadata.log.segment.ms
	DefaultRetentionBytes  = 100 << 20         // metadata.max.retention.bytes
	DefaultRetentionMs     = 7 * 24 * 3600_000 // metadata.max.retention.ms
	DefaultMaxBatchBytes   = 8 << 20           // raft's MAX_BATCH_SIZE_BYTES
	PartitionMetadataFile  = "partition.metadata"
	defaultReadWindowBytes = 1 << 20
)

// Partition dir names of the two raft topics.
const (
	MetadataTopic        = "__cluster_metadata"
	PerformanceTestTopic = "__raft_performance_test"
)

// PartitionDir returns <logDir>/<topic>-0.
func PartitionDir(logDir, topic string) string { return filepath.Join(logDir, topic+"-0") }

var (
	// ErrOffsetOutOfRange is wrapped by Read for an offset outside [start, end].
	ErrOffsetOutOfRange = errors.New("metadatalog: offset out of range")
	// ErrInvalidAppend is wrapped when Append refuses batches (offsets, epochs,
	// CRC, size); nothing was written and the log is still usable.
	ErrInvalidAppend = errors.New("metadatalog: invalid append")
	// ErrCorrupt is wrapped when open finds corruption it must not repair.
	ErrCorrupt = errors.New("metadatalog: corrupt log")
	// ErrSnapshotExists is wrapped by CreateSnapshot for an existing id.
	ErrSnapshotExists = errors.New("metadatalog: snapshot already exists")
	// ErrReadOnly is returned by writes on a log opened with ReadOnly.
	ErrReadOnly = errors.New("metadatalog: log opened read-only")
	errClosed   = errors.New("metadatalog: log closed")
)

// Options configures Open. Zero values take Kafka's defaults.
type Options struct {
	// Dir is the partition dir, e.g. PartitionDir(metadataLogDir,
	// MetadataTopic). Created if missing.
	Dir    string
	FS     vfs.FS      // nil = vfs.OS
	Logger *zap.Logger // nil = no logging
	// TopicID is written to partition.metadata when that file is missing
	// (zero = do not write it).
	TopicID [16]byte
	// SegmentBytes: metadata.log.segment.bytes; must be >= SegmentMinBytes.
	SegmentBytes int64
	// SegmentMinBytes: metadata.log.segment.min.bytes (8 MiB); tests lower it.
	SegmentMinBytes int64
	// SegmentMs: metadata.log.segment.ms, compared with batch timestamps as
	// Kafka does (ms).
	SegmentMs int64
	// RetentionBytes, RetentionMs: metadata.max.retention.bytes / .ms; < 0
	// disables. Applied by MaybeClean.
	RetentionBytes int64
	RetentionMs    int64
	// MaxBatchBytes bounds one appended batch (8 MiB).
	MaxBatchBytes int
	// ReadOnly opens without changing any file: a torn tail is ignored in
	// memory, nothing is deleted or written (for tools and interop tests).
	ReadOnly bool
}

// Log is raft.Log on disk in Kafka's layout. Not safe for concurrent use: the
// raft driver goroutine owns it (as raft.Log requires).
type Log struct {
	opts   Options
	fs     vfs.FS
	logger *zap.Logger
	dir    string

	// Invariant: len(segs) >= 1 while open; segs[i+1].base == segs[i].next.
	segs        []*segment
	startOffset int64
	// Invariant: startOffset <= flushed <= end offset.
	flushed int64
	hw      int64
	epochs  epochCache
	// epochsDirty: the epoch cache changed since leader-epoch-checkpoint was
	// last written.
	epochsDirty bool
	// snapshots are frozen snapshot ids, ascending by offset then epoch.
	snapshots []raft.OffsetAndEpoch
	// failed is set by the first write or fsync error; every later write
	// returns it (the on-disk state is unknown, raft must stop).
	failed error
	closed bool

	scratch [miniHeaderSize]byte
	// readHint remembers where the previous Read ended so a sequential reader
	// (a follower fetching, the listener catching up) skips the index walk.
	readHint struct {
		seg    *segment
		offset int64
		pos    int64
	}
}

var _ raft.Log = (*Log)(nil)

func (o *Options) fill() error {
	if o.Dir == "" {
		return errors.New("no directory")
	}
	o.FS = vfs.Or(o.FS)
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.SegmentMinBytes == 0 {
		o.SegmentMinBytes = MinSegmentBytes
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = DefaultSegmentBytes
	}
	if o.SegmentBytes < o.SegmentMinBytes || o.SegmentBytes < protocol.BatchHeaderSize {
		return fmt.Errorf("cannot set metadata.log.segment.bytes below %d: %d", o.SegmentMinBytes, o.SegmentBytes)
	}
	if o.SegmentBytes > 1<<31-1 {
		return fmt.Errorf("metadata.log.segment.bytes %d exceeds the int32 range", o.SegmentBytes)
	}
	if o.SegmentMs == 0 {
		o.SegmentMs = DefaultSegmentMs
	}
	if o.RetentionBytes == 0 {
		o.RetentionBytes = DefaultRetentionBytes
	}
	if o.RetentionMs == 0 {
		o.RetentionMs = DefaultRetentionMs
	}
	if o.MaxBatchBytes == 0 {
		o.MaxBatchBytes = DefaultMaxBatchBytes
	}
	return nil
}

// OpenReadOnly opens a partition dir for reading without changing it.
func OpenReadOnly(dir string) (*Log, error) {
	return Open(Options{Dir: dir, ReadOnly: true, SegmentMinBytes: protocol.BatchHeaderSize, SegmentBytes: 1<<31 - 1})
}

// Open opens (creating if needed) the log in opts.Dir and recovers it: every
// segment is re-validated (length, magic, CRC, offset continuity, epochs). A
// torn or corrupt tail of the last segment is truncated at the last good
// batch with a warning; corruption anywhere else, or followed by valid
// batches, is an error naming the file and position (ErrCorrupt). Leftover
// temporary files are removed; snapshots below the log start are deleted;
// a log start > 0 with no snapshot at it moves up to the earliest snapshot;
// when the newest snapshot is past the log end, the log restarts at it.
func Open(opts Options) (*Log, error) {
	if err := opts.fill(); err != nil {
		return nil, fmt.Errorf("metadatalog: open %s: %w", opts.Dir, err)
	}
	l := &Log{opts: opts, fs: opts.FS, logger: opts.Logger.With(zap.String("dir", opts.Dir)), dir: opts.Dir}
	if err := l.open(); err != nil {
		for _, s := range l.segs {
			s.f.Close()
		}
		return nil, fmt.Errorf("metadatalog: open %s: %w", opts.Dir, err)
	}
	return l, nil
}

func (l *Log) open() error {
	ro := l.opts.ReadOnly
	if !ro {
		if err := l.fs.MkdirAll(l.dir, 0o755); err != nil {
			return err
		}
	}
	names, err := l.fs.List(l.dir)
	if err != nil {
		return err
	}
	var bases []int64
	var junk []string
	for _, n := range names {
		if b, ok := parseBaseName(n, ".log"); ok {
			bases = append(bases, b)
			continue
		}
		if id, ok := parseSnapshotName(n, snapshotSuffix); ok {
			l.snapshots = append(l.snapshots, id)
			continue
		}
		switch {
		case strings.HasSuffix(n, partSuffix), strings.HasSuffix(n, ".deleted"),
			strings.HasSuffix(n, ".cleaned"), strings.HasSuffix(n, ".swap"),
			n == LeaderEpochCheckpointFile+".tmp", n == PartitionMetadataFile+".tmp", n == QuorumStateFile+".tmp":
			junk = append(junk, n)
		case isBaseFile(n, ".index"), isBaseFile(n, ".timeindex"), isBaseFile(n, ".txnindex"), isBaseFile(n, ".snapshot"):
			// kraftd keeps its offset index in memory and never updates
			// these, so a stale Kafka index must not outlive a kraftd
			// write; Kafka rebuilds missing indexes on open.
			junk = append(junk, n)
		}
	}
	if !ro {
		for _, n := range junk {
			if err := l.fs.Remove(filepath.Join(l.dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			l.logger.Info("removed leftover file", zap.String("file", n))
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	sortSnapshots(l.snapshots)

	flag := os.O_RDWR
	if ro {
		flag = os.O_RDONLY
	}
	buf := make([]byte, defaultReadWindowBytes)
	for i, base := range bases {
		p := filepath.Join(l.dir, segmentName(base))
		f, err := l.fs.OpenFile(p, flag, 0)
		if err != nil {
			return err
		}
		s := newSegment(l.dir, base, f)
		l.segs = append(l.segs, s)
		if i > 0 && base != l.segs[i-1].next {
			return fmt.Errorf("%w: %s starts at offset %d but the previous segment ends at offset %d", ErrCorrupt, p, base, l.segs[i-1].next)
		}
		if err := l.recoverSegment(s, i == len(bases)-1, buf); err != nil {
			return err
		}
	}
	if len(l.segs) == 0 {
		start := int64(0)
		if n := len(l.snapshots); n > 0 {
			// Only snapshots left (crash in TruncateToSnapshot): start at the
			// newest.
			start = l.snapshots[n-1].Offset
		}
		if ro {
			l.segs = append(l.segs, &segment{base: start, next: start, lastIndexed: -indexInterval, firstMaxTS: -1, f: nopFile{}})
		} else if err := l.createSegment(start); err != nil {
			return err
		}
	}
	l.startOffset = l.segs[0].base

	// Snapshots: drop those below the log start; a log start > 0 needs one
	// at or above it; a snapshot past the log end means an interrupted
	// snapshot install.
	var keep []raft.OffsetAndEpoch
	for _, id := range l.snapshots {
		if id.Offset < l.startOffset {
			if !ro {
				if err := l.fs.Remove(filepath.Join(l.dir, snapshotName(id))); err != nil && !errors.Is(err, os.ErrNotExist) {
					return err
				}
				l.logger.Info("deleted snapshot below the log start offset", zap.String("snapshot", snapshotName(id)), zap.Int64("log_start_offset", l.startOffset))
			}
			continue
		}
		keep = append(keep, id)
	}
	l.snapshots = keep
	if l.startOffset > 0 && len(l.snapshots) == 0 {
		return fmt.Errorf("%w: log start offset is %d but there is no snapshot at or above it", ErrCorrupt, l.startOffset)
	}
	if err := l.recoverStartOffset(); err != nil {
		return err
	}
	l.flushed = l.endOffset()
	if latest, ok := l.LatestSnapshot(); ok && !ro {
		le := l.lastEpoch()
		if latest.Epoch > le || (latest.Epoch == le && latest.Offset > l.endOffset()) {
			l.logger.Warn("latest snapshot is past the log end; restarting the log at it",
				zap.Int64("snapshot_offset", latest.Offset), zap.Int32("snapshot_epoch", latest.Epoch), zap.Int64("log_end_offset", l.endOffset()))
			if err := l.truncateFullyAndStartAt(latest); err != nil {
				return err
			}
		}
	}
	if ro {
		return nil
	}
	// Recovered bytes may still be only in the page cache (a process crash
	// keeps it): make them durable before reporting them flushed.
	last := l.segs[len(l.segs)-1]
	if err := last.f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", last.path, err)
	}
	if err := l.writeEpochCheckpoint(); err != nil {
		return err
	}
	if l.opts.TopicID != ([16]byte{}) {
		p := filepath.Join(l.dir, PartitionMetadataFile)
		if _, err := l.fs.Stat(p); errors.Is(err, os.ErrNotExist) {
			data := "version: 0\ntopic_id: " + clusterid.UUID(l.opts.TopicID).String()
			if err := vfs.WriteFileAtomic(l.fs, p, []byte(data)); err != nil {
				return err
			}
		}
	}
	return nil
}

// recoverStartOffset restores a log start that lay inside a segment. The
// log start is 0 or the end offset of a snapshot (MaybeClean and
// TruncateToSnapshot move it to one), but retention deletes only whole
// segments, so the first segment left may begin below the start. Kafka's
// metadata log is not in the log-start-offset-checkpoint (LogManager skips
// __cluster_metadata) and reopens at the first segment's base, which would
// move the start back below the earliest snapshot with no snapshot ending
// there. A start > 0 without a snapshot at it therefore moves up to the
// earliest snapshot (everything below is covered by it) when that snapshot
// is within the log; one past the log end is an interrupted snapshot
// install, handled by the caller. A start of 0 is kept: it needs no
// snapshot and every offset from 0 is still in the log.
func (l *Log) recoverStartOffset() error {
	earliest, ok := l.EarliestSnapshot()
	if l.startOffset == 0 || !ok || earliest.Offset == l.startOffset || earliest.Offset > l.endOffset() {
		return nil
	}
	l.logger.Info("log start offset is inside the first segment; moving it to the earliest snapshot",
		zap.Int64("first_segment_base", l.startOffset), zap.Int64("log_start_offset", earliest.Offset))
	l.startOffset = earliest.Offset
	if l.epochs.truncateFromStart(earliest.Offset) {
		l.epochsDirty = true
	}
	if l.opts.ReadOnly {
		return nil
	}
	return l.deleteSegmentsBelow(earliest.Offset)
}

func isBaseFile(name, suffix string) bool {
	_, ok := parseBaseName(name, suffix)
	return ok
}

// recoverSegment scans s from the start, rebuilding its index and the epoch
// cache. In the last segment a bad batch with nothing valid after it is a
// torn tail and is cut off; anything else bad is ErrCorrupt.
func (l *Log) recoverSegment(s *segment, last bool, buf []byte) error {
	st, err := s.f.Stat()
	if err != nil {
		return err
	}
	w := &scanWindow{r: s.f, size: st.Size(), buf: buf}
	pos := int64(0)
	minEpoch := int32(0)
	if e, ok := l.epochs.latest(); ok {
		minEpoch = e.Epoch
	}
	for pos < w.size {
		h, prob, err := checkBatchAt(w, pos, s.next, minEpoch)
		if err != nil {
			return fmt.Errorf("read %s at position %d: %w", s.path, pos, err)
		}
		if prob != nil {
			where := fmt.Sprintf("%s at position %d (expected offset %d)", s.path, pos, s.next)
			if !last {
				return fmt.Errorf("%w: bad batch in %s: %s", ErrCorrupt, where, prob.msg)
			}
			if p, found, err := validBatchAfter(w, pos, s.next); err != nil {
				return fmt.Errorf("read %s: %w", s.path, err)
			} else if found {
				return fmt.Errorf("%w: bad batch in %s: %s; a valid batch follows at position %d, so this is not a torn tail", ErrCorrupt, where, prob.msg, p)
			}
			l.logger.Warn("truncating torn or corrupt tail of the log",
				zap.String("file", s.path), zap.Int64("position", pos), zap.Int64("offset", s.next),
				zap.Int64("dropped_bytes", w.size-pos), zap.String("reason", prob.msg))
			if !l.opts.ReadOnly {
				if err := s.f.Truncate(pos); err != nil {
					return fmt.Errorf("truncate %s to %d: %w", s.path, pos, err)
				}
			}
			break
		}
		if h.PartitionLeaderEpoch >= 0 {
			if l.epochs.assign(h.PartitionLeaderEpoch, h.BaseOffset) {
				l.epochsDirty = true
			}
			minEpoch = h.PartitionLeaderEpoch
		}
		s.noteBatch(pos, h.BaseOffset, h.NextOffset(), h.Size(), h.MaxTimestamp)
		pos += int64(h.Size())
	}
	return nil
}

// createSegment creates and registers an empty segment at base; the dir is
// fsynced so the file survives a crash.
func (l *Log) createSegment(base int64) error {
	p := filepath.Join(l.dir, segmentName(base))
	f, err := l.fs.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("create segment %s: %w", p, err)
	}
	l.segs = append(l.segs, newSegment(l.dir, base, f))
	if err := vfs.SyncDir(l.fs, l.dir); err != nil {
		return err
	}
	return nil
}

func (l *Log) active() *segment { return l.segs[len(l.segs)-1] }

func (l *Log) endOffset() int64 { return l.active().next }

// lastEpoch is the last batch's epoch, else the latest snapshot's, else 0.
func (l *Log) lastEpoch() int32 {
	if e, ok := l.epochs.latest(); ok {
		return e.Epoch
	}
	if s, ok := l.LatestSnapshot(); ok {
		return s.Epoch
	}
	return 0
}

// Dir is the partition dir.
func (l *Log) Dir() string { return l.dir }

// StartOffset implements raft.Log.
func (l *Log) StartOffset() int64 { return l.startOffset }

// EndOffset implements raft.Log.
func (l *Log) EndOffset() raft.OffsetAndEpoch {
	return raft.OffsetAndEpoch{Offset: l.endOffset(), Epoch: l.lastEpoch()}
}

// FlushedOffset implements raft.Log.
func (l *Log) FlushedOffset() int64 { return l.flushed }

// HighWatermark is the value last given to SetHighWatermark.
func (l *Log) HighWatermark() int64 { return l.hw }

// SetHighWatermark implements raft.Log.
func (l *Log) SetHighWatermark(offset int64) { l.hw = offset }

// Size is the total bytes of all segments.
func (l *Log) Size() int64 {
	var n int64
	for _, s := range l.segs {
		n += s.size
	}
	return n
}

// SegmentBases lists the base offsets of the segments, ascending.
func (l *Log) SegmentBases() []int64 {
	out := make([]int64, len(l.segs))
	for i, s := range l.segs {
		out[i] = s.base
	}
	return out
}

func (l *Log) checkWritable() error {
	switch {
	case l.closed:
		return errClosed
	case l.opts.ReadOnly:
		return ErrReadOnly
	case l.failed != nil:
		return fmt.Errorf("metadatalog: log failed earlier: %w", l.failed)
	}
	return nil
}

// fail records a write or fsync error; the log refuses writes afterwards.
func (l *Log) fail(err error) error {
	if l.failed == nil {
		l.failed = err
	}
	return err
}

// AppendAsLeader stamps batches (whole v2 batches, offsets arbitrary) with
// consecutive offsets from the log end and with epoch, in place, then
// appends them. The CRC covers neither field, so the batches stay valid.
func (l *Log) AppendAsLeader(batches []byte, epoch int32) (int64, error) {
	next := l.endOffset()
	for b := batches; len(b) > 0; {
		h, err := protocol.ParseBatchHeader(b)
		if err != nil || len(b) < h.Size() || h.LastOffsetDelta < 0 {
			return 0, fmt.Errorf("%w: append as leader at offset %d: malformed batch: %v", ErrInvalidAppend, next, err)
		}
		protocol.SetBaseOffset(b, next)
		protocol.SetPartitionLeaderEpoch(b, epoch)
		next += int64(h.LastOffsetDelta) + 1
		b = b[h.Size():]
	}
	return l.Append(batches)
}

// Append implements raft.Log. Every batch is checked first (CRC, magic,
// length, base offset == expected, epoch >= previous, size limits); on any
// problem nothing is written and the error wraps ErrInvalidAppend. A write
// error leaves the log failed (raft must stop) after trying to cut the
// partial write off.
func (l *Log) Append(batches []byte) (int64, error) {
	if err := l.checkWritable(); err != nil {
		return 0, err
	}
	if len(batches) == 0 {
		return 0, fmt.Errorf("%w: no batches", ErrInvalidAppend)
	}
	type item struct {
		h   protocol.BatchHeader
		off int
	}
	items := make([]item, 0, 4)
	expect := l.endOffset()
	// The floor is the last batch's epoch, or the snapshot's when the log
	// is empty after one.
	lastEpoch := l.lastEpoch()
	for off := 0; off < len(batches); {
		h, err := protocol.CheckBatch(batches[off:])
		if err != nil {
			return 0, fmt.Errorf("%w: batch at offset %d (byte %d of the append): %v", ErrInvalidAppend, expect, off, err)
		}
		switch {
		case h.BaseOffset != expect:
			return 0, fmt.Errorf("%w: batch base offset %d is not the expected offset %d (log end offset %d)", ErrInvalidAppend, h.BaseOffset, expect, l.endOffset())
		case h.LastOffsetDelta < 0 || h.LastOffset() < h.BaseOffset:
			return 0, fmt.Errorf("%w: batch at offset %d has last offset delta %d", ErrInvalidAppend, h.BaseOffset, h.LastOffsetDelta)
		case h.PartitionLeaderEpoch < 0:
			return 0, fmt.Errorf("%w: batch at offset %d has no leader epoch (%d)", ErrInvalidAppend, h.BaseOffset, h.PartitionLeaderEpoch)
		case h.PartitionLeaderEpoch < lastEpoch:
			return 0, fmt.Errorf("%w: batch at offset %d has epoch %d, below the log's last epoch %d", ErrInvalidAppend, h.BaseOffset, h.PartitionLeaderEpoch, lastEpoch)
		case h.Size() > l.opts.MaxBatchBytes:
			return 0, fmt.Errorf("%w: batch at offset %d is %d bytes, above the limit %d", ErrInvalidAppend, h.BaseOffset, h.Size(), l.opts.MaxBatchBytes)
		case int64(h.Size()) > l.opts.SegmentBytes:
			return 0, fmt.Errorf("%w: batch at offset %d is %d bytes, above the segment size %d", ErrInvalidAppend, h.BaseOffset, h.Size(), l.opts.SegmentBytes)
		}
		items = append(items, item{h, off})
		expect = h.NextOffset()
		lastEpoch = h.PartitionLeaderEpoch
		off += h.Size()
	}

	// Write runs of batches that go to the same segment with one write each.
	for i := 0; i < len(items); {
		s := l.active()
		if l.shouldRoll(s, items[i].h) {
			if err := l.roll(items[i].h.BaseOffset); err != nil {
				return 0, err
			}
			s = l.active()
		}
		j := i
		size, firstTS := s.size, s.firstMaxTS
		if firstTS < 0 && size == 0 {
			firstTS = items[i].h.MaxTimestamp
		}
		for j < len(items) {
			h := items[j].h
			if j > i && l.shouldRollAt(s.base, size, firstTS, h) {
				break
			}
			size += int64(h.Size())
			j++
		}
		from, to := items[i].off, len(batches)
		if j < len(items) {
			to = items[j].off
		}
		if err := l.writeSegment(s, batches[from:to]); err != nil {
			return 0, err
		}
		pos := s.size
		for k := i; k < j; k++ {
			h := items[k].h
			s.noteBatch(pos, h.BaseOffset, h.NextOffset(), h.Size(), h.MaxTimestamp)
			if l.epochs.assign(h.PartitionLeaderEpoch, h.BaseOffset) {
				l.epochsDirty = true
			}
			pos += int64(h.Size())
		}
		i = j
	}
	return l.endOffset() - 1, nil
}

func (l *Log) shouldRoll(s *segment, h protocol.BatchHeader) bool {
	return l.shouldRollAt(s.base, s.size, s.firstMaxTS, h)
}

// shouldRollAt applies Kafka's roll rules to a segment of the given base,
// size and first-batch timestamp receiving batch h.
func (l *Log) shouldRollAt(base, size, firstMaxTS int64, h protocol.BatchHeader) bool {
	if size == 0 {
		return false
	}
	return size+int64(h.Size()) > l.opts.SegmentBytes ||
		(firstMaxTS >= 0 && h.MaxTimestamp-firstMaxTS > l.opts.SegmentMs) ||
		h.LastOffset()-base > 1<<31-1
}

func (l *Log) writeSegment(s *segment, data []byte) error {
	n, err := s.f.WriteAt(data, s.size)
	if err == nil && n != len(data) {
		err = io.ErrShortWrite
	}
	if err != nil {
		werr := fmt.Errorf("metadatalog: append at offset %d: write %s at position %d: %w", s.next, s.path, s.size, err)
		s.dirty = true
		// Cut the partial write so the file stays a valid prefix even if the
		// process goes on reading it.
		if n > 0 {
			if terr := s.f.Truncate(s.size); terr != nil {
				werr = fmt.Errorf("%w (and truncating the partial write failed: %v)", werr, terr)
			}
		}
		return l.fail(werr)
	}
	s.dirty = true
	return nil
}

// roll fsyncs the active segment and starts a new one at base. Fsyncing at
// roll keeps every non-last segment complete on disk, so recovery may treat
// damage there as corruption rather than a torn tail.
func (l *Log) roll(base int64) error {
	s := l.active()
	if s.dirty {
		if err := s.f.Sync(); err != nil {
			return l.fail(fmt.Errorf("metadatalog: roll at offset %d: fsync %s: %w", base, s.path, err))
		}
		s.dirty = false
	}
	if err := l.createSegment(base); err != nil {
		return l.fail(fmt.Errorf("metadatalog: roll at offset %d: %w", base, err))
	}
	l.logger.Info("rolled segment", zap.Int64("base_offset", base))
	return nil
}

// Flush implements raft.Log: fsync every segment written since the last
// flush, then the epoch checkpoint if it changed. An fsync error is final:
// retrying could report data durable that the kernel dropped.
func (l *Log) Flush() error {
	if err := l.checkWritable(); err != nil {
		return err
	}
	end := l.endOffset()
	for _, s := range l.segs {
		if !s.dirty {
			continue
		}
		if err := s.f.Sync(); err != nil {
			return l.fail(fmt.Errorf("metadatalog: flush to offset %d: fsync %s: %w", end, s.path, err))
		}
		s.dirty = false
	}
	l.flushed = end
	if l.epochsDirty {
		if err := l.writeEpochCheckpoint(); err != nil {
			return l.fail(fmt.Errorf("metadatalog: flush: %w", err))
		}
	}
	return nil
}

func (l *Log) writeEpochCheckpoint() error {
	p := filepath.Join(l.dir, LeaderEpochCheckpointFile)
	if err := vfs.WriteFileAtomic(l.fs, p, l.epochs.encode()); err != nil {
		return err
	}
	l.epochsDirty = false
	return nil
}

// Read implements raft.Log. The result is a fresh buffer holding whole
// batches of one segment, read with one pread (no re-encoding); the caller
// may keep it. At least one whole batch is returned when from < end offset.
func (l *Log) Read(from int64, maxBytes int) ([]byte, error) {
	if l.closed {
		return nil, errClosed
	}
	end := l.endOffset()
	if from < l.startOffset || from > end {
		return nil, fmt.Errorf("%w: read at %d, log holds [%d, %d)", ErrOffsetOutOfRange, from, l.startOffset, end)
	}
	if from == end {
		return nil, nil
	}
	s := l.segmentFor(from)
	var pos int64
	var first int
	if hs := l.readHint; hs.seg == s && hs.offset == from && hs.pos < s.size {
		pos = hs.pos
		if _, err := s.f.ReadAt(l.scratch[:12], pos); err != nil {
			return nil, fmt.Errorf("metadatalog: read at %d: %s: %w", from, s.path, err)
		}
		first = parseMiniSize(l.scratch[:12])
	} else {
		p, h, err := s.locate(from, l.scratch[:])
		if err != nil {
			return nil, fmt.Errorf("metadatalog: read at %d: %w", from, err)
		}
		pos, first = p, h.size
	}
	n := int64(maxBytes)
	if n < int64(first) {
		n = int64(first)
	}
	if rem := s.size - pos; n > rem {
		n = rem
	}
	buf := make([]byte, n)
	if _, err := s.f.ReadAt(buf, pos); err != nil {
		return nil, fmt.Errorf("metadatalog: read at %d: %s position %d: %w", from, s.path, pos, err)
	}
	// Keep whole batches only.
	cut, next := 0, from
	for cut+miniHeaderSize <= len(buf) {
		h := parseMini(buf[cut:])
		if h.size < protocol.BatchHeaderSize || cut+h.size > len(buf) {
			break
		}
		cut += h.size
		next = h.next
	}
	if cut == 0 {
		return nil, fmt.Errorf("metadatalog: read at %d: %s position %d: no whole batch (verified at open)", from, s.path, pos)
	}
	l.readHint.seg, l.readHint.offset, l.readHint.pos = s, next, pos+int64(cut)
	return buf[:cut], nil
}

func parseMiniSize(b []byte) int {
	return int(int32(uint32(b[8])<<24|uint32(b[9])<<16|uint32(b[10])<<8|uint32(b[11]))) + 12
}

// segmentFor returns the segment holding offset (start <= offset < end).
func (l *Log) segmentFor(offset int64) *segment {
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > offset }) - 1
	if i < 0 {
		i = 0
	}
	// Skip empty segments (a segment with base == next holds nothing).
	for i < len(l.segs)-1 && l.segs[i].next <= offset {
		i++
	}
	return l.segs[i]
}

// EndOffsetForEpoch implements raft.Log: for the largest epoch e <= epoch
// in the epoch cache, the start offset of the next epoch, or the log end
// offset when e is the latest (epochs above the latest also get the log end
// and the latest epoch, as KafkaMetadataLog answers). Below the first cached
// epoch, or with an empty cache, only a snapshot at the log start with an
// epoch <= epoch is known: its id is returned; otherwise ok is false (Kafka
// answers (epoch, log start) there, which the raft caller derives itself).
func (l *Log) EndOffsetForEpoch(epoch int32) (raft.OffsetAndEpoch, bool) {
	if epoch < 0 {
		return raft.OffsetAndEpoch{}, false
	}
	first, have := raft.OffsetAndEpoch{}, len(l.epochs.entries) > 0
	if have {
		e := l.epochs.entries[0]
		first = raft.OffsetAndEpoch{Offset: e.StartOffset, Epoch: e.Epoch}
	}
	if !have || epoch < first.Epoch {
		snap, ok := l.EarliestSnapshot()
		if ok && l.startOffset > 0 && snap.Offset == l.startOffset && snap.Epoch <= epoch && (!have || snap.Epoch < first.Epoch) {
			return snap, true
		}
		return raft.OffsetAndEpoch{}, false
	}
	if oe, ok := l.epochs.endOffsetFor(epoch, l.endOffset()); ok {
		return oe, true
	}
	// Above the latest epoch.
	return l.EndOffset(), true
}

// TruncateTo implements raft.Log. The cut happens at a batch boundary: when
// offset falls inside a batch, that whole batch goes (as in Kafka). It is
// refused below the high watermark or the log start. Removed segment files
// and the cut are fsynced before returning, so truncated data cannot come
// back after a crash.
func (l *Log) TruncateTo(offset int64) error {
	if err := l.checkWritable(); err != nil {
		return err
	}
	end := l.endOffset()
	if offset >= end {
		return nil
	}
	if offset < l.hw {
		return fmt.Errorf("metadatalog: truncate to %d: below the high watermark %d", offset, l.hw)
	}
	if offset < l.startOffset {
		return fmt.Errorf("metadatalog: truncate to %d: below the log start offset %d", offset, l.startOffset)
	}
	s := l.segmentFor(offset)
	pos, newEnd := int64(0), s.base
	if offset > s.base {
		p, h, err := s.locate(offset, l.scratch[:])
		if err != nil {
			return fmt.Errorf("metadatalog: truncate to %d: %w", offset, err)
		}
		pos, newEnd = p, h.base
	}
	if newEnd < l.hw {
		return fmt.Errorf("metadatalog: truncate to %d: the batch containing it starts at %d, below the high watermark %d", offset, newEnd, l.hw)
	}
	idx := 0
	for l.segs[idx] != s {
		idx++
	}
	if err := l.dropSegmentsAfter(idx); err != nil {
		return l.fail(fmt.Errorf("metadatalog: truncate to %d: %w", offset, err))
	}
	if err := s.f.Truncate(pos); err != nil {
		return l.fail(fmt.Errorf("metadatalog: truncate to %d: truncate %s to %d: %w", offset, s.path, pos, err))
	}
	if err := s.f.Sync(); err != nil {
		return l.fail(fmt.Errorf("metadatalog: truncate to %d: fsync %s: %w", offset, s.path, err))
	}
	s.dirty = false
	s.size, s.next = pos, newEnd
	s.truncateIndex(pos)
	if l.flushed > newEnd {
		l.flushed = newEnd
	}
	l.readHint.seg = nil
	if l.epochs.truncateFromEnd(newEnd) {
		if err := l.writeEpochCheckpoint(); err != nil {
			return l.fail(fmt.Errorf("metadatalog: truncate to %d: %w", offset, err))
		}
	}
	l.logger.Info("truncated log", zap.Int64("offset", offset), zap.Int64("log_end_offset", newEnd))
	return nil
}

// dropSegmentsAfter deletes segments after index i, newest first (a crash
// midway leaves a contiguous log), then fsyncs the dir.
func (l *Log) dropSegmentsAfter(i int) error {
	if i >= len(l.segs)-1 {
		return nil
	}
	for j := len(l.segs) - 1; j > i; j-- {
		s := l.segs[j]
		s.f.Close()
		if err := l.fs.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", s.path, err)
		}
		l.segs = l.segs[:j]
	}
	return vfs.SyncDir(l.fs, l.dir)
}

// TruncateToSnapshot implements raft.Log: the whole log is replaced by an
// empty one starting at id.Offset, which must be a frozen snapshot at or
// above the high watermark; older snapshots are deleted.
func (l *Log) TruncateToSnapshot(id raft.OffsetAndEpoch) error {
	if err := l.checkWritable(); err != nil {
		return err
	}
	if !l.hasSnapshot(id) {
		return fmt.Errorf("metadatalog: truncate to snapshot %s: %w", snapshotName(id), raft.ErrSnapshotNotFound)
	}
	if id.Offset < l.hw {
		return fmt.Errorf("metadatalog: truncate to snapshot %s: offset %d is below the high watermark %d", snapshotName(id), id.Offset, l.hw)
	}
	if err := l.truncateFullyAndStartAt(id); err != nil {
		return l.fail(fmt.Errorf("metadatalog: truncate to snapshot %s: %w", snapshotName(id), err))
	}
	return nil
}

func (l *Log) truncateFullyAndStartAt(id raft.OffsetAndEpoch) error {
	if err := l.dropSegmentsAfter(-1); err != nil {
		return err
	}
	l.segs = nil
	if err := l.createSegment(id.Offset); err != nil {
		return err
	}
	l.startOffset, l.flushed = id.Offset, id.Offset
	l.readHint.seg = nil
	l.epochs.entries = nil
	if err := l.writeEpochCheckpoint(); err != nil {
		return err
	}
	return l.forgetSnapshotsBefore(id)
}

// Close implements raft.Log (no flush).
func (l *Log) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	var first error
	for _, s := range l.segs {
		if err := s.f.Close(); err != nil && first == nil {
			first = fmt.Errorf("metadatalog: close %s: %w", s.path, err)
		}
	}
	return first
}

// Batches calls fn with every batch from offset from (a batch containing it)
// to the end, in order, as raw bytes (valid during the call). For tools and
// tests.
func (l *Log) Batches(from int64, fn func(batch []byte) error) error {
	for from < l.endOffset() {
		data, err := l.Read(from, 1<<20)
		if err != nil {
			return err
		}
		for len(data) > 0 {
			h := parseMini(data)
			if err := fn(data[:h.size]); err != nil {
				return err
			}
			from = h.next
			data = data[h.size:]
		}
	}
	return nil
}

// nopFile stands in for a segment file that does not exist in a read-only
// open of an empty dir.
type nopFile struct{}

func (nopFile) ReadAt([]byte, int64) (int, error)  { return 0, io.EOF }
func (nopFile) Write([]byte) (int, error)          { return 0, ErrReadOnly }
func (nopFile) WriteAt([]byte, int64) (int, error) { return 0, ErrReadOnly }
func (nopFile) Close() error                       { return nil }
func (nopFile) Sync() error                        { return nil }
func (nopFile) Truncate(int64) error               { return ErrReadOnly }
func (nopFile) Stat() (os.FileInfo, error)         { return nil, ErrReadOnly }
func (nopFile) Chmod(os.FileMode) error            { return ErrReadOnly }
