package raft

import (
	"time"

	"github.com/kraftd/kraftd/raft/quorum"
)

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
