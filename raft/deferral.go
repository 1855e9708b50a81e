package raft

// Leadership deferral (Config.DeferLeadership). In a metadata quorum only
// some voters can be the active controller: Kafka's controllers run the
// QuorumController over the log, kraftd only replicates it. A deferring
// node that is not itself preferred (SetPreferredLeaders) steps aside for
// the preferred voters:
//
//   - as leader, once its epoch's LeaderChange record is committed and a
//     preferred voter of the set in force has fetched up to the log end
//     within the fetch timeout (its log is as up to date as any, so it can
//     win the vote; it is alive), it resigns gracefully, naming the
//     caught-up preferred voters first as successors;
//   - in every other role its election delays (election timer, fetch
//     timer, election backoff, EndQuorumEpoch position) grow by one full
//     election timeout, so a preferred voter times out and wins first.
//
// With no preferred voter in the set, or none caught up a fetch timeout
// into its epoch, it leads as usual and says so once per epoch. Votes are granted exactly as before: safety is unchanged, and
// a deferring node still wins an election no preferred voter can. A
// preferred voter that catches up but cannot win (say, cut off from the
// other voters) makes the node resign and win again at most once per
// election timeout plus its deferral delay, and only while that voter keeps
// fetching: the quorum's log stays available between hand-overs.

import (
	"maps"
	"slices"
	"time"

	"go.uber.org/zap"
)

// SetPreferredLeaders tells the driver which nodes can act as the state
// machine's leader (for __cluster_metadata: Kafka controllers). It only
// matters with Config.DeferLeadership; a leader re-checks at once.
func (d *Driver) SetPreferredLeaders(now time.Time, ids []int32) error {
	if d.fatal != nil {
		return d.fatal
	}
	set := make(map[NodeID]bool, len(ids))
	for _, id := range ids {
		if id >= 0 {
			set[NodeID(id)] = true
		}
	}
	if maps.Equal(set, d.preferred) {
		return nil
	}
	d.preferred = set
	d.noPreferredReported = -1
	if d.cfg.DeferLeadership && !d.inRound {
		d.inRound = true
		defer func() { d.inRound = false }()
		d.pollState(now)
		d.endRound(now)
	}
	return d.fatal
}

// preferredOthers are the preferred voters of the set in force other than
// this node, in id order; nil when this node does not defer (deferral off,
// or this node is itself preferred).
func (d *Driver) preferredOthers() []NodeID {
	if !d.cfg.DeferLeadership || d.preferred[d.self()] {
		return nil
	}
	var out []NodeID
	for _, id := range d.voters.IDs() {
		if NodeID(id) != d.self() && d.preferred[NodeID(id)] {
			out = append(out, NodeID(id))
		}
	}
	return out
}

// deferDelay is what a deferring node adds to each of its election delays:
// one full election timeout while a preferred voter could lead instead.
func (d *Driver) deferDelay() time.Duration {
	if len(d.preferredOthers()) == 0 {
		return 0
	}
	return d.cfg.ElectionTimeout
}

// electionTimeout is the randomized election timeout of a voter waiting
// for a leader, lengthened while deferring.
func (d *Driver) electionTimeout() time.Duration {
	return d.randomElectionTimeout() + d.deferDelay()
}

// maybeDeferLeadership (leader poll) asks for a graceful resignation when
// a preferred voter can take over, or logs once per epoch that none can.
func (d *Driver) maybeDeferLeadership(now time.Time) {
	l := d.asLeader()
	if !d.cfg.DeferLeadership || d.preferred[d.self()] || l.resignRequested || d.shuttingDown {
		return
	}
	others := d.preferredOthers()
	if len(others) == 0 {
		if d.noPreferredReported != d.epoch {
			d.noPreferredReported = d.epoch
			d.lg.Warn("leading the quorum: no voter that can act as the active controller is in the voter set; "+
				"the log stays available to fetchers, and leadership is handed over once such a voter catches up",
				zapEpoch("epoch", d.epoch), zap.Int32s("voters", d.voters.IDs()))
		}
		return
	}
	if l.highWatermark < 0 {
		return // this epoch's LeaderChange is not committed yet
	}
	ready := l.caughtUpAmong(others, d.log.EndOffset().Offset, now, d.cfg.FetchTimeout)
	if len(ready) == 0 {
		// A fetch timeout into the epoch the preferred voters are down
		// or cut off, not merely a fetch behind: say so once.
		if now.Sub(l.electedAt) >= d.cfg.FetchTimeout && d.noPreferredReported != d.epoch {
			d.noPreferredReported = d.epoch
			d.lg.Warn("leading the quorum: no voter that can act as the active controller has caught up within the fetch timeout; "+
				"the log stays available to fetchers, and leadership is handed over once one catches up",
				zapEpoch("epoch", d.epoch), zap.Int32s("controllers", nodeIDs(others)))
		}
		return
	}
	l.resignRequested = true
	l.deferTo = ready
	d.lg.Info("resigning to hand leadership to a voter that can act as the active controller",
		zapEpoch("epoch", d.epoch), zap.Int32("successor", int32(ready[0])),
		zap.Int64("logEndOffset", d.log.EndOffset().Offset))
}

// caughtUpAmong are the given voters that fetched up to leo within window,
// most caught up first (ties: lower id first).
func (l *leaderState) caughtUpAmong(ids []NodeID, leo int64, now time.Time, window time.Duration) []NodeID {
	var out []NodeID
	for _, id := range ids {
		if r := l.voters[id]; r != nil && r.endOffset >= leo && l.fetchedWithin(id, now, window) {
			out = append(out, id)
		}
	}
	slices.SortStableFunc(out, func(a, b NodeID) int {
		ea, eb := l.voters[a].endOffset, l.voters[b].endOffset
		switch {
		case ea > eb:
			return -1
		case ea < eb:
			return 1
		}
		return 0
	})
	return out
}

func nodeIDs(ids []NodeID) []int32 {
	out := make([]int32, len(ids))
	for i, id := range ids {
		out[i] = int32(id)
	}
	return out
}

// withFirst reorders successors so that first come first, in their order.
func withFirst(successors []int32, first []NodeID) []int32 {
	out := make([]int32, 0, len(successors))
	for _, id := range first {
		out = append(out, int32(id))
	}
	for _, id := range successors {
		if !slices.Contains(first, NodeID(id)) {
			out = append(out, id)
		}
	}
	return out
}

// fetchTimeout is how long a voter follows a silent leader before an
// election, lengthened while deferring.
func (d *Driver) fetchTimeout() time.Duration {
	return d.cfg.FetchTimeout + d.deferDelay()
}
