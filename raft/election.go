package raft

import (
	"time"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/raft/quorum"
)

// election is the role of a node collecting votes: a Prospective's
// pre-vote or a Candidate's vote.
type election interface {
	roleState
	// tally is the election's count and timer.
	tally() *electionState
	// preVote: the election is a pre-vote (its Vote requests and answers
	// carry PreVote=true).
	preVote() bool
	// backingOff: the election is over and nothing counts until the next.
	backingOff() bool
	// won acts on a majority of grants.
	won(d *Driver, now time.Time)
	// lost acts on a majority out of reach, or on the timeout.
	lost(d *Driver, now time.Time)
}

// electionState is what Prospective and Candidate share: the answers and
// the timer of one (pre-)vote.
type electionState struct {
	votes quorum.Votes[NodeID]
	// timeout ends the (pre-)vote: a Prospective falls back, a Candidate
	// backs off.
	timeout timer
}

func (e *electionState) tally() *electionState { return e }

// result counts the answers against the voter set in force: answers of
// nodes the set no longer holds do not count.
func (e *electionState) result(d *Driver) quorum.VoteResult {
	return e.votes.Result(d.voters.Len(), d.voters.ContainsID)
}

// sendVotes sends (pre-)Vote requests to voters whose answer is not yet
// recorded, as long as the election can still be won.
func (e *electionState) sendVotes(d *Driver, now time.Time, preVote bool) {
	if e.result(d) == quorum.VoteLost {
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

// maybeWinElection checks the count after a grant (or at entry: a single
// voter wins at once).
func (d *Driver) maybeWinElection(now time.Time) {
	e, ok := d.state.(election)
	if !ok || e.backingOff() {
		return
	}
	switch e.tally().result(d) {
	case quorum.VoteWon:
		e.won(d, now)
	case quorum.VoteLost:
		e.lost(d, now)
	}
}

// prospectiveState is a Prospective's: a pre-vote (KIP-996) in the current
// epoch, kept in memory only.
type prospectiveState struct {
	electionState
	// prevLeader is the leader this node followed before, to follow again
	// when the pre-vote fails; -1 when none.
	prevLeader NodeID
}

// newProspectiveState enters Prospective: the node counts itself when it
// is a voter.
func (d *Driver) newProspectiveState(now time.Time) *prospectiveState {
	p := &prospectiveState{prevLeader: d.leaderID}
	if d.isVoter {
		p.votes.Record(d.self(), true)
	}
	p.timeout.reset(now, d.randomElectionTimeout())
	return p
}

func (*prospectiveState) role() Role       { return RoleProspective }
func (*prospectiveState) exit(*Driver)     {}
func (*prospectiveState) preVote() bool    { return true }
func (*prospectiveState) backingOff() bool { return false }
func (*prospectiveState) ledEpoch() bool   { return false }

// canGrantVote: an up-to-date pre-vote, and the epoch's one vote (the role
// stays Prospective, with the vote recorded: grantVote).
func (*prospectiveState) canGrantVote(*Driver, time.Time, bool) bool { return true }

// postponeElection: nothing to re-arm; a Prospective never starts an
// election, its pre-vote ends on its own timer.
func (*prospectiveState) postponeElection(*Driver, time.Time) {}

// poll sends pre-votes; the timer expiring means the pre-vote failed.
func (p *prospectiveState) poll(d *Driver, now time.Time) {
	if p.timeout.expired(now) {
		d.lg.Info("pre-vote timed out", zapEpoch("epoch", d.epoch))
		p.lost(d, now)
		return
	}
	p.sendVotes(d, now, true)
}

// deadline: a pre-vote ends on its timer even while shutting down (the
// node then waits Unattached or follows).
func (p *prospectiveState) deadline(*Driver, time.Time) time.Time { return p.timeout.deadline }

// won: the real election follows, in the next epoch.
func (p *prospectiveState) won(d *Driver, now time.Time) { d.becomeCandidate(now) }

// lost: back to following the leader the node had, else to Unattached or
// Voted in the same epoch, its vote kept.
func (p *prospectiveState) lost(d *Driver, now time.Time) {
	if prev := p.prevLeader; prev >= 0 && prev != d.self() {
		d.transition(now, RoleFollower, d.epoch, prev, d.votedID, d.votedDir, true)
		return
	}
	role := RoleUnattached
	if d.votedID >= 0 {
		role = RoleVoted
	}
	d.transition(now, role, d.epoch, -1, d.votedID, d.votedDir, true)
}

// candidateState is a Candidate's: it voted for itself in its epoch.
type candidateState struct {
	electionState
	// backoff is armed once the election is lost or timed out; when it
	// fires the next election starts.
	backoff timer
}

// newCandidateState enters Candidate: its own vote counts at once.
func (d *Driver) newCandidateState(now time.Time) *candidateState {
	d.retries++
	c := &candidateState{}
	c.votes.Record(d.self(), true)
	c.timeout.reset(now, d.randomElectionTimeout())
	return c
}

func (*candidateState) role() Role         { return RoleCandidate }
func (*candidateState) exit(*Driver)       {}
func (*candidateState) preVote() bool      { return false }
func (c *candidateState) backingOff() bool { return c.backoff.armed() }
func (*candidateState) ledEpoch() bool     { return false }

// canGrantVote: an up-to-date pre-vote; its standard vote went to itself.
func (*candidateState) canGrantVote(_ *Driver, _ time.Time, preVote bool) bool { return preVote }

func (c *candidateState) postponeElection(d *Driver, now time.Time) {
	c.backoff.reset(now, d.cfg.FetchTimeout)
}

// poll sends votes, and after a loss or timeout backs off, then tries
// again (through a pre-vote when enabled).
func (c *candidateState) poll(d *Driver, now time.Time) {
	switch {
	case d.shuttingDown:
		// Keep the current election going: winning lets it resign
		// cleanly, another leader ends the shutdown.
		c.sendVotes(d, now, false)
	case c.backoff.armed():
		if c.backoff.expired(now) {
			d.lg.Info("election backoff complete", zapEpoch("epoch", d.epoch))
			d.startElection(now)
		}
	case c.timeout.expired(now):
		c.lost(d, now)
	default:
		c.sendVotes(d, now, false)
	}
}

// deadline: while shutting down the election only runs to its end; once
// lost, only the backoff counts.
func (c *candidateState) deadline(d *Driver, _ time.Time) time.Time {
	switch {
	case d.shuttingDown:
		return time.Time{}
	case c.backoff.armed():
		return c.backoff.deadline
	}
	return c.timeout.deadline
}

// won: the node leads the epoch.
func (c *candidateState) won(d *Driver, now time.Time) {
	d.becomeLeader(now, nodeIDs(c.votes.Granted()))
}

// lost: back off (docs/design/state-machine.md 4.4), then try again.
func (c *candidateState) lost(d *Driver, now time.Time) {
	b := d.electionBackoff() + d.deferDelay()
	c.backoff.reset(now, b)
	d.lg.Info("election lost or timed out; backing off", zapEpoch("epoch", d.epoch), zap.Duration("backoff", b))
}
