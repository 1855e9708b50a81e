package controller

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/controller/cluster"
	"github.com/kraftd/kraftd/controller/replication"
	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/purgatory"
	"github.com/kraftd/kraftd/raft"
)

// ActiveOptions turn on the active side of the application: it claims the
// controller role when raft makes its node leader of __cluster_metadata.
// Without them the application stays a standby (test-kraft-server-start,
// and simulations that append records themselves).
type ActiveOptions struct {
	// Cluster is the broker lifecycle's settings (cluster id, node id,
	// broker.session.timeout.ms, static min.insync.replicas...).
	Cluster cluster.Settings
	// MaxIdleInterval is metadata.max.idle.interval.ms: a NoOpRecord this
	// often while active; 0 turns it off.
	MaxIdleInterval time.Duration
	// HeartbeatDeadline is how long a heartbeat may wait for its turn
	// before it is answered REQUEST_TIMED_OUT (Kafka: half of
	// broker.heartbeat.interval.ms); 0 means no deadline.
	HeartbeatDeadline time.Duration
	// Registration, when set, is this controller's own registration,
	// written once active while the image lacks an equal one (Kafka's
	// ControllerRegistrationManager sends it to the active controller,
	// itself included).
	Registration *kmsg.ControllerRegistrationRequest
	// Replication is the topic operations' settings (num.partitions,
	// default.replication.factor, delete.topic.enable, the static
	// properties); nil takes Kafka's defaults.
	Replication *replication.Settings
	// Seed seeds the replica placer and the topic id source (the product
	// draws it at random; a simulation fixes it).
	Seed int64
	// LeaderImbalanceCheckInterval is leader.imbalance.check.interval.seconds:
	// how often the preferred leaders are elected again, when
	// AutoLeaderRebalance (auto.leader.rebalance.enable) is on; 0 turns
	// the task off.
	LeaderImbalanceCheckInterval time.Duration
	AutoLeaderRebalance          bool
	// UncleanElectionInterval is unclean.leader.election.interval.ms: how
	// often leaderless partitions of topics allowing it get an unclean
	// leader; 0 turns the task off.
	UncleanElectionInterval time.Duration
	// LookupHost resolves a host name, as Java's InetAddress.getByName
	// does, for AlterClientQuotas' ip entities; called off the loop
	// (Prepare). nil resolves none (a simulation).
	LookupHost func(host string) bool
	// QuorumVoterIDs are the static voters (controller.quorum.voters),
	// ascending; none with a dynamic quorum. UpdateFeatures changes no
	// feature while one of them has not registered (Kafka's QuorumFeatures).
	QuorumVoterIDs []int32
}

// Kafka's defaults of the periodic elections' intervals.
const (
	DefaultLeaderImbalanceCheckInterval = 300 * time.Second
	DefaultUncleanElectionInterval      = 300 * time.Second
)

// DefaultMaxIdleInterval is metadata.max.idle.interval.ms's default.
const DefaultMaxIdleInterval = 500 * time.Millisecond

// maxRetrying bounds the operations waiting for room in raft's append
// buffer; more are answered REQUEST_TIMED_OUT.
const maxRetrying = 4096

// activeState is the controller while it is active in one epoch.
type activeState struct {
	epoch     int32
	working   *image.Loader // committed plus everything appended since, replayed
	next      int64         // the offset the next record gets (nextWriteOffset)
	highest   int64         // the last offset appended, -1 before the first
	lifecycle *cluster.Manager
	waiting   *purgatory.Purgatory[func(error)]
	// retrying are requests refused by a full append buffer, run again in
	// order at the next Tick; new requests queue behind them.
	retrying  []node.ControllerRequest
	nextNoOp  time.Time
	nextFence time.Time
	// nextBalance and nextUnclean are when the periodic elections run next
	// (zero: the task is off).
	nextBalance time.Time
	nextUnclean time.Time
	registered  bool // this controller's registration is written or in the image
}

// errNotController fails what waits when the controller renounces.
var errNotController = errors.New("not the active controller")

// errRetry: the append buffer is full; the operation runs again later.
var errRetry = errors.New("append buffer full")

// Active reports whether the application is the active controller; safe
// from any goroutine.
func (a *App) Active() bool { return a.isActive.Load() }

// CanBeActive implements node.Controller: with ActiveOptions only.
func (a *App) CanBeActive() bool { return a.o.Active != nil }

