package raft

import (
	"errors"
	"time"

	"go.uber.org/zap"
)

// followerState is a Follower's, for the epoch of the leader it follows.
type followerState struct {
	// fetch is reset by every successful Fetch/FetchSnapshot answer; when
	// it expires a voter starts an election and an observer looks for the
	// leader through the bootstrap servers.
	fetch timer
	// updateVoter: each time it expires a voter whose recorded endpoints
	// or kraft.version range are stale sends UpdateRaftVoter instead of a
	// Fetch (Kafka 4.4: every fetch.timeout).
	updateVoter timer
	// pace holds the next Fetch while records arrive fast
	// (Config.FetchPace); lastRecords is when the last answer with records
	// came (zero before the first).
	pace        timer
	lastRecords time.Time
	hasFetched  bool      // a successful Fetch/FetchSnapshot response arrived in this epoch
	lastFetched time.Time // when the last one did
	leaderHW    int64     // the HW in the leader's last Fetch answer, -1 before it
	// updatedLeader: at kraft.version 0, this epoch's leader took this
	// voter's UpdateRaftVoter.
	updatedLeader bool
	// snapshot is non-nil while a snapshot is being downloaded; regular
	// fetches pause meanwhile.
	snapshot SnapshotWriter
}

// newFollowerState enters Follower of the leader in d.leaderID.
func (d *Driver) newFollowerState(now time.Time) *followerState {
	d.retries = 0
	f := &followerState{leaderHW: -1}
	f.fetch.reset(now, d.fetchTimeout())
	f.updateVoter.reset(now, d.cfg.FetchTimeout)
	return f
}

func (*followerState) role() Role     { return RoleFollower }
func (*followerState) ledEpoch() bool { return false }

// canGrantVote: a pre-vote only once its leader went silent (leaderHeard);
// no standard vote while it has a leader.
func (f *followerState) canGrantVote(d *Driver, now time.Time, preVote bool) bool {
	return preVote && !f.leaderHeard(d, now)
}

func (f *followerState) postponeElection(d *Driver, now time.Time) {
	f.fetch.reset(now, d.cfg.FetchTimeout)
	f.updateVoter.reset(now, d.cfg.FetchTimeout)
}

// leaderResigned: the leader this node follows resigned (EndQuorumEpoch)
// naming preferred, its successors in order. The fetch timer is shortened
// to this node's position backoff, and the leader counts as silent, so
// pre-votes of up-to-date peers are granted (docs/design/state-machine.md
// 4.5).
func (f *followerState) leaderResigned(d *Driver, now time.Time, preferred []int32) {
	b := d.endQuorumBackoff(preferred)
	f.fetch.shorten(now, b)
	f.hasFetched = false
	d.remoteLg.Info("leader resigned; election timer shortened", zapNode("leader", d.leaderID),
		zapEpoch("epoch", d.epoch), zap.Duration("backoff", b))
}

// leaderUnreachable: a Fetch or FetchSnapshot to the leader failed in the
// transport. The leader counts as silent (pre-votes of up-to-date peers are
// granted until an answer comes): when the leader process dies, every
// follower's long-poll fails at once, and the first to start its pre-vote
// finds the others willing. A voter whose leader's address refused the
// connection also shortens its fetch timer as if the leader had resigned
// naming the other voters in id order, so one of them starts the election
// at once and the next only after a backoff (no split vote); at most once
// per fetch timeout.
func (f *followerState) leaderUnreachable(d *Driver, now time.Time, err error) {
	f.hasFetched = false
	if !d.isVoter || d.shuttingDown || !errors.Is(err, ErrConnectionRefused) ||
		!d.refusedAt.IsZero() && now.Sub(d.refusedAt) < d.cfg.FetchTimeout {
		return
	}
	d.refusedAt = now
	successors := make([]int32, 0, d.voters.Len())
	for _, v := range d.voters.Nodes() {
		if v.Key.ID != d.leaderID {
			successors = append(successors, int32(v.Key.ID))
		}
	}
	b := d.endQuorumBackoff(successors)
	f.fetch.shorten(now, b)
	d.lg.Info("leader refused the connection; election timer shortened", zapNode("leader", d.leaderID),
		zapEpoch("epoch", d.epoch), zap.Duration("backoff", b))
}

// exit drops a snapshot download in progress.
func (f *followerState) exit(*Driver) {
	if f.snapshot != nil {
		_ = f.snapshot.Close()
	}
}

