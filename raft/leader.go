package raft

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft/quorum"
)

// replicaState is what the leader knows of one replica from its fetches.
type replicaState struct {
	id  NodeID
	dir [16]byte
	// endOffset is the replica's log end offset as told by its last valid
	// Fetch (FetchOffset), -1 while unknown.
	endOffset     int64
	lastFetch     time.Time // zero while unknown
	lastCaughtUp  time.Time
	prevFetch     time.Time
	prevLeaderEnd int64 // leader's end offset at the previous fetch
}

// leaderState lives while the node leads its epoch.
type leaderState struct {
	epochStartOffset int64
	// highWatermark is the HW exposed in this epoch: -1 until an entry of
	// this epoch is replicated on a majority. Invariant: never decreases.
	highWatermark int64
	voters        map[NodeID]*replicaState // remote voters and the leader itself
	observers     map[NodeID]*replicaState // keyed by replica id

	// checkQuorum makes the leader resign when it expires: reset each time
	// a majority of voters (the leader included) fetched in its window.
	checkQuorum   timer
	fetchedVoters map[NodeID]bool // voters with a valid fetch in the current window
	// beginQuorum fires at once, then every fetch.timeout/2 for the whole
	// epoch; each time BeginQuorumEpoch goes to the voters that have not
	// fetched within fetch.timeout/2 (as Kafka 4.4's
	// needToSendBeginQuorumRequests).
	beginQuorum     timer
	resignRequested bool
	// deferTo are the caught-up preferred voters a deferring leader
	// resigns for, named first among its successors (deferral.go).
	deferTo   []NodeID
	electedAt time.Time

	scratch    []int64           // reused by maybeAdvanceHighWatermark
	recScratch []protocol.Record // reused by drainAppends
	// batchScratch is drainAppends' batch buffer, kept up to maxBatchScratch.
	batchScratch []byte

	// hwMoved is set when the HW advanced in this round: parked fetches
	// are then answered early so followers learn it without waiting for
	// new records or MaxWaitMs (what Fetch v18's HighWatermark asks for).
	hwMoved bool

	// change is the AddRaftVoter or RemoveRaftVoter in flight, nil if none.
	change *pendingChange
	// volatileVoters is, at kraft.version 0, the static voter set with
	// what UpdateRaftVoter requests told this leader (directory ids,
	// endpoints, kraft.version ranges): kept in memory only, as Kafka 4.4's
	// LeaderState.volatileVoters, for an upgrade to kraft.version 1. nil
	// until the first update.
	volatileVoters *VoterSet
	// upgrades are UpdateFeatures requests waiting for their commit
	// (upgrade.go), in offset order.
	upgrades []pendingUpgrade

	acc         accumulator
	unflushed   bool            // appended since the last fsync began
	flushing    FlushJob        // the fsync handed to Config.Flusher, nil when none
	appendTimes map[int64]int64 // batch base offset -> append time (unix ns), for listeners
	uncommitted []appendedBatch // this epoch's batches above the HW, in offset order (observe.go)
	// uncommittedBytes is the sum of uncommitted's sizes: the backlog
	// Config.MaxUncommittedBytes bounds.
	uncommittedBytes int
}

// newLeaderState is the state of a leader that starts its epoch now with
// the log ending at leo.
func (d *Driver) newLeaderState(now time.Time, leo int64) *leaderState {
	d.retries = 0
	l := &leaderState{
		epochStartOffset: leo,
		highWatermark:    -1,
		voters:           make(map[NodeID]*replicaState, d.voters.Len()),
		observers:        map[NodeID]*replicaState{},
		fetchedVoters:    map[NodeID]bool{},
		appendTimes:      map[int64]int64{},
		electedAt:        now,
	}
	l.checkQuorum.reset(now, d.checkQuorumTimeout())
	l.beginQuorum.reset(now, 0)
	l.updateVoters(d.voters)
	return l
}

func (*leaderState) role() Role     { return RoleLeader }
func (*leaderState) ledEpoch() bool { return true }

