package node

import (
	"errors"
	"io"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

// Failing is an Application that can fail for good (a Kafka controller
// halts on a record it cannot replay): the loop checks Err after every
// round and stops the node with it.
type Failing interface {
	Err() error
}

// Snapshotter is an Application that snapshots its state. After each round
// the loop asks it for a snapshot to write (NextSnapshot, while none is
// being written), writes it on a goroutine of its own, so that a large
// state never stalls raft, and reports the end on the loop
// (SnapshotWritten).
type Snapshotter interface {
	NextSnapshot() (SnapshotJob, bool)
	SnapshotWritten(SnapshotResult)
}

// SnapshotJob is one snapshot to write: its id (the offset after the last
// record it holds, and that record's epoch), the append time of that record
// for the header, and its data records.
type SnapshotJob struct {
	ID              raft.OffsetAndEpoch
	LastContainedMs int64
	// Batches yields the data records, batch by batch. It runs off the
	// loop, so it may read only immutable state; an error from yield (the
	// write failed or the node stops) must be returned.
	Batches func(yield func(records [][]byte) error) error
}

// SnapshotResult is how a SnapshotJob ended: Bytes is the frozen size; with
// Exists the snapshot was already there and nothing was written.
type SnapshotResult struct {
	ID     raft.OffsetAndEpoch
	Bytes  int64
	Exists bool
	Err    error
	// At is when the snapshot was frozen (or given up).
	At time.Time
}

// errSnapshotStopped ends a snapshot write when the node stops.
var errSnapshotStopped = errors.New("node: snapshot abandoned: the node is stopping")

// snapshotting is the node's one snapshot being written off the loop.
type snapshotting struct {
	job  SnapshotJob
	w    raft.SnapshotWriter
	done chan error // buffered: the writer never blocks on it
	stop atomic.Bool
}

// ended is the channel the loop waits on for the writer's end; nil (never
// ready) when nothing is being written.
func (n *Node) snapshotEnded() <-chan error {
	if n.snap == nil {
		return nil
	}
	return n.snap.done
}

// maybeSnapshot starts the snapshot the application asks for, if any and
// none is being written. The header (with the voter set at the snapshot's
// offset) is built here, on the loop, from the driver; the records and the
// footer are written by a goroutine, which touches only the new snapshot's
// file: the log itself is changed on the loop only (Freeze, in
// snapshotDone).
func (n *Node) maybeSnapshot(now time.Time) {
	s, ok := n.o.App.(Snapshotter)
	if !ok || n.snap != nil {
		return
	}
	job, ok := s.NextSnapshot()
	if !ok {
		return
	}
	if latest, ok := n.log.LatestSnapshot(); ok && latest.Offset >= job.ID.Offset {
		s.SnapshotWritten(SnapshotResult{ID: job.ID, Exists: true, At: now})
		return
	}
	w, err := n.log.CreateSnapshot(job.ID)
	if err != nil {
		s.SnapshotWritten(SnapshotResult{ID: job.ID, Exists: errors.Is(err, metadatalog.ErrSnapshotExists), Err: err, At: now})
		return
	}
	head, next := n.driver.SnapshotHeaderBatch(job.ID, job.LastContainedMs, now.UnixMilli())
	sn := &snapshotting{job: job, w: w, done: make(chan error, 1)}
	n.snap = sn
	go func() { sn.done <- writeSnapshotBody(sn.w, head, next, job, sn.stop.Load) }()
}

// syncer is a snapshot writer that can flush its bytes apart from Freeze
// (metadatalog's can).
type syncer interface{ Sync() error }

// writeSnapshotBody writes the snapshot and, when its writer can, flushes
// it to disk: the slow part of Freeze's fsync happens here, off the loop,
// which then only renames the file.
func writeSnapshotBody(w raft.SnapshotWriter, head []byte, next int64, job SnapshotJob, stop func() bool) error {
	if err := writeSnapshot(w, head, next, job, stop); err != nil {
		return err
	}
	if s, ok := w.(syncer); ok {
		return s.Sync()
	}
	return nil
}

// WriteSnapshot writes a snapshot's bytes to w: head, the header batch
// (raft.Driver.SnapshotHeaderBatch, whose record count is next), the
// job's records as Kafka's snapshot writer batches them (one batch per
// group the job yields, at the snapshot's epoch, offsets counting on from
// the header's records), and the footer. The node runs it off its loop; a
// simulation may run it inline.
func WriteSnapshot(w io.Writer, head []byte, next int64, job SnapshotJob) error {
	return writeSnapshot(w, head, next, job, func() bool { return false })
}

func writeSnapshot(w io.Writer, head []byte, next int64, job SnapshotJob, stop func() bool) error {
	if _, err := w.Write(head); err != nil {
		return err
	}
	epoch := job.ID.Epoch
	var buf []byte
	var recs []protocol.Record
	err := job.Batches(func(values [][]byte) error {
		if stop() {
			return errSnapshotStopped
		}
		if len(values) == 0 {
			return nil
		}
		ts := time.Now().UnixMilli()
		recs = recs[:0]
		for i, v := range values {
			recs = append(recs, protocol.Record{OffsetDelta: int32(i), Value: v})
		}
		buf = protocol.AppendBatch(buf[:0], protocol.Batch{BaseOffset: next, PartitionLeaderEpoch: epoch,
			BaseTimestamp: ts, MaxTimestamp: ts, Records: recs})
		next += int64(len(values))
		_, err := w.Write(buf)
		return err
	})
	if err != nil {
		return err
	}
	buf = protocol.AppendControlBatch(buf[:0], next, epoch, time.Now().UnixMilli(), protocol.ControlSnapshotFooter,
		protocol.SnapshotFooterRecord{Version: 0}.AppendTo(nil))
	_, err = w.Write(buf)
	return err
}

// snapshotDone runs on the loop when the writer ended: it freezes the
// snapshot (fsync, rename; the log learns of it) or discards it, and
// tells the application. A failed snapshot is not fatal (Kafka's snapshot
// generator reports it to a non-fatal fault handler); a failed freeze that
// failed the log is, through the log's next operation.
func (n *Node) snapshotDone(err error) {
	sn := n.snap
	n.snap = nil
	if err == nil {
		err = sn.w.Freeze()
	}
	size := sn.w.Size()
	if cerr := sn.w.Close(); cerr != nil && err == nil {
		err = cerr
	}
	res := SnapshotResult{ID: sn.job.ID, Bytes: size, Err: err, At: time.Now()}
	if err != nil {
		res.Bytes = 0
		n.lg.Error("snapshot generation failed", zap.String("snapshot", metadatalog.SnapshotFileName(sn.job.ID)), zap.Error(err))
	} else {
		n.lg.Info("wrote snapshot", zap.String("snapshot", metadatalog.SnapshotFileName(sn.job.ID)), zap.Int64("bytes", size))
	}
	if s, ok := n.o.App.(Snapshotter); ok {
		s.SnapshotWritten(res)
	}
}

// stopSnapshot abandons a snapshot being written when the loop exits, and
// waits for its goroutine, so nothing writes into the log's directory once
// Run closed the log.
func (n *Node) stopSnapshot() {
	sn := n.snap
	if sn == nil {
		return
	}
	n.snap = nil
	sn.stop.Store(true)
	<-sn.done
	if err := sn.w.Close(); err != nil {
		n.lg.Warn("discard unfinished snapshot", zap.Error(err))
	}
}