// poll: a voter whose fetch timer expired starts an election (never while
// shutting down); otherwise fetch (or download the snapshot) from the
// leader. Observers fall back to the bootstrap servers while requests to
// the leader back off.
func (f *followerState) poll(d *Driver, now time.Time) {
	if d.isVoter {
		switch {
		case d.shuttingDown:
		case f.fetch.expired(now):
			d.lg.Info("fetch timeout expired; starting an election", zapNode("leader", d.leaderID), zapEpoch("epoch", d.epoch))
			d.startElection(now)
		case f.updateVoter.expired(now) && !d.fetchInFlight():
			// Checked between fetches: with a long-poll Fetch almost always
			// in flight, Kafka's check at the timer's expiry rarely finds
			// the leader free.
			f.updateVoter.reset(now, d.cfg.FetchTimeout)
			if !d.maybeSendUpdateVoter(now) {
				d.maybeSendFetch(now, f)
			}
		default:
			d.maybeSendFetch(now, f)
		}
		return
	}
	// As Kafka 4.4's maybeSendFetchToBestNode: the fetch timer plays no
	// part for an observer (a bootstrap server naming the same leader
	// would not reset it, and the observer would never fetch from a
	// leader outside the bootstrap servers again); a failed request to
	// the leader backs off, and then a bootstrap server is asked.
	switch {
	case d.reqs.BackingOff(d.leaderID, now):
		d.maybeSendAnyVoterFetch(now)
	case d.maybeAutoJoin(now, f):
	case !d.reqs.AnyInFlight():
		d.maybeSendFetch(now, f)
	}
}

// deadline: a voter's fetch timer, and the update period of a voter or an
// auto-joining observer; an observer acts on no fetch timer.
func (f *followerState) deadline(d *Driver, now time.Time) time.Time {
	if d.shuttingDown {
		return time.Time{}
	}
	var update time.Time
	if (d.isVoter || d.cfg.AutoJoin) && f.updateVoter.deadline.After(now) {
		update = f.updateVoter.deadline
	}
	if !d.isVoter {
		return earliest(update, f.paceDeadline(now))
	}
	return earliest(f.fetch.deadline, update, f.paceDeadline(now))
}

// maybePace holds the next Fetch for Config.FetchPace when an answer of n
// bytes of records shows them arriving at FetchPaceRate or faster. A
// follower still below the leader's high watermark (catching up, its
// answers cut at the leader's read limit) fetches at once.
func (f *followerState) maybePace(d *Driver, now time.Time, n int, leaderHW int64) {
	if d.cfg.FetchPace > 0 && !f.lastRecords.IsZero() && d.log.EndOffset().Offset >= leaderHW {
		span := max(now.Sub(f.lastRecords), d.cfg.FetchPace)
		if float64(n) >= float64(d.cfg.FetchPaceRate)*span.Seconds() {
			f.pace.reset(now, d.cfg.FetchPace)
		}
	}
	f.lastRecords = now
}

// paceDeadline is when a paced fetch may go, zero when none is held.
func (f *followerState) paceDeadline(now time.Time) time.Time {
	if f.pace.armed() && !f.pace.expired(now) {
		return f.pace.deadline
	}
	return time.Time{}
}

func (d *Driver) maybeSendFetch(now time.Time, f *followerState) {
	if d.fetchInFlight() || !d.reqs.Ready(d.leaderID, now) || !f.paceDeadline(now).IsZero() {
		return
	}
	if f.snapshot != nil {
		d.send(now, d.leaderID, d.buildFetchSnapshot(f.snapshot), false)
		return
	}
	d.send(now, d.leaderID, d.buildFetch(), false)
}

// fetched records a successful Fetch or FetchSnapshot answer from the leader.
func (f *followerState) fetched(d *Driver, now time.Time) {
	f.hasFetched, f.lastFetched = true, now
	f.fetch.reset(now, d.fetchTimeout())
}

// leaderHeard reports whether this follower counts its leader as alive when asked for a
// pre-vote (Kafka: it has fetched from the leader in this epoch). A deferring follower
// waits longer than others before its own candidacy (deferral.go), but judges the leader
// by the plain fetch timeout, as the voters it defers to do: else it would refuse their
// pre-votes and win the election it defers.
func (f *followerState) leaderHeard(d *Driver, now time.Time) bool {
	return f.hasFetched && (d.deferDelay() == 0 || now.Sub(f.lastFetched) < d.cfg.FetchTimeout)
}