// canGrantVote: no vote, not even a pre-vote, while it leads.
func (*leaderState) canGrantVote(*Driver, time.Time, bool) bool { return false }

// postponeElection: a leader runs no election timer.
func (*leaderState) postponeElection(*Driver, time.Time) {}

// exit answers parked fetches with NOT_LEADER_OR_FOLLOWER, so followers
// re-route at once, and fails the pending voter change and upgrades;
// undrained appends are dropped.
func (l *leaderState) exit(d *Driver) {
	d.parked.CompleteAll(func(p *parkedFetch) {
		d.replyParkedError(p, kerr.NotLeaderForPartition.Code)
	})
	d.finishChange(errNotLeader, "")
	d.failUpgrades()
}

// becomeLeader: a Candidate won, granted (ids, ascending) voting for it.
// The LeaderChange control batch is the first entry of the epoch; the HW
// stays unknown until it commits.
func (d *Driver) becomeLeader(now time.Time, granted []int32) {
	d.transition(now, RoleLeader, d.epoch, d.self(), d.votedID, d.votedDir, true)
	if d.fatal != nil {
		return
	}
	l := d.asLeader()
	leo := d.appendControlBatch(now, d.epochStartRecords(granted))
	if d.fatal != nil {
		return
	}
	l.acc.reset(d.log.EndOffset().Offset, d.epoch)
	d.lg.Info("became leader", zapEpoch("epoch", d.epoch), zap.Int64("epochStartOffset", leo),
		zap.Int32s("grantingVoters", granted))
}

// appendControlBatch writes a control batch of recs at the log end and
// returns its base offset; the caller moves the accumulator past it.
func (d *Driver) appendControlBatch(now time.Time, recs []protocol.Record) int64 {
	l := d.asLeader()
	base := d.log.EndOffset().Offset
	batch := protocol.AppendBatch(nil, protocol.Batch{
		BaseOffset:           base,
		PartitionLeaderEpoch: int32(d.epoch),
		Control:              true,
		BaseTimestamp:        now.UnixMilli(),
		MaxTimestamp:         now.UnixMilli(),
		Records:              recs,
	})
	last, err := d.log.Append(batch)
	if err != nil {
		d.fail(fmt.Errorf("raft: append control batch at offset %d epoch %d: %w", base, d.epoch, err))
		return base
	}
	l.unflushed = true
	l.appendTimes[base] = now.UnixNano()
	d.noteLeaderAppend(now, base, last, len(batch))
	d.noteAppended(now, batch)
	return base
}

// epochStartRecords are the control records of the epoch's first batch
// (Kafka's appendStartOfEpochControlRecords): LeaderChangeMessage v0 with
// the voters and those that granted (self included); at kraft.version 1,
// when the voter set comes from a bootstrap snapshot or records other
// endpoints for this node, KRaftVersion and a Voters record with this
// node's current endpoints follow, so the log holds the set.
func (d *Driver) epochStartRecords(granted []int32) []protocol.Record {
	msg := protocol.NewLeaderChange(int32(d.self()), d.voters.IDs(), granted)
	recs := []protocol.Record{protocol.ControlRecord(0, protocol.ControlLeaderChange, msg.AppendTo(nil))}
	version := d.kraftVersion()
	vs, off := d.kraft.latestVoters()
	if version < 1 || off < -1 {
		return recs
	}
	local := d.localVoterNode()
	if off != -1 && !vs.NeedsUpdate(local) {
		return recs
	}
	updated, ok := vs.Update(local)
	if !ok {
		return recs // not reachable: only a voter becomes leader
	}
	vr := updated.Record()
	return append(recs,
		protocol.ControlRecord(1, protocol.ControlKRaftVersion, protocol.KRaftVersionRecord{KRaftVersion: version}.AppendTo(nil)),
		protocol.ControlRecord(2, protocol.ControlKRaftVoters, vr.AppendTo(nil)))
}