// SetRegistration implements node.Controller: this controller's own
// registration (ActiveOptions.Registration), once the node knows its
// endpoints.
func (a *App) SetRegistration(req *kmsg.ControllerRegistrationRequest) {
	if a.o.Active != nil {
		ac := *a.o.Active
		ac.Registration = req
		a.o.Active = &ac
	}
}

// RegisteredControllers implements node.Controller: the controllers of
// the committed image with an endpoint named listener, by id (Kafka's
// ControllerRegistrationsPublisher.describeClusterControllers).
func (a *App) RegisteredControllers(listener string) ([]node.ControllerEndpoint, string) {
	im := a.Image()
	mv, ok := im.MetadataVersion()
	if !ok {
		return nil, "There is no finalized MetadataVersion, so direct-to-controller communication is not supported."
	}
	if !mv.Has(metadata.GateControllerRegistration) {
		return nil, "Direct-to-controller communication is not supported with the current MetadataVersion."
	}
	var out []node.ControllerEndpoint
	for c := range im.Controllers() {
		for _, ep := range c.Endpoints {
			if ep.Name == listener {
				out = append(out, node.ControllerEndpoint{ID: c.ID, Host: ep.Host, Port: int32(ep.Port)})
			}
		}
	}
	slices.SortFunc(out, func(x, y node.ControllerEndpoint) int { return int(x.ID) - int(y.ID) })
	return out, ""
}

// FinalizedFeatures implements node.Controller: the committed image's
// feature levels, metadata.version included, and its offset; safe from any
// goroutine.
func (a *App) FinalizedFeatures() (map[string]int16, int64) {
	im := a.Image()
	out := map[string]int16{}
	if mv, ok := im.MetadataVersion(); ok {
		out[features.MetadataVersionName] = int16(mv)
	}
	for name, level := range im.Features() {
		out[name] = level
	}
	return out, im.Provenance().Offset
}

// mono is the controller's monotonic time: since the application started.
func (a *App) mono(now time.Time) time.Duration { return now.Sub(a.o.Start) }

// maybeClaim becomes active when raft said this node leads an epoch the
// application has not claimed yet (HandleLeaderChange fires only once the
// committed records of earlier epochs were handed over).
func (a *App) maybeClaim(now time.Time, st raft.Status, w node.Writer) {
	if a.o.Active == nil || a.err != nil || a.claimEpoch < 0 || w == nil {
		return
	}
	epoch := a.claimEpoch
	a.claimEpoch = -1
	if st.Role != raft.RoleLeader || st.Epoch != epoch || st.LeaderID != a.o.NodeID {
		return
	}
	act := &activeState{epoch: epoch, working: a.committed.Clone(), next: st.LogEndOffset, highest: -1,
		waiting: purgatory.New[func(error)]()}
	gen, err := activationRecords(a.committed, minISR(a.o.Active.Cluster))
	if err != nil {
		a.failed(fmt.Errorf("controller: activation at epoch %d: %w", epoch, err))
		return
	}
	a.act = act
	a.isActive.Store(true)
	a.lg.Info("becoming the active controller", zap.Int32("epoch", epoch), zap.Int64("next_offset", act.next))
	a.lg.Info(gen.message)
	if len(gen.records) > 0 {
		if _, err := a.write(now, w, gen.records); err != nil {
			if errors.Is(err, errRetry) { // claim again at the next Tick
				a.act, a.claimEpoch = nil, epoch
				a.isActive.Store(false)
				return
			}
			a.appendFailed(err, "activation records")
			return
		}
	}
	act.lifecycle = cluster.Activate(a.o.Active.Cluster, act.working.Image(), a.mono(now))
	act.nextNoOp = now.Add(a.o.Active.MaxIdleInterval)
	act.nextFence = now.Add(a.o.Active.Cluster.FenceStalePeriod())
	if a.rnd == nil {
		a.rnd = newRandomness(a.o.Active.Seed)
	}
	if d := a.o.Active.LeaderImbalanceCheckInterval; d > 0 && a.o.Active.AutoLeaderRebalance {
		act.nextBalance = now.Add(d)
	}
	if d := a.o.Active.UncleanElectionInterval; d > 0 {
		act.nextUnclean = now.Add(d)
	}
}

func minISR(s cluster.Settings) string {
	if v, ok := s.Static["min.insync.replicas"]; ok {
		return v
	}
	return "1"
}

// maxRecordsPerBatch is Kafka's QuorumController.MAX_RECORDS_PER_BATCH: an
// operation's records go to raft in batches of at most this many.
const maxRecordsPerBatch = 10000

