package controller

import (
	"fmt"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/metrics"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

// Options configure a controller application.
type Options struct {
	NodeID int32
	Image  image.Options
	// MaxBytesBetweenSnapshots is metadata.log.max.record.bytes.between.snapshots:
	// a snapshot once this many bytes of committed batches were published
	// since the last one; must be positive.
	MaxBytesBetweenSnapshots int64
	// MaxSnapshotInterval is metadata.log.max.snapshot.interval.ms: a
	// snapshot at the first published image this long after the last one;
	// 0 turns the time trigger off.
	MaxSnapshotInterval time.Duration
	Logger              *zap.Logger
	// Start is the time the application starts at: the time trigger and
	// the age of the latest snapshot count from it until a snapshot is
	// loaded or written (as Kafka's generator and emitter metrics do).
	Start time.Time
	// OnPublish, when set, sees each committed image as it is published,
	// on the loop goroutine (a simulation checks them).
	OnPublish func(*image.Image)
	// StaticProperties are the node's properties as read (Kafka's
	// originals), which DescribeConfigs reports (describeconfigs.go).
	StaticProperties map[string]string
	// Active, when set, lets the application become the active controller
	// (active.go); without it the application is a standby only.
	Active *ActiveOptions
}

// App is the controller application of __cluster_metadata, a
// node.Application: Kafka's controller, standby and (with
// Options.Active, active.go) active. It keeps
// the committed image (an image.Loader fed by raft's commits and snapshot
// loads), publishes each new committed image to readers off the loop
// (Image), snapshots the committed image when Kafka's triggers say so
// (node.Snapshotter: the node writes the snapshot off the loop), and fails
// the node on a record it cannot replay (node.Failing), as a Kafka
// controller halts.
//
// Everything but the published values (the image and the metric figures,
// atomics) belongs to the node's loop goroutine; it reads no clock (the
// time comes from Tick) and does no I/O, so a simulation can drive it.
//
// The active side (active.go: a working loader cloned from the committed
// one, its own records replayed before they commit, requests completed on
// commit) sits beside this one: the committed loader stays as it is, and
// HandleCommit only completes what the active side appended.
type App struct {
	o  Options
	lg *zap.Logger

	committed *image.Loader
	pending   int64 // bytes of batches replayed since the last published image
	err       error // the replay failure that stopped the application
	now       time.Time
	gen       generator

	// The active side (active.go): act while active, claimEpoch the epoch
	// raft said this node leads, to claim at the next Tick or request (-1:
	// none), committedLast the last committed offset handed over.
	act           *activeState
	claimEpoch    int32
	committedLast int64
	isActive      atomic.Bool
	rnd           *randomness // drawn at the first claim, kept after
	// lookupHost is ActiveOptions.LookupHost, kept apart because Prepare
	// reads it off the loop while SetRegistration may replace the options.
	lookupHost func(string) bool

	// Published for other goroutines (readers, metrics).
	image          atomic.Pointer[image.Image]
	leader         atomic.Int32 // the leader raft last reported, -1 when unknown
	snapshotLoads  atomic.Int64 // snapshots loaded, the bootstrap apart
	metadataErrors atomic.Int64
	latestSnapshot atomic.Pointer[snapshotStat]
	stats          *stats
}

var (
	_ node.Application = (*App)(nil)
	_ node.Failing     = (*App)(nil)
	_ node.Snapshotter = (*App)(nil)
	_ node.Controller  = (*App)(nil)
)

// New returns the application at the empty image.
func New(o Options) (*App, error) {
	if o.MaxBytesBetweenSnapshots <= 0 {
		return nil, fmt.Errorf("controller: max bytes between snapshots %d: must be positive", o.MaxBytesBetweenSnapshots)
	}
	if o.MaxSnapshotInterval < 0 {
		return nil, fmt.Errorf("controller: snapshot interval %v: must not be negative", o.MaxSnapshotInterval)
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	a := &App{o: o, lg: o.Logger, committed: image.NewLoader(o.Image), now: o.Start,
		gen: generator{maxBytes: o.MaxBytesBetweenSnapshots, maxInterval: o.MaxSnapshotInterval}}
	a.gen.reset(o.Start)
	a.claimEpoch, a.committedLast = -1, -1
	a.stats = newStats()
	if o.Active != nil {
		a.lookupHost = o.Active.LookupHost
	}
	a.image.Store(a.committed.Image())
	a.leader.Store(-1)
	a.latestSnapshot.Store(&snapshotStat{at: o.Start})
	return a, nil
}

// Image is the latest committed image, published at a batch end outside a
// metadata transaction; safe from any goroutine.
func (a *App) Image() *image.Image { return a.image.Load() }

// Committed is the committed loader (for the loop goroutine only): its
// transaction state and bootstrap records are what an activating
// controller needs.
func (a *App) Committed() *image.Loader { return a.committed }

// Err implements node.Failing: the replay failure that stopped the
// application, naming the offset and the record.
func (a *App) Err() error { return a.err }

// HandleCommit implements raft.Listener: replays each committed batch
// onto the committed image and publishes the image at each batch end
// outside a transaction. While active it touches nothing else (the working
// image has the records already) but the answers waiting for the batch.
func (a *App) HandleCommit(batches []raft.CommittedBatch) {
	for _, b := range batches {
		if a.err != nil {
			return
		}
		a.pending += BatchBytes(b)
		prev := a.committed.Image()
		if err := a.committed.HandleCommit(b); err != nil {
			a.failed(fmt.Errorf("controller: replaying the committed batch at offsets %d-%d: %w", b.BaseOffset, b.LastOffset, err))
			return
		}
		if im := a.committed.Image(); im != prev {
			a.publish(im)
		}
		a.committedLast = b.LastOffset
		a.stats.committed(b, a.act != nil)
		a.completeUpTo(b.LastOffset)
	}
}

// publish makes im the committed image readers see and lets the snapshot
// generator count it. Kafka's loader publishes nothing before a
// metadata.version, so the bytes before one count with the first image
// that has it.
func (a *App) publish(im *image.Image) {
	a.image.Store(im)
	if a.o.OnPublish != nil {
		a.o.OnPublish(im)
	}
	if _, ok := im.MetadataVersion(); !ok {
		return
	}
	bytes := a.pending
	a.pending = 0
	if reason := a.gen.published(bytes, im, a.now); reason != "" {
		id := SnapshotID(im)
		a.lg.Debug("snapshot scheduled", zap.Int64("offset", id.Offset), zap.Int32("epoch", id.Epoch), zap.String("because", reason))
	}
}

func (a *App) failed(err error) {
	a.err = err
	a.metadataErrors.Add(1)
	// As Kafka's metadata loading fault handler: no snapshot after it.
	if a.gen.disabled == "" {
		a.gen.disabled = "metadata loading fault"
	}
	a.gen.queued = nil
	a.lg.Error("cannot apply a committed record: stopping", zap.Error(err))
}

// HandleLoadSnapshot implements raft.Listener: the state becomes the
// snapshot's (the bootstrap snapshot 0-0 is kept apart, image.Loader), and
// the snapshot counters restart, as Kafka's generator's do on a loaded
// snapshot.
func (a *App) HandleLoadSnapshot(id raft.OffsetAndEpoch, r raft.SnapshotReader) {
	if a.err != nil {
		return
	}
	if a.act != nil && (id.Offset != 0 || id.Epoch != 0) {
		// Raft loads no snapshot into a leader's listener; should it, the
		// working image no longer follows the committed one.
		a.renounce("a snapshot was loaded while active")
	}
	if err := a.committed.LoadSnapshot(id, r); err != nil {
		a.failed(fmt.Errorf("controller: loading snapshot %d-%d: %w", id.Offset, id.Epoch, err))
		return
	}
	if id.Offset == 0 && id.Epoch == 0 {
		// Kafka 4.4 hands the bootstrap to the controller, not to its
		// metadata loader, which does not count it.
		return
	}
	a.snapshotLoads.Add(1)
	a.committedLast = id.Offset - 1
	a.stats.loaded(id)
	a.pending = 0
	a.gen.reset(a.now)
	a.image.Store(a.committed.Image())
	if a.o.OnPublish != nil {
		a.o.OnPublish(a.committed.Image())
	}
}

// HandleLeaderChange implements raft.Listener. Raft reports this node as
// leader only once every committed record of earlier epochs was handed
// over: the claim follows at the next Tick or request, which can append.
// Any other news ends an active epoch.
func (a *App) HandleLeaderChange(l raft.LeaderAndEpoch) {
	a.leader.Store(l.LeaderID)
	if l.LeaderID >= 0 {
		a.stats.newActiveControllers.Add(1)
	}
	if a.o.Active == nil {
		return
	}
	if a.act != nil && (l.LeaderID != a.o.NodeID || l.Epoch != a.act.epoch) {
		a.renounce(fmt.Sprintf("the leader of epoch %d is %d", l.Epoch, l.LeaderID))
	}
	if l.LeaderID == a.o.NodeID && a.act == nil {
		a.claimEpoch = l.Epoch
	} else {
		a.claimEpoch = -1
	}
}

// BeginShutdown implements raft.Listener: no snapshot is started after it
// (Kafka's generator: "we are shutting down").
func (a *App) BeginShutdown() {
	if a.gen.disabled == "" {
		a.gen.disabled = "we are shutting down"
	}
	a.gen.queued = nil
	a.renounce("shutting down")
}

// idleTick is how long the application lets the loop sleep: it has no
// timers of its own yet.
const idleTick = time.Hour

// Tick implements node.Application: it takes the loop's clock, which the
// time trigger reads at the next published image, claims the controller
// role when raft made this node leader, and runs the active controller's
// periodic tasks.
func (a *App) Tick(now time.Time, st raft.Status, w node.Writer) time.Time {
	a.now = now
	if a.o.Active == nil {
		return now.Add(idleTick)
	}
	a.maybeClaim(now, st, w)
	return a.activeTick(now, st, w)
}

// BatchBytes is the size a committed batch had in the log, as Kafka's
// loader counts it (Batch.sizeInBytes) toward the snapshot trigger,
// computed from its records as kraftd and Kafka write them (uncompressed,
// null keys but for control records, no timestamp deltas or headers). A
// compressed batch counts at its uncompressed size.
func BatchBytes(b raft.CommittedBatch) int64 {
	n := int64(protocol.BatchHeaderSize)
	for i, v := range b.Records {
		key := 1 // null: varint -1
		if b.Control {
			key = 1 + 4 // the control key: version and type
		}
		body := 1 + 1 + varintLen(int64(i)) + key + varintLen(int64(len(v))) + len(v) + 1
		n += int64(varintLen(int64(body)) + body)
	}
	return n
}

// varintLen is the size of v as a zig-zag varint.
func varintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// ControllerView gives the metrics of the committed image and the
// application's counters; safe from any goroutine.
func (a *App) ControllerView() (metrics.ControllerView, bool) {
	im := a.Image()
	c := im.Counts()
	v := metrics.ControllerView{
		FencedBrokers: c.FencedBrokers, ActiveBrokers: c.ActiveBrokers, ControlledShutdownBrokers: c.ControlledShutdownBrokers,
		Topics: c.Topics, Partitions: c.Partitions, OfflinePartitions: c.OfflinePartitions, ImbalancedPartitions: c.ImbalancedPartitions,
		MetadataErrors: a.metadataErrors.Load(), LastAppliedOffset: a.stats.lastApplied.Load(),
		LastCommittedOffset: a.stats.lastCommitted.Load(), LastAppliedTimestampMs: a.stats.lastAppliedMs.Load(),
		NewActiveControllers: a.stats.newActiveControllers.Load(), TimedOutHeartbeats: a.stats.timedOutHeartbeats.Load(),
		OperationsStarted: a.stats.operationsStarted.Load(), OperationsTimedOut: a.stats.operationsTimedOut.Load(),
		ControllerID: a.leader.Load(), SnapshotLoads: a.snapshotLoads.Load(), Active: a.Active(),
	}
	if mv, ok := im.MetadataVersion(); ok {
		v.MetadataVersion = int16(mv)
		v.Features = append(v.Features, metrics.FeatureLevel{Name: features.MetadataVersionName, Level: int16(mv)})
	}
	for name, level := range im.Features() {
		v.Features = append(v.Features, metrics.FeatureLevel{Name: name, Level: level})
	}
	for b := range im.Brokers() {
		s := metrics.BrokerActive
		switch {
		case b.Fenced:
			s = metrics.BrokerFenced
		case b.InControlledShutdown:
			s = metrics.BrokerControlledShutdown
		}
		v.Brokers = append(v.Brokers, metrics.BrokerState{ID: b.ID, State: s})
	}
	if s := a.latestSnapshot.Load(); s != nil {
		v.LatestSnapshotBytes, v.LatestSnapshotAt = s.bytes, s.at
	}
	return v, true
}