// localVoterNode is this node as a voter set would record it now.
func (d *Driver) localVoterNode() VoterNode {
	return VoterNode{Key: d.localKey(), Endpoints: d.cfg.Endpoints, KRaftVersions: kraftVersionsSupported}
}

func (d *Driver) checkQuorumTimeout() time.Duration { return d.cfg.FetchTimeout * 3 / 2 }

// poll: resign if asked or check quorum expired, drain appends, send
// BeginQuorumEpoch when due.
func (l *leaderState) poll(d *Driver, now time.Time) {
	alone := d.voters.IsOnlyVoter(d.localKey())
	d.maybeDeferLeadership(now)
	if d.shuttingDown || l.resignRequested || (!alone && l.checkQuorum.expired(now)) {
		if !d.shuttingDown && !l.resignRequested {
			d.lg.Warn("resigning: fewer than a majority of voters fetched within the check-quorum timeout",
				zapEpoch("epoch", d.epoch), zap.Duration("timeout", d.checkQuorumTimeout()))
		}
		d.becomeResigned(now)
		return
	}
	if alone {
		l.checkQuorum.reset(now, d.checkQuorumTimeout())
	}
	l.changePending(d, now)
	if l.acc.shouldDrain(now) {
		d.drainAppends(now)
		if d.fatal != nil {
			return
		}
	}
	if l.beginQuorum.expired(now) {
		interval := d.cfg.FetchTimeout / 2
		for _, v := range d.voters.Nodes() {
			id := v.Key.ID
			if id == d.self() || l.fetchedWithin(id, now, interval) || !d.reqs.Ready(id, now) {
				continue
			}
			d.send(now, id, d.buildBeginQuorumEpoch(v.Key), false)
		}
		l.beginQuorum.reset(now, interval)
	}
}

// fetchedWithin reports whether voter id made a valid Fetch less than
// window ago: it follows this leader and needs no BeginQuorumEpoch.
func (l *leaderState) fetchedWithin(id NodeID, now time.Time, window time.Duration) bool {
	r := l.voters[id]
	return r != nil && !r.lastFetch.IsZero() && now.Sub(r.lastFetch) < window
}

// deadline: a resignation asked for from a listener callback happens in
// the next round, at once; a single voter has no quorum to check.
func (l *leaderState) deadline(d *Driver, now time.Time) time.Time {
	var resign, checkQuorum time.Time
	if l.resignRequested || d.shuttingDown {
		resign = now
	}
	// Only a leader that is the single voter has no quorum to check: one
	// that removed itself from a one-voter set still needs its fetches.
	if !d.voters.IsOnlyVoter(d.localKey()) {
		checkQuorum = l.checkQuorum.deadline
	}
	linger, _ := l.acc.drainDeadline()
	var change time.Time
	if l.change != nil {
		change = l.change.deadline
	}
	return earliest(resign, l.beginQuorum.deadline, checkQuorum, linger, change)
}

// maxBatchScratch bounds the batch buffer a leader keeps between rounds;
// a larger batch (a burst) gets its own.
const maxBatchScratch = 1 << 20

// drainAppends writes every accumulated batch to the log (offsets were
// assigned at Append). The fsync follows in flushLeader, once per round.
func (d *Driver) drainAppends(now time.Time) {
	l := d.asLeader()
	for _, b := range l.acc.drain() {
		// The Record slice is only read by AppendBatch: reuse it.
		recs := slices.Grow(l.recScratch[:0], len(b.records))[:len(b.records)]
		for i, v := range b.records {
			recs[i] = protocol.Record{Value: v}
		}
		l.recScratch = recs
		// Log.Append keeps nothing of data: one buffer serves every batch.
		data := protocol.AppendBatch(slices.Grow(l.batchScratch[:0], b.bytes), protocol.Batch{
			BaseOffset:           b.base,
			PartitionLeaderEpoch: int32(d.epoch),
			BaseTimestamp:        now.UnixMilli(),
			MaxTimestamp:         now.UnixMilli(),
			Records:              recs,
		})
		clear(recs) // drop the references to the appended values
		if cap(data) <= maxBatchScratch {
			l.batchScratch = data[:0]
		}
		last, err := d.log.Append(data)
		if err != nil {
			d.fail(fmt.Errorf("raft: append batch at offset %d epoch %d: %w", b.base, d.epoch, err))
			return
		}
		if want := b.base + int64(len(b.records)) - 1; last != want {
			d.fail(fmt.Errorf("raft: append batch at offset %d: log assigned last offset %d, want %d", b.base, last, want))
			return
		}
		l.unflushed = true
		l.appendTimes[b.base] = now.UnixNano()
		d.noteLeaderAppend(now, b.base, last, len(data))
		d.noteAppended(now, data)
	}
}

