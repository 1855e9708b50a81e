package rafttest

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

// memBatch is one record batch as appended.
type memBatch struct {
	base, last int64
	epoch      int32
	data       []byte // owned copy of the whole batch
}

// MemLog is an in-memory raft.Log.
//
// Invariants: batches are contiguous from startOffset; epochs are
// non-decreasing; startOffset <= flushed <= end; nothing below hw is ever
// truncated.
type MemLog struct {
	batches     []memBatch
	startOffset int64
	startEpoch  int32 // epoch of the record just before startOffset (snapshot epoch), 0 at offset 0
	flushed     int64
	hw          int64

	snapshots map[raft.OffsetAndEpoch][]byte // frozen snapshots
	snapIDs   []raft.OffsetAndEpoch          // sorted ids of snapshots; nil when stale
	writers   map[*memSnapshotWriter]struct{}

	// Counters for tests and the simulator.
	Appends, Flushes, Truncations int

	lowestEnd    int64 // lowest end offset left by a truncation or crash since TakeLowestEnd
	hasLowestEnd bool

	// LyingFsync makes Flush report success and FlushedOffset report the
	// log end without making anything durable: Crash still drops everything
	// never truly flushed. Only for showing that a checker catches a disk
	// that lies about fsync.
	LyingFsync bool
	durable    int64 // what survives Crash when LyingFsync is set

	pending *memFlush // the job BeginFlush returned, until it runs
}

var _ raft.Log = (*MemLog)(nil)

// NewMemLog returns an empty log starting at offset 0.
func NewMemLog() *MemLog {
	return &MemLog{
		snapshots: make(map[raft.OffsetAndEpoch][]byte),
		writers:   make(map[*memSnapshotWriter]struct{}),
	}
}

func (l *MemLog) StartOffset() int64 { return l.startOffset }

func (l *MemLog) EndOffset() raft.OffsetAndEpoch {
	if n := len(l.batches); n > 0 {
		b := l.batches[n-1]
		return raft.OffsetAndEpoch{Offset: b.last + 1, Epoch: b.epoch}
	}
	return raft.OffsetAndEpoch{Offset: l.startOffset, Epoch: l.startEpoch}
}

// Append validates every batch (protocol.ValidateBatch, contiguous offsets,
// non-decreasing epochs) before appending any of them; refusals wrap
// raft.ErrInvalidBatch.
func (l *MemLog) Append(batches []byte) (int64, error) {
	end := l.EndOffset()
	next, epoch := end.Offset, end.Epoch
	var parsed []memBatch
	for rest := batches; len(rest) > 0; {
		h, err := protocol.ValidateBatch(rest, math.MaxInt32) // memory has no segment size
		switch {
		case err != nil:
			return 0, fmt.Errorf("%w: memlog: append at offset %d: %v", raft.ErrInvalidBatch, next, err)
		case h.BaseOffset != next:
			return 0, fmt.Errorf("%w: memlog: append: batch base offset %d, want %d (log end offset)", raft.ErrInvalidBatch, h.BaseOffset, next)
		case h.PartitionLeaderEpoch < epoch:
			return 0, fmt.Errorf("%w: memlog: append: batch at %d has epoch %d below the log's epoch %d", raft.ErrInvalidBatch, h.BaseOffset, h.PartitionLeaderEpoch, epoch)
		}
		size := h.Size()
		parsed = append(parsed, memBatch{base: h.BaseOffset, last: h.LastOffset(), epoch: h.PartitionLeaderEpoch, data: bytes.Clone(rest[:size])})
		next, epoch = h.NextOffset(), h.PartitionLeaderEpoch
		rest = rest[size:]
	}
	if len(parsed) == 0 {
		return 0, fmt.Errorf("%w: memlog: append: no batches", raft.ErrInvalidBatch)
	}
	l.batches = append(l.batches, parsed...)
	l.Appends++
	return next - 1, nil
}

// find returns the index of the batch holding offset, or len(batches).
func (l *MemLog) find(offset int64) int {
	return sort.Search(len(l.batches), func(i int) bool { return l.batches[i].last >= offset })
}

func (l *MemLog) Read(from int64, maxBytes int) ([]byte, error) {
	end := l.EndOffset().Offset
	if from < l.startOffset || from > end {
		return nil, fmt.Errorf("memlog: read at %d: outside [%d, %d]", from, l.startOffset, end)
	}
	var out []byte
	for i := l.find(from); i < len(l.batches); i++ {
		d := l.batches[i].data
		if len(out) > 0 && len(out)+len(d) > maxBytes {
			break
		}
		out = append(out, d...)
	}
	return out, nil
}

