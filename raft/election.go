package raft

import (
	"time"

	"go.uber.org/zap"
)

// pollUnattached: a voter starts an election when its timer expires (not
// while shutting down). Until then it looks for the leader with a Fetch to
// a random voter (bootstrap server), as Kafka 4.x voters and all observers
// do, so a restarted voter finds an existing leader without an election.
func (d *Driver) pollUnattached(now time.Time) {
	if d.isVoter && !d.shuttingDown && !d.electionDeadline.IsZero() && !now.Before(d.electionDeadline) {
		d.startElection(now)
		return
	}
	d.maybeSendAnyVoterFetch(now)
}

// pollProspective sends pre-votes; the timer expiring means the pre-vote
// failed.
func (d *Driver) pollProspective(now time.Time) {
	if !now.Before(d.electionDeadline) {
		d.lg.Info("pre-vote timed out", zap.Int32("epoch", d.epoch))
		d.loseElection(now)
		return
	}
	d.sendVotes(now, true)
}

// pollCandidate sends votes, and after a loss or timeout backs off, then
// tries again (through a pre-vote when enabled).
func (d *Driver) pollCandidate(now time.Time) {
	e := d.election
	switch {
	case d.shuttingDown:
		// Keep the current election going: winning lets it resign
		// cleanly, another leader ends the shutdown.
		d.sendVotes(now, false)
	case !e.backoffDeadline.IsZero():
		if !now.Before(e.backoffDeadline) {
			d.lg.Info("election backoff complete", zap.Int32("epoch", d.epoch))
			d.startElection(now)
		}
	case !now.Before(d.electionDeadline):
		d.loseElection(now)
	default:
		d.sendVotes(now, false)
	}
}

// sendVotes sends (pre-)Vote requests to voters whose answer is not yet
// recorded, as long as the election can still be won.
func (d *Driver) sendVotes(now time.Time, preVote bool) {
	e := d.election
	if len(e.rejected) > len(d.voters)-d.majority {
		return
	}
	for _, v := range d.voters {
		if v.ID == d.cfg.NodeID || e.granted[v.ID] || e.rejected[v.ID] || !d.reqs.ready(v.ID, now) {
			continue
		}
		d.send(now, v.ID, apiVote, d.buildVote(v, preVote), preVote)
	}
}

// pollResigned sends EndQuorumEpoch until acknowledged; when the election
// timer expires the node moves on to a new epoch.
func (d *Driver) pollResigned(now time.Time) {
	r := d.resigned
	for _, v := range d.voters {
		if id := v.ID; r.unacked[id] && d.reqs.ready(id, now) {
			d.send(now, id, apiEndQuorumEpoch, d.buildEndQuorumEpoch(), false)
		}
	}
	if d.shuttingDown || now.Before(d.electionDeadline) {
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

// maybeSendAnyVoterFetch sends a Fetch to a random ready bootstrap server
// (or voter) to discover the leader.
func (d *Driver) maybeSendAnyVoterFetch(now time.Time) {
	if d.reqs.fetchInFlight() {
		return
	}
	var cands []int32
	if len(d.cfg.Bootstrap) > 0 {
		for i := range d.cfg.Bootstrap {
			if id := int32(-2 - i); d.reqs.ready(id, now) {
				cands = append(cands, id)
			}
		}
	} else {
		for _, v := range d.voters {
			if v.ID != d.cfg.NodeID && d.reqs.ready(v.ID, now) {
				cands = append(cands, v.ID)
			}
		}
	}
	if len(cands) == 0 {
		return
	}
	to := cands[d.rng.IntN(len(cands))]
	d.send(now, to, apiFetch, d.buildFetch(), false)
}
