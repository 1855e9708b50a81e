package rafttest

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

// handleSnapshot writes a snapshot of a node at its high watermark (which
// must end a committed batch) and lets the log drop what the snapshot
// covers, as log cleaning would. Followers behind the new log start then
// fetch the snapshot.
//
// Example:
//
//	snapshot 1
//	----
//	> 1 snapshots at 3@1; log start 0 -> 3
func (e *InteractionEnv) handleSnapshot(t *testing.T, d *datadriven.TestData) {
	n := e.upNode(t, d, e.firstID(t, d))
	hw := n.drv.Status().HighWatermark
	id, ok := snapshotID(n.log, hw)
	if !ok {
		d.Fatalf(t, "node %d has no committed batch ending at its high watermark %d", n.id, hw)
	}
	w, err := n.log.CreateSnapshot(id)
	if err != nil {
		d.Fatalf(t, "create snapshot: %v", err)
	}
	_, _ = fmt.Fprintf(w, "state of node %d at %s", n.id, offEpoch(id.Offset, id.Epoch))
	if err := w.Freeze(); err != nil {
		d.Fatalf(t, "freeze snapshot: %v", err)
	}
	before := n.log.StartOffset()
	n.log.DeleteBeforeSnapshot()
	e.printf("> %d snapshots at %s; log start %d -> %d", n.id, offEpoch(id.Offset, id.Epoch), before, n.log.StartOffset())
}

// snapshotID names a snapshot ending at offset end: the epoch is that of
// the batch holding the last record it covers, which must end there.
func snapshotID(log *MemLog, end int64) (raft.OffsetAndEpoch, bool) {
	data, err := log.Read(log.StartOffset(), 1<<30)
	if err != nil {
		return raft.OffsetAndEpoch{}, false
	}
	for len(data) > 0 {
		h, err := protocol.ParseBatchHeader(data)
		if err != nil {
			return raft.OffsetAndEpoch{}, false
		}
		if h.NextOffset() == end {
			return raft.OffsetAndEpoch{Offset: end, Epoch: h.PartitionLeaderEpoch}, true
		}
		data = data[h.Size():]
	}
	return raft.OffsetAndEpoch{}, false
}