// epochStarts lists (epoch, start offset) for each epoch present in the log,
// as Kafka's leader-epoch cache holds them.
func (l *MemLog) epochStarts() []raft.OffsetAndEpoch {
	var out []raft.OffsetAndEpoch
	for _, b := range l.batches {
		if len(out) == 0 || out[len(out)-1].Epoch != b.epoch {
			out = append(out, raft.OffsetAndEpoch{Offset: b.base, Epoch: b.epoch})
		}
	}
	return out
}

// EndOffsetForEpoch answers as Kafka's leader-epoch cache: for the largest
// epoch e <= epoch held in the log, the start offset of the next epoch (or the
// log end offset when e is the latest). A log that is empty after a snapshot
// knows only the snapshot's epoch, ending at the snapshot's offset.
func (l *MemLog) EndOffsetForEpoch(epoch int32) (raft.OffsetAndEpoch, bool) {
	starts := l.epochStarts()
	if len(starts) == 0 {
		if l.startOffset > 0 && l.startEpoch <= epoch {
			return raft.OffsetAndEpoch{Offset: l.startOffset, Epoch: l.startEpoch}, true
		}
		return raft.OffsetAndEpoch{}, false
	}
	// First entry with an epoch above the requested one.
	i := sort.Search(len(starts), func(i int) bool { return starts[i].Epoch > epoch })
	if i == 0 {
		// Every epoch in the log is newer. A snapshot at the log start
		// still tells the epoch that ended there.
		if l.startOffset > 0 && l.startEpoch <= epoch && l.startEpoch < starts[0].Epoch {
			return raft.OffsetAndEpoch{Offset: l.startOffset, Epoch: l.startEpoch}, true
		}
		return raft.OffsetAndEpoch{}, false
	}
	if i == len(starts) {
		return l.EndOffset(), true
	}
	return raft.OffsetAndEpoch{Offset: starts[i].Offset, Epoch: starts[i-1].Epoch}, true
}

// TruncateTo removes every batch whose last offset is >= offset (a batch is
// never split, so the new end may fall below offset). It refuses when the
// new end would fall below the high watermark.
func (l *MemLog) TruncateTo(offset int64) error {
	l.settle()
	if offset < l.hw {
		return fmt.Errorf("memlog: truncate to %d: below the high watermark %d", offset, l.hw)
	}
	if offset < l.startOffset {
		return fmt.Errorf("memlog: truncate to %d: below the log start offset %d", offset, l.startOffset)
	}
	i := l.find(offset)
	if i == len(l.batches) {
		return nil
	}
	newEnd := l.batches[i].base
	if newEnd < l.hw {
		return fmt.Errorf("memlog: truncate to %d: batch %d-%d straddles the high watermark %d", offset, l.batches[i].base, l.batches[i].last, l.hw)
	}
	clear(l.batches[i:])
	l.batches = l.batches[:i]
	l.flushed = min(l.flushed, newEnd)
	l.durable = min(l.durable, newEnd)
	l.Truncations++
	l.noteEnd()
	return nil
}

// SetHighWatermark records the committed offset. It never moves backwards
// here: a lower value is recorded too, since the log only uses it as a
// truncation floor and the caller owns the semantics.
func (l *MemLog) SetHighWatermark(offset int64) { l.hw = offset }

// HighWatermark is the last value given to SetHighWatermark (0 after a crash).
func (l *MemLog) HighWatermark() int64 { return l.hw }

func (l *MemLog) Flush() error {
	l.settle()
	l.flushed = l.EndOffset().Offset
	if !l.LyingFsync {
		l.durable = l.flushed
	}
	l.Flushes++
	return nil
}

// BeginFlush implements raft.Log. MemLog is not safe for concurrent use:
// the job runs on the caller's goroutine, whenever a simulator chooses.
func (l *MemLog) BeginFlush() (raft.FlushJob, error) {
	l.settle()
	j := &memFlush{l: l, end: l.EndOffset().Offset}
	l.pending = j
	return j, nil
}

// settle runs the pending flush job, as the log does before anything that
// cuts or drops data.
func (l *MemLog) settle() {
	if l.pending != nil {
		l.pending.Run()
	}
}

type memFlush struct {
	l   *MemLog
	end int64
	ran bool // run, or abandoned by a crash
}