// write appends records at the current epoch in batches of at most
// maxRecordsPerBatch, replays them into the working image at the offsets
// raft gave them and returns the last offset. A client's operation writes
// at most maxRecordsPerBatch records (its managers bound it, as Kafka's
// BoundedList does), so only the controller's own work (fencing a broker
// that leads many partitions, an election sweep) spans batches, and such
// work is recomputed from the working image: what a failed later batch did
// not write is written the next time, as Kafka's non-atomic results are.
// errRetry: raft's buffer is full; the batches before it stand.
func (a *App) write(now time.Time, w node.Writer, recs []cluster.Record) (int64, error) {
	last := int64(-1)
	for len(recs) > 0 {
		n := min(len(recs), maxRecordsPerBatch)
		var err error
		if last, err = a.writeBatch(now, w, recs[:n]); err != nil {
			return 0, err
		}
		recs = recs[n:]
	}
	return last, nil
}

// writeBatch appends records as one batch; see write.
func (a *App) writeBatch(now time.Time, w node.Writer, recs []cluster.Record) (int64, error) {
	act := a.act
	vals := make([][]byte, len(recs))
	for i, r := range recs {
		b, err := metadata.Append(nil, r.Record, r.Version)
		if err != nil {
			return 0, fmt.Errorf("controller: encoding %s v%d: %w", r.Record.TypeName(), r.Version, err)
		}
		vals[i] = b
	}
	last, err := w.Append(now, act.epoch, vals)
	if err != nil {
		if errors.Is(err, raft.ErrBufferFull) {
			return 0, errRetry
		}
		return 0, err
	}
	base := last - int64(len(recs)) + 1
	if base != act.next {
		// Raft wrote something of its own in between (a voters record):
		// the records go where raft put them.
		a.lg.Debug("append landed past the expected offset", zap.Int64("expected", act.next), zap.Int64("base", base))
	}
	for _, run := range replayRuns(recs) {
		rs, vs := make([]metadata.Record, 0, run[1]-run[0]), make([]int16, 0, run[1]-run[0])
		for _, r := range recs[run[0]:run[1]] {
			rs, vs = append(rs, r.Record), append(vs, r.Version)
		}
		from := base + int64(run[0])
		if err := act.working.Replay(from, act.epoch, rs, vs); err != nil {
			a.failed(fmt.Errorf("controller: replaying its own records at offsets %d-%d: %w", from, from+int64(len(rs))-1, err))
			return 0, err
		}
		if act.lifecycle != nil {
			im := act.working.Image()
			for _, r := range rs {
				act.lifecycle.Replayed(r, im)
			}
		}
	}
	act.next, act.highest = last+1, last
	a.stats.appended(last, now)
	return last, nil
}

// replayRuns splits an operation's records into the runs the working image
// replays at once, as [from, to) indexes: a run ends after each
// BrokerRegistrationChangeRecord, whose broker the lifecycle manager reads
// from the image right after it (cluster.Manager.Replayed), and at the end.
// Each replay publishes an image, and the next record's changes then copy
// every path they touch: a 100-partition topic replayed record by record
// published 101 images, and the copying was most of a busy controller's CPU.
func replayRuns(recs []cluster.Record) [][2]int {
	var runs [][2]int
	from := 0
	for i, r := range recs {
		if _, change := r.Record.(*metadata.BrokerRegistrationChangeRecord); change || i == len(recs)-1 {
			runs = append(runs, [2]int{from, i + 1})
			from = i + 1
		}
	}
	return runs
}

// appendFailed handles an append error: not leading any more renounces, a
// record too large fails only the operation (the caller answers), anything
// else is fatal as it is for Kafka's controller.
func (a *App) appendFailed(err error, what string) {
	switch {
	case a.err != nil:
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrInvalidEpoch), errors.Is(err, raft.ErrShutdown):
		a.renounce(fmt.Sprintf("appending %s: %v", what, err))
	case errors.Is(err, raft.ErrRecordTooLarge), errors.Is(err, errRetry):
	default:
		a.failed(fmt.Errorf("controller: appending %s: %w", what, err))
	}
}

// renounce stops being active: every waiting answer fails with
// NOT_CONTROLLER, the working image is dropped (the next claim clones the
// committed one again), the broker sessions and periodic tasks go.
func (a *App) renounce(why string) {
	act := a.act
	if act == nil {
		return
	}
	a.act = nil
	a.isActive.Store(false)
	a.stats.deactivated()
	a.lg.Info("renouncing the active controller role", zap.Int32("epoch", act.epoch), zap.String("because", why))
	act.waiting.CompleteAll(func(done func(error)) { done(errNotController) })
	for _, r := range act.retrying {
		a.notController(r)
	}
}

