package raft

import (
	"time"

	"github.com/kraftd/kraftd/raft/quorum"
)

// unattachedState is an Unattached or Voted replica's.
type unattachedState struct {
	// election fires the next election; armed for voters only.
	election timer
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

// electionState is a Prospective's pre-vote or a Candidate's vote count.
type electionState struct {
	votes quorum.Votes[NodeID]
	// timeout ends the (pre-)vote: a Prospective falls back, a Candidate
	// backs off.
	timeout timer
	// backoff (Candidate only) is armed once the election is lost or timed
	// out; when it fires the next election starts.
	backoff timer
	// Prospective only: state to fall back to when the pre-vote fails.
	prevLeader NodeID
}

// prospective and candidate are the two roles an electionState serves.
type (
	prospective struct{ *electionState }
	candidate   struct{ *electionState }
)

// poll sends pre-votes; the timer expiring means the pre-vote failed.
func (p prospective) poll(d *Driver, now time.Time) {
	if p.timeout.expired(now) {
		d.lg.Info("pre-vote timed out", zapEpoch("epoch", d.epoch))
		d.loseElection(now)
		return
	}
	d.sendVotes(now, true)
}

// deadline: a pre-vote ends on its timer even while shutting down (the
// node then waits Unattached or follows).
func (p prospective) deadline(*Driver, time.Time) time.Time { return p.timeout.deadline }

// poll sends votes, and after a loss or timeout backs off, then tries
// again (through a pre-vote when enabled).
func (c candidate) poll(d *Driver, now time.Time) {
	switch {
	case d.shuttingDown:
		// Keep the current election going: winning lets it resign
		// cleanly, another leader ends the shutdown.
		d.sendVotes(now, false)
	case c.backoff.armed():
		if c.backoff.expired(now) {
			d.lg.Info("election backoff complete", zapEpoch("epoch", d.epoch))
			d.startElection(now)
		}
	case c.timeout.expired(now):
		d.loseElection(now)
	default:
		d.sendVotes(now, false)
	}
}

// deadline: while shutting down the election only runs to its end; once
// lost, only the backoff counts.
func (c candidate) deadline(d *Driver, _ time.Time) time.Time {
	switch {
	case d.shuttingDown:
		return time.Time{}
	case c.backoff.armed():
		return c.backoff.deadline
	}
	return c.timeout.deadline
}

// sendVotes sends (pre-)Vote requests to voters whose answer is not yet
// recorded, as long as the election can still be won.
func (d *Driver) sendVotes(now time.Time, preVote bool) {
	e := d.election
	if d.electionResult() == quorum.VoteLost {
		return
	}
	for _, v := range d.voters.Nodes() {
		id := v.Key.ID
		if id == d.self() || e.votes.Answered(id) || !d.reqs.Ready(id, now) {
			continue
		}
		d.send(now, id, d.buildVote(v.Key, preVote), preVote)
	}
}

// resignedState is a former leader's, in the epoch it led.
type resignedState struct {
	preferred []int32         // other voters, most caught up first
	unacked   map[NodeID]bool // voters that have not acknowledged EndQuorumEpoch
	// election moves the node on to a new epoch.
	election timer
}

// poll sends EndQuorumEpoch until acknowledged; when the election timer
// expires the node moves on to a new epoch.
func (r *resignedState) poll(d *Driver, now time.Time) {
	for _, v := range d.voters.Nodes() {
		if id := v.Key.ID; r.unacked[id] && d.reqs.Ready(id, now) {
			d.send(now, id, d.buildEndQuorumEpoch(), false)
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
