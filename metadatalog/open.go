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

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/uuid"
	"github.com/kraftd/kraftd/vfs"
)

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
	if opts.BackgroundDelete && !opts.ReadOnly {
		l.discarder = newDiscarder(l.fs, l.logger)
	}
	return l, nil
}

// open recovers the log in order: classify the dir's files (removing
// leftovers), re-validate every segment, place the log start, reconcile the
// snapshots with it, and make the recovered state durable.
func (l *Log) open() error {
	if !l.opts.ReadOnly {
		if err := vfs.MkdirAll(l.fs, l.dir, 0o755); err != nil {
			return err
		}
	}
	bases, err := l.scanDir()
	if err != nil {
		return err
	}
	if err := l.openSegments(bases); err != nil {
		return err
	}
	if len(l.segs) == 0 {
		if err := l.startEmpty(); err != nil {
			return err
		}
	}
	l.startOffset = l.segs[0].base
	if err := l.pruneSnapshots(); err != nil {
		return err
	}
	if err := l.recoverStartOffset(); err != nil {
		return err
	}
	l.flushed.Store(l.endOffset())
	if err := l.restartAtNewerSnapshot(); err != nil {
		return err
	}
	if l.opts.ReadOnly {
		return nil
	}
	return l.persistRecovered()
}

// scanDir lists the dir, records its snapshots in l.snapshots (sorted),
// removes leftover files unless read-only, and returns the segment base
// offsets in ascending order.
func (l *Log) scanDir() ([]int64, error) {
	names, err := l.fs.List(l.dir)
	if err != nil {
		return nil, err
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
		if isLeftover(n) {
			junk = append(junk, n)
		}
	}
	if !l.opts.ReadOnly {
		for _, n := range junk {
			if err := l.fs.Remove(filepath.Join(l.dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
			l.logger.Info("removed leftover file", zap.String("file", n))
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	sortSnapshots(l.snapshots)
	return bases, nil
}

// isLeftover reports whether name is a file an open removes: the temporary
// file of an interrupted write, or a Kafka index.
func isLeftover(n string) bool {
	switch {
	case strings.HasSuffix(n, partSuffix), strings.HasSuffix(n, ".deleted"),
		strings.HasSuffix(n, ".cleaned"), strings.HasSuffix(n, ".swap"),
		n == LeaderEpochCheckpointFile+".tmp", n == PartitionMetadataFile+".tmp", n == QuorumStateFile+".tmp":
		return true
	case isBaseFile(n, ".index"), isBaseFile(n, ".timeindex"), isBaseFile(n, ".txnindex"), isBaseFile(n, ".snapshot"):
		// kraftd keeps its offset index in memory and never updates
		// these, so a stale Kafka index must not outlive a kraftd
		// write; Kafka rebuilds missing indexes on open.
		return true
	}
	return false
}

// openSegments opens and recovers the segments at bases in order, checking
// that each starts where the previous one ends. Each opened segment joins
// l.segs before it is checked, so Open closes it on error.
func (l *Log) openSegments(bases []int64) error {
	flag := os.O_RDWR
	if l.opts.ReadOnly {
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
	return nil
}

// startEmpty gives a dir with no segment its first one: at 0, or at the
// newest snapshot when only snapshots are left (crash in
// TruncateToSnapshot). A read-only open gets an in-memory stand-in instead.
func (l *Log) startEmpty() error {
	start := int64(0)
	if n := len(l.snapshots); n > 0 {
		start = l.snapshots[n-1].Offset
	}
	if l.opts.ReadOnly {
		l.segs = append(l.segs, &segment{base: start, next: start, lastIndexed: -indexInterval, firstMaxTS: -1, f: nopFile{}})
		return nil
	}
	return l.createSegment(start)
}

// pruneSnapshots drops the snapshots below the log start (deleting their
// files unless read-only); a log start > 0 needs one at or above it.
func (l *Log) pruneSnapshots() error {
	var keep []raft.OffsetAndEpoch
	for _, id := range l.snapshots {
		if id.Offset >= l.startOffset {
			keep = append(keep, id)
			continue
		}
		if l.opts.ReadOnly {
			continue
		}
		if err := l.fs.Remove(filepath.Join(l.dir, snapshotName(id))); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		l.logger.Info("deleted snapshot below the log start offset", zap.String("snapshot", snapshotName(id)), zap.Int64("log_start_offset", l.startOffset))
	}
	l.snapshots = keep
	if l.startOffset > 0 && len(l.snapshots) == 0 {
		return fmt.Errorf("%w: log start offset is %d but there is no snapshot at or above it", ErrCorrupt, l.startOffset)
	}
	return nil
}

// restartAtNewerSnapshot finishes an interrupted snapshot install: a
// snapshot past the log end restarts the log at it.
func (l *Log) restartAtNewerSnapshot() error {
	latest, ok := l.LatestSnapshot()
	if !ok || l.opts.ReadOnly {
		return nil
	}
	le := l.lastEpoch()
	if latest.Epoch < le || (latest.Epoch == le && latest.Offset <= l.endOffset()) {
		return nil
	}
	l.logger.Warn("latest snapshot is past the log end; restarting the log at it",
		zap.Int64("snapshot_offset", latest.Offset), zap.Int32("snapshot_epoch", latest.Epoch), zap.Int64("log_end_offset", l.endOffset()))
	return l.truncateFullyAndStartAt(latest)
}

// persistRecovered makes the recovered state durable: the last segment,
// the epoch checkpoint and, when a topic id is configured and the file is
// missing, partition.metadata.
func (l *Log) persistRecovered() error {
	// Recovered bytes may still be only in the page cache (a process crash
	// keeps it): make them durable before reporting them flushed.
	last := l.segs[len(l.segs)-1]
	if err := last.f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", last.path, err)
	}
	if err := l.writeEpochCheckpoint(); err != nil {
		return err
	}
	if l.opts.TopicID == ([16]byte{}) {
		return nil
	}
	p := filepath.Join(l.dir, PartitionMetadataFile)
	if _, err := l.fs.Stat(p); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	data := "version: 0\ntopic_id: " + uuid.UUID(l.opts.TopicID).String()
	return vfs.WriteFileAtomic(l.fs, p, []byte(data))
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