// notController answers r as a controller that is not active does.
func (a *App) notController(r node.ControllerRequest) {
	msg := "No controller appears to be active."
	if l := a.leader.Load(); l >= 0 && l != a.o.NodeID {
		msg = fmt.Sprintf("The active controller appears to be node %d.", l)
	}
	r.Fail(kerr.NotController.Code, msg)
}

// committedOffset advances what waits for commits up to last.
func (a *App) completeUpTo(last int64) {
	if a.act != nil {
		a.act.waiting.CompleteUpTo(last+1, func(done func(error)) { done(nil) })
	}
}

// finish answers an operation whose records ended at last (-1: it wrote
// none): once last commits, or, without records, at once unless something
// appended is still uncommitted (then with it), so no answer shows
// uncommitted state.
func (a *App) finish(last int64, done func(error)) {
	act := a.act
	if last < 0 {
		last = act.highest
	}
	if last < 0 || last <= a.committedLast {
		done(nil)
		return
	}
	act.waiting.Add(last, time.Time{}, done)
}

// op is what an operation of the managers is given.
func (a *App) op(now time.Time, st raft.Status, version int16) cluster.Op {
	return cluster.Op{Image: a.act.working.Image(), Now: a.mono(now), NextOffset: a.act.next,
		APIVersion: version, KraftVersion: st.KRaftVersion}
}

// apply appends an operation's records and answers through done when they
// commit. A refusal (*cluster.Error) is answered at once by fail.
func (a *App) apply(now time.Time, w node.Writer, r node.ControllerRequest, recs []cluster.Record, done func(error)) {
	last := int64(-1)
	if len(recs) > 0 {
		var err error
		last, err = a.write(now, w, recs)
		if err != nil {
			if errors.Is(err, errRetry) {
				a.retry(r)
				return
			}
			a.appendFailed(err, "an operation's records")
			if errors.Is(err, raft.ErrRecordTooLarge) {
				r.Fail(kerr.RecordListTooLarge.Code, err.Error())
			} else {
				a.notController(r)
			}
			return
		}
	}
	a.finish(last, done)
}

func (a *App) retry(r node.ControllerRequest) {
	if len(a.act.retrying) >= maxRetrying {
		r.Fail(kerr.RequestTimedOut.Code, "The controller's append buffer is full.")
		return
	}
	a.act.retrying = append(a.act.retrying, r)
}

// Serve implements node.Controller: a controller request on the loop.
func (a *App) Serve(now time.Time, st raft.Status, w node.Writer, r node.ControllerRequest) {
	a.now = now
	a.maybeClaim(now, st, w)
	if a.act == nil || a.err != nil {
		a.notController(r)
		return
	}
	a.stats.operationsStarted.Add(1)
	if len(a.act.retrying) > 0 {
		a.retry(r)
		return
	}
	a.serve(now, st, w, r)
}

// serve dispatches r to its api's handler (one file per api).
func (a *App) serve(now time.Time, st raft.Status, w node.Writer, r node.ControllerRequest) {
	switch req := r.Req.(type) {
	case *kmsg.BrokerRegistrationRequest:
		a.brokerRegistration(now, st, w, r, req)
	case *kmsg.BrokerHeartbeatRequest:
		a.brokerHeartbeat(now, st, w, r, req)
	case *kmsg.UnregisterBrokerRequest:
		a.unregisterBroker(now, st, w, r, req)
	case *kmsg.ControllerRegistrationRequest:
		a.controllerRegistration(now, st, w, r, req)
	case *kmsg.CreateTopicsRequest:
		a.createTopics(now, st, w, r, req)
	case *kmsg.DeleteTopicsRequest:
		a.deleteTopics(now, st, w, r, req)
	case *kmsg.CreatePartitionsRequest:
		a.createPartitions(now, st, w, r, req)
	case *kmsg.AlterPartitionRequest:
		a.alterPartition(now, st, w, r, req)
	case *kmsg.ElectLeadersRequest:
		a.electLeaders(now, st, w, r, req)
	case *kmsg.AllocateProducerIDsRequest:
		a.allocateProducerIDs(now, st, w, r, req)
	case *kmsg.AssignReplicasToDirsRequest:
		a.assignReplicasToDirs(now, st, w, r, req)
	case *kmsg.IncrementalAlterConfigsRequest:
		a.incrementalAlterConfigs(now, st, w, r, req)
	case *kmsg.AlterConfigsRequest:
		a.alterConfigs(now, st, w, r, req)
	case *kmsg.ListPartitionReassignmentsRequest:
		a.listPartitionReassignments(now, st, w, r, req)
	case *kmsg.AlterClientQuotasRequest:
		a.alterClientQuotas(now, st, w, r, req)
	case *kmsg.AlterUserSCRAMCredentialsRequest:
		a.alterUserSCRAMCredentials(now, st, w, r, req)
	case *kmsg.UpdateFeaturesRequest:
		a.updateFeatures(now, st, w, r, req)
	case *kmsg.UnregisterControllerRequest:
		a.unregisterController(now, st, w, r, req)
	case *kmsg.AlterPartitionAssignmentsRequest:
		a.alterPartitionAssignments(now, st, w, r, req)
	case *kmsg.CreateDelegationTokenRequest, *kmsg.RenewDelegationTokenRequest, *kmsg.ExpireDelegationTokenRequest:
		a.delegationToken(now, st, w, r)
	default:
		// Registered but not served yet (the replication apis): answered
		// as Kafka answers an api it does not handle on this path.
		r.Fail(kerr.UnsupportedVersion.Code, fmt.Sprintf("The controller does not serve %s yet.", kmsg.NameForKey(r.Header.APIKey)))
	}
}

