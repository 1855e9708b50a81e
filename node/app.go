package node

import (
	"time"

	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

// Application is code that runs on the node's loop goroutine beside the
// raft driver: registered as the driver's listener (committed batches,
// snapshots, leader changes) and ticked once per loop round. It needs no
// locks: the loop is the only goroutine that calls it.
type Application interface {
	raft.Listener
	// Tick runs after each poll of the driver (not during a graceful
	// shutdown) with the status of that round; it may append through w and
	// returns when it next wants to run.
	Tick(now time.Time, st raft.Status, w Writer) (next time.Time)
}

// Writer is what an Application may write, on the loop goroutine only.
type Writer interface {
	// Append appends records as one batch while this node leads epoch; see
	// raft.Driver.Append for its errors.
	Append(now time.Time, epoch int32, records [][]byte) (lastOffset int64, err error)
	// WriteEmptySnapshot writes a snapshot at id that holds no data records
	// (for an application without state); a no-op when one at or past id
	// exists.
	WriteEmptySnapshot(id raft.OffsetAndEpoch, lastContainedMs int64) error
	// UpgradeKRaftVersion upgrades kraft.version while this node leads
	// epoch; see raft.Driver.UpgradeKRaftVersion.
	UpgradeKRaftVersion(now time.Time, epoch int32, level int16, validateOnly bool) (last int64, err error)
}

// writer implements Writer over the node's driver and log.
type writer struct{ n *Node }

func (w writer) Append(now time.Time, epoch int32, records [][]byte) (int64, error) {
	w.n.doing.op = "append"
	defer func() { w.n.doing.op = "tick" }()
	return w.n.driver.Append(now, epoch, records)
}

func (w writer) UpgradeKRaftVersion(now time.Time, epoch int32, level int16, validateOnly bool) (int64, error) {
	w.n.doing.op = "kraft.version upgrade"
	defer func() { w.n.doing.op = "tick" }()
	return w.n.driver.UpgradeKRaftVersion(now, epoch, level, validateOnly)
}

func (w writer) WriteEmptySnapshot(id raft.OffsetAndEpoch, lastContainedMs int64) error {
	return writeEmptySnapshot(w.n.log, w.n.driver, id, lastContainedMs)
}

// writeEmptySnapshot writes the control batches Kafka's snapshot writer puts
// around the state (SnapshotHeader, with the voter set at kraft.version 1,
// and SnapshotFooter), and nothing between them.
func writeEmptySnapshot(l *metadatalog.Log, d *raft.Driver, id raft.OffsetAndEpoch, lastContainedMs int64) (err error) {
	if latest, ok := l.LatestSnapshot(); ok && latest.Offset >= id.Offset {
		return nil
	}
	w, err := l.CreateSnapshot(id)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := w.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	now := time.Now().UnixMilli()
	b, next := d.SnapshotHeaderBatch(id, lastContainedMs, now)
	b = protocol.AppendControlBatch(b, next, id.Epoch, now, protocol.ControlSnapshotFooter,
		protocol.SnapshotFooterRecord{Version: 0}.AppendTo(nil))
	if _, err := w.Write(b); err != nil {
		return err
	}
	return w.Freeze()
}
