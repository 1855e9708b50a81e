package controller

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/raft"
)

// SnapshotBatchRecords is how many records Kafka's snapshot emitter puts in
// one batch (SnapshotEmitter's batch size; its 8 MiB batch limit is never
// reached by 1024 metadata records).
const SnapshotBatchRecords = 1024

// generator decides when to snapshot the committed image, as Kafka's
// SnapshotGenerator does (docs/design/controller.md, "Snapshot
// generation"): after maxBytes of committed batches, or maxInterval since
// the last snapshot, counted at each published image (a batch end outside a
// metadata transaction). Kafka's generator runs its emits on an event
// queue of its own: while one waits there, no other is scheduled; once it
// runs (the counters reset as it starts) the next can be scheduled behind
// it. Here the waiting one is queued and the running one writing.
type generator struct {
	maxBytes    int64
	maxInterval time.Duration // 0: no time trigger
	bytes       int64         // batch bytes since the last snapshot began
	last        time.Time     // when the last snapshot began (or was loaded)
	disabled    string        // why snapshots are off; "" while on

	queued       *image.Image
	queuedReason string
	queuedMs     int64 // when the queued image was published: its header's last contained time
	writing      *image.Image
}

// reset is Kafka's resetSnapshotCounters.
func (g *generator) reset(now time.Time) {
	g.bytes, g.last = 0, now
}

// published counts a published image's batch bytes and schedules a
// snapshot of it when a trigger fires. It reports why, "" when not.
func (g *generator) published(bytes int64, im *image.Image, now time.Time) string {
	g.bytes += bytes
	var reason string
	switch {
	case g.bytes >= g.maxBytes:
		reason = fmt.Sprintf("we have replayed at least %d bytes", g.maxBytes)
	case g.maxInterval != 0 && now.Sub(g.last) >= g.maxInterval:
		reason = fmt.Sprintf("we have waited at least %d minute(s)", int64(g.maxInterval/time.Minute))
	default:
		return ""
	}
	if g.queued != nil || g.disabled != "" {
		return ""
	}
	g.queued, g.queuedReason, g.queuedMs = im, reason, now.UnixMilli()
	return reason
}

// next hands out the queued snapshot once none is being written; the
// counters reset as it starts, as Kafka's do when its emit event runs.
func (g *generator) next(now time.Time) (im *image.Image, reason string, ms int64, ok bool) {
	if g.queued == nil || g.writing != nil {
		return nil, "", 0, false
	}
	im, reason, ms = g.queued, g.queuedReason, g.queuedMs
	g.queued, g.queuedReason, g.writing = nil, "", im
	g.reset(now)
	return im, reason, ms, true
}

// SnapshotID is the id of a snapshot of im: the offset after its last
// record and that record's epoch.
func SnapshotID(im *image.Image) raft.OffsetAndEpoch {
	p := im.Provenance()
	return raft.OffsetAndEpoch{Offset: p.Offset + 1, Epoch: p.Epoch}
}

// ImageBatches yields an image's snapshot records (image.Image.Write),
// encoded, SnapshotBatchRecords at a time: the data batches of Kafka's
// snapshot of that image. It reads only the immutable image, so it may run
// on any goroutine.
func ImageBatches(im *image.Image) func(yield func(records [][]byte) error) error {
	return func(yield func([][]byte) error) error {
		batch := make([][]byte, 0, SnapshotBatchRecords)
		err := im.Write(func(rec metadata.Record, version int16) error {
			v, err := metadata.Append(nil, rec, version)
			if err != nil {
				return err
			}
			batch = append(batch, v)
			if len(batch) < SnapshotBatchRecords {
				return nil
			}
			err = yield(batch)
			batch = batch[:0]
			return err
		})
		if err != nil {
			return err
		}
		if len(batch) > 0 {
			return yield(batch)
		}
		return nil
	}
}

// NextSnapshot implements node.Snapshotter: the snapshot the generator
// scheduled, once none is being written.
func (a *App) NextSnapshot() (node.SnapshotJob, bool) {
	im, reason, ms, ok := a.gen.next(a.now)
	if !ok {
		return node.SnapshotJob{}, false
	}
	id := SnapshotID(im)
	a.lg.Info("creating a new snapshot", zap.Int64("offset", id.Offset), zap.Int32("epoch", id.Epoch), zap.String("because", reason))
	return node.SnapshotJob{ID: id, LastContainedMs: ms, Batches: ImageBatches(im)}, true
}

// SnapshotWritten implements node.Snapshotter. A failure is counted
// (MetadataErrorCount), not fatal, as Kafka's snapshot generator reports it
// to its non-fatal metadata publishing fault handler.
func (a *App) SnapshotWritten(r node.SnapshotResult) {
	a.gen.writing = nil
	switch {
	case r.Err != nil && !r.Exists:
		a.metadataErrors.Add(1)
		a.lg.Error("snapshot generation failed", zap.Int64("offset", r.ID.Offset), zap.Int32("epoch", r.ID.Epoch), zap.Error(r.Err))
	case r.Exists:
		a.lg.Info("not generating a snapshot: it already exists", zap.Int64("offset", r.ID.Offset), zap.Int32("epoch", r.ID.Epoch))
	default:
		a.latestSnapshot.Store(&snapshotStat{bytes: r.Bytes, at: r.At})
	}
}

// snapshotStat is the latest snapshot written (Kafka's SnapshotEmitter
// metrics).
type snapshotStat struct {
	bytes int64
	at    time.Time
}