func (j *memFlush) End() int64 { return j.end }

func (j *memFlush) Run() error {
	if j.ran {
		return nil
	}
	j.ran = true
	l := j.l
	l.pending = nil
	l.flushed = max(l.flushed, j.end)
	if !l.LyingFsync {
		l.durable = max(l.durable, j.end)
	}
	l.Flushes++
	return nil
}

func (l *MemLog) FlushedOffset() int64 { return l.flushed }

// Crash simulates a process kill and restart: every batch at or above
// FlushedOffset is lost, partial snapshot writers are discarded and the
// in-memory high watermark is forgotten. Frozen snapshots survive (they were
// fsynced before the rename).
func (l *MemLog) Crash() {
	if l.pending != nil { // the fsync never ran
		l.pending.ran, l.pending = true, nil
	}
	if l.LyingFsync {
		l.flushed = min(l.flushed, max(l.durable, l.startOffset))
	}
	i := sort.Search(len(l.batches), func(i int) bool { return l.batches[i].base >= l.flushed })
	clear(l.batches[i:])
	l.batches = l.batches[:i]
	l.noteEnd()
	l.hw = 0
	for w := range l.writers {
		w.closed = true
	}
	clear(l.writers)
}

func (l *MemLog) noteEnd() {
	end := l.EndOffset().Offset
	if !l.hasLowestEnd || end < l.lowestEnd {
		l.lowestEnd, l.hasLowestEnd = end, true
	}
}

// TakeLowestEnd reports the lowest log end offset that a truncation, crash
// or TruncateToSnapshot left since the previous call, so a checker can
// re-verify everything above it.
func (l *MemLog) TakeLowestEnd() (int64, bool) {
	end, ok := l.lowestEnd, l.hasLowestEnd
	l.hasLowestEnd = false
	return end, ok
}

// Batches returns the log's batches as (base, last, epoch, bytes); the bytes
// are the log's own.
func (l *MemLog) Batches() []BatchInfo {
	out := make([]BatchInfo, len(l.batches))
	for i, b := range l.batches {
		out[i] = BatchInfo{BaseOffset: b.base, LastOffset: b.last, Epoch: b.epoch, Data: b.data}
	}
	return out
}

// BatchInfo describes one batch held by a MemLog.
type BatchInfo struct {
	BaseOffset, LastOffset int64
	Epoch                  int32
	Data                   []byte
}

// BatchAt returns the batch holding offset.
func (l *MemLog) BatchAt(offset int64) (BatchInfo, bool) {
	if offset < l.startOffset {
		return BatchInfo{}, false
	}
	i := l.find(offset)
	if i == len(l.batches) {
		return BatchInfo{}, false
	}
	b := l.batches[i]
	return BatchInfo{BaseOffset: b.base, LastOffset: b.last, Epoch: b.epoch, Data: b.data}, true
}

// Snapshots.

// sortedSnapshots returns the frozen snapshot ids in (offset, epoch)
// order, cached until the set changes.
func (l *MemLog) sortedSnapshots() []raft.OffsetAndEpoch {
	if l.snapIDs != nil {
		return l.snapIDs
	}
	ids := make([]raft.OffsetAndEpoch, 0, len(l.snapshots))
	for id := range l.snapshots {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b raft.OffsetAndEpoch) int {
		if a.Offset != b.Offset {
			return int(min(max(a.Offset-b.Offset, -1), 1))
		}
		return int(a.Epoch) - int(b.Epoch)
	})
	l.snapIDs = ids
	return ids
}

func (l *MemLog) LatestSnapshot() (raft.OffsetAndEpoch, bool) {
	ids := l.sortedSnapshots()
	if len(ids) == 0 {
		return raft.OffsetAndEpoch{}, false
	}
	return ids[len(ids)-1], true
}

func (l *MemLog) EarliestSnapshot() (raft.OffsetAndEpoch, bool) {
	ids := l.sortedSnapshots()
	if len(ids) == 0 {
		return raft.OffsetAndEpoch{}, false
	}
	return ids[0], true
}

func (l *MemLog) OpenSnapshot(id raft.OffsetAndEpoch) (raft.SnapshotReader, error) {
	data, ok := l.snapshots[id]
	if !ok {
		return nil, fmt.Errorf("memlog: open snapshot %d-%d: %w", id.Offset, id.Epoch, raft.ErrSnapshotNotFound)
	}
	return &memSnapshotReader{id: id, r: bytes.NewReader(data), size: int64(len(data))}, nil
}

