package raft

import "errors"

// OffsetAndEpoch names a position in the log: an exclusive end offset and the
// epoch of the record just before it. Snapshot ids use the same shape.
type OffsetAndEpoch struct {
	Offset int64
	Epoch  int32
}

var (
	// ErrSnapshotNotFound is returned by Log.OpenSnapshot for an unknown id.
	ErrSnapshotNotFound = errors.New("raft: snapshot not found")
	// ErrInvalidBatch is wrapped by Log.Append when it refuses its input (a
	// batch protocol.ValidateBatch refuses, or one that does not continue
	// the log): nothing was written and the log is still usable. The driver
	// tells such refusals, which a peer's data can cause, from local
	// failures, which stop the node.
	ErrInvalidBatch = errors.New("raft: invalid record batch")
)

// Log is the replicated log as the core sees it. metadatalog.Log implements it
// on disk; rafttest.MemLog in memory. It is used from the driver goroutine only.
//
// After any error returned by a method that writes (Append, TruncateTo, Flush,
// snapshot writers), the node must stop taking part in the quorum: the on-disk
// state is unknown, so the caller never retries.
type Log interface {
	// StartOffset is the first offset held in the log (after snapshots and
	// retention). Invariant: StartOffset() <= EndOffset().Offset.
	StartOffset() int64
	// EndOffset is the log end offset (last offset + 1) and the epoch of the
	// last batch (the latest snapshot's epoch when the log is empty after it,
	// else 0).
	EndOffset() OffsetAndEpoch
	// Append appends one or more whole record batches v2, given as raw bytes.
	// The first batch's base offset must equal EndOffset().Offset, offsets must
	// be contiguous and epochs non-decreasing, and every batch must pass
	// protocol.ValidateBatch; anything else is an error wrapping
	// ErrInvalidBatch and nothing is appended. Data is not durable until Flush.
	// Append keeps no reference to batches (the caller may reuse the buffer).
	// Returns the last offset appended.
	Append(batches []byte) (lastOffset int64, err error)
	// Read returns whole batches starting with the one that contains offset
	// from, up to maxBytes, but always at least one whole batch when from <
	// EndOffset. The bytes are the log's own: they are never changed
	// afterwards (so a caller may keep them) and must not be modified. Empty
	// when from == EndOffset. An error when from is outside [StartOffset,
	// EndOffset].
	Read(from int64, maxBytes int) ([]byte, error)
	// EndOffsetForEpoch returns the end offset of the largest epoch <= epoch
	// held in the log's epoch cache, as Kafka's leader-epoch cache answers
	// (used by the leader to compute a Fetch DivergingEpoch). ok is false when
	// no epoch <= epoch is known.
	EndOffsetForEpoch(epoch int32) (oe OffsetAndEpoch, ok bool)
	// TruncateTo removes every offset >= offset. It refuses (error) to go below
	// the high watermark last given to SetHighWatermark.
	TruncateTo(offset int64) error
	// SetHighWatermark records the committed offset; the log never truncates
	// below it and may delete segments only below it (and below a snapshot).
	SetHighWatermark(offset int64)
	// Flush makes everything appended so far durable (fsync), running the
	// pending FlushJob first.
	Flush() error
	// BeginFlush prepares a flush of everything appended so far and
	// returns it unrun, so that its fsync can run off the driver's
	// goroutine (Config.Flusher). At most one job is pending: BeginFlush,
	// Flush, TruncateTo, TruncateToSnapshot and retention run the pending
	// one first (or wait for it), so no file it syncs is cut or removed
	// under it. Close abandons a job that has not started (Close does not
	// flush) and waits for one that has.
	BeginFlush() (FlushJob, error)
	// FlushedOffset is the first offset not yet durable.
	// Invariant: StartOffset() <= FlushedOffset() <= EndOffset().Offset.
	FlushedOffset() int64

	// LatestSnapshot and EarliestSnapshot return the ids of frozen snapshots.
	LatestSnapshot() (OffsetAndEpoch, bool)
	EarliestSnapshot() (OffsetAndEpoch, bool)
	// OpenSnapshot opens a frozen snapshot for reading (raw file bytes).
	OpenSnapshot(id OffsetAndEpoch) (SnapshotReader, error)
	// CreateSnapshot starts writing a snapshot with the given id; the caller
	// writes raw snapshot file bytes (record batches with SnapshotHeader and
	// SnapshotFooter control records) and freezes it.
	CreateSnapshot(id OffsetAndEpoch) (SnapshotWriter, error)
	// TruncateToSnapshot is used by a follower after downloading a snapshot
	// past its log end: the whole log is dropped and StartOffset and EndOffset
	// become id.Offset (EndOffset's epoch id.Epoch).
	TruncateToSnapshot(id OffsetAndEpoch) error
	// Close releases files. It does not flush.
	Close() error
}

// FlushJob is a flush prepared by Log.BeginFlush.
type FlushJob interface {
	// End is the log end offset the job makes durable.
	End() int64
	// Run performs the flush; afterwards FlushedOffset is at least End.
	// It may run on any goroutine, concurrently with the driver's Append
	// and Read. It runs once: later and concurrent calls wait for the
	// first and return its result. An error is final, as for Flush.
	Run() error
}

// SnapshotReader reads a frozen snapshot's bytes.
type SnapshotReader interface {
	ID() OffsetAndEpoch
	Size() int64
	ReadAt(p []byte, off int64) (int, error)
	Close() error
}

// SnapshotWriter writes a snapshot's raw bytes in order. Nothing is visible to
// LatestSnapshot until Freeze returns nil (fsync then rename from
// .checkpoint.part). Close without Freeze discards the partial file.
type SnapshotWriter interface {
	ID() OffsetAndEpoch
	Write(p []byte) (int, error)
	Size() int64
	Freeze() error
	Close() error
}

// ElectionState is what the quorum-state file holds.
// LeaderID and VotedID are -1 when absent; VotedDirectoryID is the zero uuid
// when absent.
type ElectionState struct {
	Epoch            int32
	LeaderID         int32
	VotedID          int32
	VotedDirectoryID [16]byte
	// Voters is written with data_version 0 (static voter sets, kraft.version
	// 0) as currentVoters; nil with data_version 1.
	Voters []int32
}

// QuorumStateStore persists ElectionState. Write is atomic and durable before
// it returns (temp file, fsync, rename, directory fsync).
type QuorumStateStore interface {
	// Read returns ok=false for a fresh node (no file). A corrupt file is an
	// error naming it.
	Read() (st ElectionState, ok bool, err error)
	Write(st ElectionState) error
}
