package raft

import (
	"time"
)

// resignedState is a former leader's, in the epoch it led.
type resignedState struct {
	preferred []int32         // other voters, most caught up first
	unacked   map[NodeID]bool // voters that have not acknowledged EndQuorumEpoch
	// election moves the node on to a new epoch.
	election timer
}

// newResignedState enters Resigned. The successor order is the resigning
// leader's to set (becomeResigned); a node restarted as Resigned knows
// none.
func (d *Driver) newResignedState(now time.Time) *resignedState {
	r := &resignedState{unacked: map[NodeID]bool{}}
	r.election.reset(now, d.electionTimeout())
	for _, v := range d.voters.Nodes() {
		if v.Key.ID != d.self() {
			r.unacked[v.Key.ID] = true
		}
	}
	return r
}

func (*resignedState) role() Role     { return RoleResigned }
func (*resignedState) exit(*Driver)   {}
func (*resignedState) ledEpoch() bool { return true }

// canGrantVote: an up-to-date pre-vote; no standard vote in the epoch it
// led.
func (*resignedState) canGrantVote(_ *Driver, _ time.Time, preVote bool) bool { return preVote }

func (r *resignedState) postponeElection(d *Driver, now time.Time) {
	r.election.reset(now, d.cfg.FetchTimeout)
}

// poll sends EndQuorumEpoch until acknowledged; when the election timer
// expires the node moves on to a new epoch.
func (r *resignedState) poll(d *Driver, now time.Time) {
	for _, v := range d.voters.Nodes() {
		if id := v.Key.ID; r.unacked[id] && d.reqs.Ready(id, now) {
			d.send(now, id, d.buildEndQuorumEpoch(r.preferred), false)
		}
	}
	if d.shuttingDown || !r.election.expired(now) || d.epochExhausted(now) {
		return
	}
	switch {
	case d.isVoter && !d.cfg.PreVote:
		d.becomeCandidate(now)
	default:
		// A bumped epoch keeps Fetch answers from naming this node as
		// leader; with pre-vote the next election starts from there.
		d.becomeUnattached(now, d.epoch+1)
	}
}

// deadline: a node shutting down stays Resigned until another leader
// appears or the shutdown times out.
func (r *resignedState) deadline(d *Driver, _ time.Time) time.Time {
	if d.shuttingDown {
		return time.Time{}
	}
	return r.election.deadline
}