func (l *MemLog) CreateSnapshot(id raft.OffsetAndEpoch) (raft.SnapshotWriter, error) {
	if id.Offset < 0 || id.Epoch < 0 {
		return nil, fmt.Errorf("memlog: create snapshot %d-%d: negative id", id.Offset, id.Epoch)
	}
	if _, ok := l.snapshots[id]; ok {
		return nil, fmt.Errorf("memlog: create snapshot %d-%d: already exists", id.Offset, id.Epoch)
	}
	w := &memSnapshotWriter{log: l, id: id}
	l.writers[w] = struct{}{}
	return w, nil
}

// TruncateToSnapshot drops the whole log and restarts it at the snapshot's
// offset, deleting older snapshots. The snapshot must be frozen and not
// below the high watermark.
func (l *MemLog) TruncateToSnapshot(id raft.OffsetAndEpoch) error {
	l.settle()
	if _, ok := l.snapshots[id]; !ok {
		return fmt.Errorf("memlog: truncate to snapshot %d-%d: %w", id.Offset, id.Epoch, raft.ErrSnapshotNotFound)
	}
	if id.Offset < l.hw {
		return fmt.Errorf("memlog: truncate to snapshot %d-%d: below the high watermark %d", id.Offset, id.Epoch, l.hw)
	}
	clear(l.batches)
	l.batches = l.batches[:0]
	l.startOffset, l.startEpoch = id.Offset, id.Epoch
	l.flushed, l.durable = id.Offset, id.Offset
	// Snapshots below the new log start are useless, as Kafka removes them.
	for other := range l.snapshots {
		if other.Offset < id.Offset {
			delete(l.snapshots, other)
			l.snapIDs = nil
		}
	}
	l.Truncations++
	l.noteEnd()
	return nil
}

// DeleteBeforeSnapshot advances the log start to the latest snapshot when it
// is at or below the high watermark, as segment retention would, and drops
// older snapshots. It reports whether anything was deleted.
func (l *MemLog) DeleteBeforeSnapshot() bool {
	l.settle()
	id, ok := l.LatestSnapshot()
	if !ok || id.Offset <= l.startOffset || id.Offset > l.hw || id.Offset > l.flushed {
		return false
	}
	i := l.find(id.Offset)
	// Only whole batches below the snapshot can go; a batch straddling the
	// snapshot offset stays, so the start moves to its base at most.
	if i < len(l.batches) && l.batches[i].base < id.Offset {
		return false
	}
	clear(l.batches[:i])
	l.batches = slices.Delete(l.batches, 0, i)
	l.startOffset, l.startEpoch = id.Offset, id.Epoch
	for other := range l.snapshots {
		if other != id {
			delete(l.snapshots, other)
			l.snapIDs = nil
		}
	}
	return true
}

func (l *MemLog) Close() error { return nil }

type memSnapshotReader struct {
	id   raft.OffsetAndEpoch
	r    *bytes.Reader
	size int64
}

func (r *memSnapshotReader) ID() raft.OffsetAndEpoch { return r.id }
func (r *memSnapshotReader) Size() int64             { return r.size }
func (r *memSnapshotReader) ReadAt(p []byte, off int64) (int, error) {
	return r.r.ReadAt(p, off)
}
func (r *memSnapshotReader) Close() error { return nil }

type memSnapshotWriter struct {
	log    *MemLog
	id     raft.OffsetAndEpoch
	buf    []byte
	closed bool
}

func (w *memSnapshotWriter) ID() raft.OffsetAndEpoch { return w.id }
func (w *memSnapshotWriter) Size() int64             { return int64(len(w.buf)) }

func (w *memSnapshotWriter) Write(p []byte) (int, error) {
	if w.closed {
		return 0, fmt.Errorf("memlog: write snapshot %d-%d: %w", w.id.Offset, w.id.Epoch, io.ErrClosedPipe)
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

func (w *memSnapshotWriter) Freeze() error {
	if w.closed {
		return fmt.Errorf("memlog: freeze snapshot %d-%d: writer closed", w.id.Offset, w.id.Epoch)
	}
	w.closed = true
	delete(w.log.writers, w)
	w.log.snapshots[w.id] = w.buf
	w.log.snapIDs = nil
	return nil
}

func (w *memSnapshotWriter) Close() error {
	if !w.closed {
		w.closed = true
		delete(w.log.writers, w)
	}
	return nil
}