// refused answers a manager's refusal; any other error is unexpected.
func refused(r node.ControllerRequest, err error) {
	var ce *cluster.Error
	if errors.As(err, &ce) {
		r.Fail(ce.Code, ce.Message)
		return
	}
	r.Fail(kerr.UnknownServerError.Code, "The server experienced an unexpected error when processing the request.")
}

// activeTick runs the periodic tasks and the requests waiting for room in
// raft's buffer; it returns when it next wants to run.
func (a *App) activeTick(now time.Time, st raft.Status, w node.Writer) time.Time {
	next := now.Add(idleTick)
	act := a.act
	if a.claimEpoch >= 0 {
		next = now.Add(time.Millisecond)
	}
	if act == nil || w == nil {
		return next
	}
	if pending := act.retrying; len(pending) > 0 {
		act.retrying = nil
		for i, r := range pending {
			if a.act == nil {
				a.notController(r)
				continue
			}
			if len(a.act.retrying) > 0 { // full again: keep the order
				a.act.retrying = append(a.act.retrying, pending[i:]...)
				break
			}
			a.serve(now, st, w, r)
		}
	}
	if a.act == nil {
		return next
	}
	a.registerSelf(now, st, w)
	if a.o.Active.MaxIdleInterval > 0 && a.act != nil && !now.Before(a.act.nextNoOp) {
		a.stats.operationsStarted.Add(1)
		if _, err := a.write(now, w, []cluster.Record{{Record: &metadata.NoOpRecord{}}}); err != nil && !errors.Is(err, errRetry) {
			a.appendFailed(err, "a NoOpRecord")
		}
		if a.act != nil {
			a.act.nextNoOp = now.Add(a.o.Active.MaxIdleInterval)
		}
	}
	if a.act != nil && !now.Before(a.act.nextFence) {
		a.stats.operationsStarted.Add(1)
		a.fenceStale(now, st, w)
		if a.act != nil {
			a.act.nextFence = now.Add(a.o.Active.Cluster.FenceStalePeriod())
		}
	}
	a.act = a.electPeriodically(now, w, a.act)
	if a.act == nil {
		return next
	}
	if !a.act.nextBalance.IsZero() {
		next = earliest(next, a.act.nextBalance)
	}
	if !a.act.nextUnclean.IsZero() {
		next = earliest(next, a.act.nextUnclean)
	}
	if a.o.Active.MaxIdleInterval > 0 {
		next = earliest(next, a.act.nextNoOp)
	}
	if len(a.act.retrying) > 0 {
		next = earliest(next, now.Add(time.Millisecond))
	}
	return earliest(next, a.act.nextFence)
}

// fenceStale runs the stale-broker task until it finds nothing more (it
// fences at most one broker a run, and runs again at once after one).
func (a *App) fenceStale(now time.Time, st raft.Status, w node.Writer) {
	for range 1000 {
		if a.act == nil {
			return
		}
		recs, again, err := a.act.lifecycle.FenceStaleBroker(a.op(now, st, 0))
		if err != nil {
			a.lg.Error("fencing a stale broker", zap.Error(err))
			return
		}
		if len(recs) > 0 {
			if _, err := a.write(now, w, recs); err != nil {
				a.appendFailed(err, "a stale broker's fencing")
				return
			}
		}
		if !again {
			return
		}
	}
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
