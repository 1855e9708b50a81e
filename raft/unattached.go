package raft

import (
	"time"
)

// unattachedState is an Unattached or Voted replica's: it knows no leader
// for its epoch and waits for one, or for its election timer.
type unattachedState struct {
	voted bool // Voted: a vote is cast in the epoch
	// election fires the next election; armed for voters only.
	election timer
}

// newUnattachedState enters Unattached, or Voted when voted.
func (d *Driver) newUnattachedState(now time.Time, voted bool) *unattachedState {
	u := &unattachedState{voted: voted}
	if d.isVoter {
		u.election.reset(now, d.electionTimeout())
	}
	if d.leaderID >= 0 {
		d.retries = 0
	}
	return u
}

func (u *unattachedState) role() Role {
	if u.voted {
		return RoleVoted
	}
	return RoleUnattached
}

func (u *unattachedState) exit(*Driver) {}

// canGrantVote: an up-to-date pre-vote, and the epoch's one vote.
func (*unattachedState) canGrantVote(*Driver, time.Time, bool) bool { return true }

func (*unattachedState) ledEpoch() bool { return false }

func (u *unattachedState) postponeElection(d *Driver, now time.Time) {
	u.election.reset(now, d.cfg.FetchTimeout)
}

// membershipChanged: only voters run an election timer (Kafka's
// pollUnattachedAsVoter): it stops when this node leaves the voter set and
// starts afresh when it joins.
func (u *unattachedState) membershipChanged(d *Driver, now time.Time) {
	u.election = timer{}
	if d.isVoter {
		u.election.reset(now, d.electionTimeout())
	}
}

// poll: a voter starts an election when its timer expires (not while
// shutting down). Until then it looks for the leader with a Fetch to a
// random voter (bootstrap server), as Kafka 4.x voters and all observers
// do, so a restarted voter finds an existing leader without an election.
func (u *unattachedState) poll(d *Driver, now time.Time) {
	if u.election.expired(now) && !d.shuttingDown {
		d.startElection(now)
		return
	}
	d.maybeSendAnyVoterFetch(now)
}

// deadline: no election starts while shutting down.
func (u *unattachedState) deadline(d *Driver, _ time.Time) time.Time {
	if d.shuttingDown {
		return time.Time{}
	}
	return u.election.deadline
}

// maybeSendAnyVoterFetch sends a Fetch to a random ready bootstrap server
// (or voter) to discover the leader.
func (d *Driver) maybeSendAnyVoterFetch(now time.Time) {
	if d.fetchInFlight() {
		return
	}
	var cands []NodeID
	if len(d.cfg.Bootstrap) > 0 {
		for i := range d.cfg.Bootstrap {
			if id := NodeID(-2 - i); d.reqs.Ready(id, now) {
				cands = append(cands, id)
			}
		}
	} else {
		for _, v := range d.voters.Nodes() {
			if v.Key.ID != d.self() && d.reqs.Ready(v.Key.ID, now) {
				cands = append(cands, v.Key.ID)
			}
		}
	}
	if len(cands) == 0 {
		return
	}
	to := cands[d.rng.IntN(len(cands))]
	d.send(now, to, d.buildFetch(), false)
}