// flushLeader makes the round's appends durable, then counts the leader at
// its flushed offset, which may advance the HW and wake parked fetches.
// Parked fetches get the new records before the fsync: followers write and
// flush them while the leader flushes (the HW still counts the leader only
// at its flushed offset, and a follower acknowledges only what it flushed).
// With a Config.Flusher the fsync runs off the driver's goroutine, one at a
// time: appends made meanwhile wait for the next one, begun when FlushDone
// reports this one.
func (d *Driver) flushLeader(now time.Time, l *leaderState) {
	if l.unflushed && d.parked.Len() > 0 {
		d.parked.CompleteUpTo(d.log.EndOffset().Offset, func(p *parkedFetch) { d.completeParked(now, p) })
		if d.fatal != nil {
			return
		}
	}
	switch {
	case !l.unflushed:
	case d.cfg.Flusher == nil:
		if err := d.log.Flush(); err != nil {
			d.failFlush(d.log.EndOffset().Offset, err)
			return
		}
		l.unflushed = false
	case l.flushing == nil:
		job, err := d.log.BeginFlush()
		if err != nil {
			d.failFlush(d.log.EndOffset().Offset, err)
			return
		}
		l.flushing, l.unflushed = job, false
		d.cfg.Flusher(job)
	}
	self := l.voters[d.self()]
	if self != nil {
		self.endOffset = d.log.FlushedOffset()
		self.lastFetch, self.lastCaughtUp = now, now
	}
	d.maybeAdvanceHighWatermark()
	d.noteCommitted(now)
	d.changeCommitted()
	d.upgradesCommitted()
	// Parked fetches wait for the log end offset to pass their offset.
	if d.parked.Len() > 0 {
		complete := func(p *parkedFetch) { d.completeParked(now, p) }
		if l.hwMoved {
			d.parked.CompleteAll(complete)
		} else {
			d.parked.CompleteUpTo(d.log.EndOffset().Offset, complete)
		}
	}
	l.hwMoved = false
}

// failFlush stops the node after a failed leader fsync: an fsync error is
// final (the kernel may have dropped the data it reported written).
func (d *Driver) failFlush(end int64, err error) {
	d.fail(fmt.Errorf("raft: flush leader log to offset %d: %w", end, err))
}

// maybeAdvanceHighWatermark applies the majority rule: the offset at index
// floor(n/2) of the voters' end offsets sorted descending, accepted only
// when above the epoch start offset (an entry of this epoch is on a
// majority) and above the current HW.
func (d *Driver) maybeAdvanceHighWatermark() bool {
	l := d.asLeader()
	offs := l.scratch[:0]
	for _, r := range l.voters {
		offs = append(offs, r.endOffset)
	}
	l.scratch = offs
	hw, ok := quorum.MajorityOffset(offs)
	if !ok || hw <= l.epochStartOffset || hw <= l.highWatermark {
		return false
	}
	l.highWatermark = hw
	l.hwMoved = true
	if hw > d.hw {
		d.hw = hw
		d.log.SetHighWatermark(hw)
	}
	return true
}

