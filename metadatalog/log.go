package metadatalog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/vfs"
)

// Kafka's defaults of the metadata log's settings (KRaftConfigs,
// MetadataLogConfig): Options' for zero fields, and config's for the keys.
const (
	DefaultSegmentBytes    = 1 << 30           // metadata.log.segment.bytes
	DefaultSegmentMinBytes = 8 << 20           // metadata.log.segment.min.bytes (internal)
	DefaultSegmentMs       = 7 * 24 * 3600_000 // metadata.log.segment.ms
	DefaultRetentionBytes  = 100 << 20         // metadata.max.retention.bytes
	DefaultRetentionMs     = 7 * 24 * 3600_000 // metadata.max.retention.ms
)

const (
	PartitionMetadataFile  = "partition.metadata"
	defaultReadWindowBytes = 1 << 20
)

var (
	// ErrOffsetOutOfRange is wrapped by Read for an offset outside [start, end].
	ErrOffsetOutOfRange = errors.New("metadatalog: offset out of range")
	// ErrInvalidAppend is wrapped when Append refuses batches (offsets, epochs,
	// CRC, size); nothing was written and the log is still usable. It wraps
	// raft.ErrInvalidBatch, which the raft driver tests for.
	ErrInvalidAppend = fmt.Errorf("metadatalog: invalid append: %w", raft.ErrInvalidBatch)
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
	// Dir is the partition dir, e.g. topics.PartitionDir(metadataLogDir,
	// topics.ClusterMetadata). Created if missing.
	Dir    string
	FS     vfs.FS      // nil = vfs.OS
	Logger *zap.Logger // nil = no logging
	// TopicID is written to partition.metadata when that file is missing
	// (zero = do not write it).
	TopicID [16]byte
	// SegmentBytes: metadata.log.segment.bytes; must be >= SegmentMinBytes.
	SegmentBytes int64
	// SegmentMinBytes: metadata.log.segment.min.bytes; tests lower it.
	SegmentMinBytes int64
	// SegmentMs: metadata.log.segment.ms, compared with batch timestamps as
	// Kafka does (ms).
	SegmentMs int64
	// RetentionBytes, RetentionMs: metadata.max.retention.bytes / .ms; < 0
	// disables. Applied by MaybeClean. Zero, like every zero here, takes
	// the default, although Kafka reads a retention of 0 as keep nothing.
	RetentionBytes int64
	RetentionMs    int64
	// MaxBatchBytes bounds one appended batch (raft.DefaultMaxBatchBytes).
	MaxBatchBytes int
	// ReadOnly opens without changing any file: a torn tail is ignored in
	// memory, nothing is deleted or written (for tools and interop tests).
	ReadOnly bool
	// BackgroundDelete unlinks deleted segments on a goroutine of the log's
	// own (discard.go) rather than in the caller; Close waits for it.
	BackgroundDelete bool
	// SlowFlush: a flush that takes longer is logged as a warning naming its
	// duration (DefaultSlowFlush; < 0 never). A commit waits for it, and a
	// stalled disk or a starved kernel worker is otherwise invisible.
	SlowFlush time.Duration
	// Now is the clock SlowFlush is measured with (nil: time.Now).
	Now func() time.Time
}

// DefaultSlowFlush is Options.SlowFlush's default, as etcd's slow fdatasync warning.
const DefaultSlowFlush = time.Second

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
	// Invariant: startOffset <= flushed <= end offset. Atomic: a flush
	// job raises it from its own goroutine.
	flushed atomic.Int64
	// pending is the job BeginFlush returned, until settled (flush.go).
	pending *flushJob
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
	// discarder is set by Options.BackgroundDelete (discard.go).
	discarder *discarder

	scratch [miniHeaderSize]byte
	// tail is a ring of the newest appended batches' positions, so reads
	// near the end of the log (each follower fetching, the listener) skip
	// the index walk and its header reads: one pread per Read (read.go).
	tail     [tailBatches]batchPos
	tailNext int // the slot the next append fills
	// mem holds copies of the newest batches, which Read serves (memtail.go).
	mem memTail
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
	if o.SlowFlush == 0 {
		o.SlowFlush = DefaultSlowFlush
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SegmentMinBytes == 0 {
		o.SegmentMinBytes = DefaultSegmentMinBytes
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
		o.MaxBatchBytes = raft.DefaultMaxBatchBytes
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
func (l *Log) FlushedOffset() int64 { return l.flushed.Load() }

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

// Close implements raft.Log (no flush).
func (l *Log) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	l.abandonFlush()
	if l.discarder != nil {
		l.discarder.close()
	}
	var first error
	for _, s := range l.segs {
		if err := s.f.Close(); err != nil && first == nil {
			first = fmt.Errorf("metadatalog: close %s: %w", s.path, err)
		}
	}
	return first
}