// preferredSuccessors orders the other voters by fetched offset, most
// caught up first (ties: lower id first; unknown last).
func (l *leaderState) preferredSuccessors(self int32) []int32 {
	rs := make([]*replicaState, 0, len(l.voters))
	for _, r := range l.voters {
		if r.id != NodeID(self) {
			rs = append(rs, r)
		}
	}
	slices.SortFunc(rs, func(a, b *replicaState) int {
		if a.endOffset != b.endOffset {
			if a.endOffset > b.endOffset {
				return -1
			}
			return 1
		}
		return int(a.id) - int(b.id)
	})
	out := make([]int32, 0, len(rs))
	for _, r := range rs {
		out = append(out, int32(r.id))
	}
	return out
}

// recordFetch updates replica tracking after a VALID fetch and counts it
// for check quorum. Returns whether the HW advanced.
func (d *Driver) recordFetch(now time.Time, id NodeID, dir [16]byte, fetchOffset int64) bool {
	l := d.asLeader()
	if id < 0 {
		return false
	}
	leo := d.log.EndOffset().Offset
	var r *replicaState
	isVoter := d.voters.Contains(ReplicaKey{ID: id, DirectoryID: dir})
	if isVoter {
		r = l.voters[id]
	} else {
		r = l.observers[id]
		if r == nil {
			if len(l.observers) >= maxObservers {
				l.expireObservers(now, d.cfg.ObserverSession)
				if len(l.observers) >= maxObservers {
					return false // bounded memory: untracked
				}
			}
			r = &replicaState{id: id, endOffset: -1, prevLeaderEnd: -1}
			l.observers[id] = r
		}
		r.dir = dir
	}
	if r == nil || id == d.self() {
		return false
	}
	if fetchOffset >= leo {
		r.lastCaughtUp = now
	} else if r.prevLeaderEnd >= 0 && fetchOffset >= r.prevLeaderEnd {
		r.lastCaughtUp = r.prevFetch
	}
	r.prevFetch, r.prevLeaderEnd = now, leo
	r.lastFetch = now
	// Set even when lower (a replica that lost unflushed data in a crash
	// fetches from below): the HW itself never decreases.
	r.endOffset = fetchOffset
	if isVoter {
		d.countCheckQuorum(now, id)
		return d.maybeAdvanceHighWatermark()
	}
	return false
}

// maxObservers bounds the observers tracked for DescribeQuorum.
const maxObservers = 4096

func (l *leaderState) expireObservers(now time.Time, session time.Duration) {
	for id, r := range l.observers {
		if now.Sub(r.lastFetch) > session {
			delete(l.observers, id)
		}
	}
}

// countCheckQuorum resets the check-quorum window once majority-1 distinct
// other voters fetched in it.
func (d *Driver) countCheckQuorum(now time.Time, id NodeID) {
	l := d.asLeader()
	l.fetchedVoters[id] = true
	need := d.voters.Majority()
	if d.isVoter {
		need--
	}
	if len(l.fetchedVoters) >= need {
		l.checkQuorum.reset(now, d.checkQuorumTimeout())
		clear(l.fetchedVoters)
	}
}

func (d *Driver) buildBeginQuorumEpoch(voter ReplicaKey) *kmsg.BeginQuorumEpochRequest {
	req := kmsg.NewPtrBeginQuorumEpochRequest()
	req.ClusterID = d.clusterIDPtr()
	req.VoterID = int32(voter.ID)
	t := kmsg.NewBeginQuorumEpochRequestTopic()
	t.Topic = d.cfg.TopicName
	p := kmsg.NewBeginQuorumEpochRequestTopicPartition()
	p.Partition = d.cfg.Partition
	p.VoterDirectoryID = voter.DirectoryID
	p.LeaderID = int32(d.self())
	p.LeaderEpoch = int32(d.epoch)
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	for _, e := range d.cfg.Endpoints {
		le := kmsg.NewBeginQuorumEpochRequestLeaderEndpoint()
		le.Name, le.Host, le.Port = e.Name, e.Host, uint16(e.Port)
		req.LeaderEndpoints = append(req.LeaderEndpoints, le)
	}
	return req
}

func (d *Driver) clusterIDPtr() *string {
	s := d.cfg.ClusterID
	return &s
}
