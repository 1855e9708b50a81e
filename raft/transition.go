package raft

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/raft/quorum"
)

// setState assigns the quorum-state fields without side effects.
func (d *Driver) setState(role Role, epoch Epoch, leader, voted NodeID, votedDir [16]byte) {
	d.role, d.epoch, d.leaderID, d.votedID, d.votedDir = role, epoch, leader, voted, votedDir
}

// writeState persists the current quorum state. A failure is fatal.
func (d *Driver) writeState() error {
	st := ElectionState{
		Epoch:            int32(d.epoch),
		LeaderID:         int32(d.leaderID),
		VotedID:          int32(d.votedID),
		VotedDirectoryID: d.votedDir,
	}
	// data_version 0 (with currentVoters) at kraft.version 0, else 1.
	if d.kraftVersion() == 0 {
		st.Voters = d.voters.IDs()
	}
	if err := d.store.Write(st); err != nil {
		err = fmt.Errorf("raft: write quorum state (epoch %d, leader %d, voted %d): %w", st.Epoch, st.LeaderID, st.VotedID, err)
		d.fail(err)
		return err
	}
	return nil
}

// legalTransition reports whether from -> to is a transition Kafka's
// QuorumState allows (doc.go lists them); epoch is the target epoch.
func (d *Driver) legalTransition(to Role, epoch Epoch) bool {
	from := d.role
	if epoch < d.epoch {
		return false
	}
	higher := epoch > d.epoch
	switch to {
	case RoleUnattached:
		// Same epoch only for a failed pre-vote (Prospective) or at start.
		return higher || from == RoleProspective
	case RoleVoted:
		// Granting a vote, or a failed pre-vote falling back with its vote.
		return !higher && (from == RoleUnattached || from == RoleProspective)
	case RoleProspective:
		return !higher && (from == RoleUnattached || from == RoleVoted || from == RoleFollower ||
			from == RoleCandidate)
	case RoleCandidate:
		return epoch == d.epoch+1 && from != RoleLeader
	case RoleLeader:
		return from == RoleCandidate && !higher
	case RoleFollower:
		if higher {
			return true
		}
		return from != RoleLeader && from != RoleResigned
	case RoleResigned:
		return from == RoleLeader && !higher
	}
	return false
}

// transition moves to a new role. A durable transition writes the quorum
// state before the new role acts; impossible transitions panic (they are
// bugs, never the result of packet input, which callers validate first).
func (d *Driver) transition(now time.Time, to Role, epoch Epoch, leader, voted NodeID, votedDir [16]byte, durable bool) {
	if !d.legalTransition(to, epoch) {
		panic(fmt.Sprintf("raft: invalid transition [%s epoch %d -> %s epoch %d] (leader %d, voted %d)",
			d.role, d.epoch, to, epoch, leader, voted))
	}
	if to == RoleFollower && leader == d.self() {
		panic(fmt.Sprintf("raft: invalid transition [%s -> Follower of itself, epoch %d]", d.role, epoch))
	}
	from, fromEpoch := d.role, d.epoch
	prev := struct {
		role          Role
		epoch         Epoch
		leader, voted NodeID
		votedDir      [16]byte
	}{d.role, d.epoch, d.leaderID, d.votedID, d.votedDir}
	d.setState(to, epoch, leader, voted, votedDir)
	if durable {
		if err := d.writeState(); err != nil {
			d.setState(prev.role, prev.epoch, prev.leader, prev.voted, prev.votedDir)
			return
		}
	}
	d.exitRole(now, from, fromEpoch)
	d.enterRole(now, from)
	d.lg.Info("completed transition", zap.String("from", fmt.Sprintf("%s(epoch %d)", from, fromEpoch)),
		zap.String("to", fmt.Sprintf("%s(epoch %d)", to, epoch)), zapNode("leader", leader), zapNode("voted", voted))
}

// exitRole releases what the previous role held. Every transition forgets
// in-flight requests, so late responses are ignored.
func (d *Driver) exitRole(now time.Time, from Role, fromEpoch Epoch) {
	d.reqs.Reset()
	if d.leader != nil {
		// Parked fetches go back with NOT_LEADER_OR_FOLLOWER so followers
		// re-route at once; undrained appends are dropped.
		d.parked.CompleteAll(func(p *parkedFetch) {
			d.replyParkedError(p, kerr.NotLeaderForPartition.Code)
		})
		d.finishChange(errNotLeader, "")
		d.failUpgrades()
		d.leader = nil
	}
	if d.follower != nil && d.follower.snapshot != nil {
		_ = d.follower.snapshot.Close()
	}
	d.unattached, d.election, d.leader, d.follower, d.resigned = nil, nil, nil, nil, nil
	d.state = nil
}

// enterRole creates the new role's state and arms its timers.
func (d *Driver) enterRole(now time.Time, from Role) {
	switch d.role {
	case RoleUnattached, RoleVoted:
		d.unattached = &unattachedState{}
		if d.isVoter {
			d.unattached.election.reset(now, d.electionTimeout())
		}
		if d.leaderID >= 0 {
			d.retries = 0
		}
		d.state = d.unattached
	case RoleProspective:
		d.election = &electionState{prevLeader: d.leaderID}
		if d.isVoter {
			d.election.votes.Record(d.self(), true)
		}
		d.election.timeout.reset(now, d.randomElectionTimeout())
		d.state = prospective{d.election}
	case RoleCandidate:
		d.retries++
		d.election = &electionState{prevLeader: -1}
		d.election.votes.Record(d.self(), true)
		d.election.timeout.reset(now, d.randomElectionTimeout())
		d.state = candidate{d.election}
	case RoleLeader:
		d.retries = 0
		d.leader = d.newLeaderState(now, d.log.EndOffset().Offset)
		d.state = d.leader
	case RoleFollower:
		d.retries = 0
		d.follower = &followerState{leaderHW: -1}
		d.follower.fetch.reset(now, d.fetchTimeout())
		d.follower.updateVoter.reset(now, d.cfg.FetchTimeout)
		d.state = d.follower
	case RoleResigned:
		// Restarted as Resigned: no successor order is known.
		d.resigned = &resignedState{unacked: map[NodeID]bool{}}
		d.resigned.election.reset(now, d.electionTimeout())
		for _, v := range d.voters.Nodes() {
			if v.Key.ID != d.self() {
				d.resigned.unacked[v.Key.ID] = true
			}
		}
		d.state = d.resigned
	}
	d.noteRoleEntered(now)
}

// becomeUnattached moves to Unattached at a higher epoch (no leader, no vote).
func (d *Driver) becomeUnattached(now time.Time, epoch Epoch) {
	// The remaining time of a running election timer carries over.
	var carried timer
	switch {
	case d.unattached != nil:
		carried = d.unattached.election
	case d.election != nil:
		carried = d.election.timeout
	}
	d.transition(now, RoleUnattached, epoch, -1, -1, [16]byte{}, true)
	if d.role == RoleUnattached && d.isVoter && carried.armed() {
		d.unattached.election = carried
	}
}

// becomeFollower follows leader in epoch (callers checked the guards).
func (d *Driver) becomeFollower(now time.Time, epoch Epoch, leader NodeID) {
	voted, dir := NodeID(-1), [16]byte{}
	if epoch == d.epoch {
		voted, dir = d.votedID, d.votedDir // the vote stays recorded within the epoch
	}
	d.transition(now, RoleFollower, epoch, leader, voted, dir, true)
}

// maybeFollow applies a leader learned from a message, refusing anything
// that contradicts what this node knows (two leaders for one epoch, or this
// node named leader when it is not). Returns whether the state changed.
func (d *Driver) maybeFollow(now time.Time, epoch Epoch, leader NodeID, source string) bool {
	if leader < 0 || epoch < d.epoch {
		return false
	}
	if leader == d.self() {
		if !(epoch == d.epoch && (d.role == RoleLeader || d.role == RoleResigned)) {
			d.remoteLg.Error("refusing message naming this node leader of an epoch it does not lead",
				zap.String("source", source), zapEpoch("epoch", epoch), zap.Stringer("role", d.role), zapEpoch("localEpoch", d.epoch))
		}
		return false
	}
	if epoch == d.epoch {
		switch {
		case d.role == RoleLeader || d.role == RoleResigned:
			d.remoteLg.Error("refusing message naming another leader for this node's own epoch",
				zap.String("source", source), zapEpoch("epoch", epoch), zapNode("claimedLeader", leader))
			return false
		case d.leaderID >= 0 && d.leaderID != leader:
			d.remoteLg.Error("refusing message naming a second leader for the epoch",
				zap.String("source", source), zapEpoch("epoch", epoch), zapNode("knownLeader", d.leaderID),
				zapNode("claimedLeader", leader))
			return false
		case d.role == RoleFollower:
			return false // already following it
		}
	}
	d.becomeFollower(now, epoch, leader)
	return true
}

// observeEpoch applies epoch news without a leader: a higher epoch moves
// the node to Unattached.
func (d *Driver) observeEpoch(now time.Time, epoch Epoch) bool {
	if epoch <= d.epoch {
		return false
	}
	d.becomeUnattached(now, epoch)
	return true
}

// grantVote records a standard vote (durable before the answer leaves).
func (d *Driver) grantVote(now time.Time, candidate NodeID, dir [16]byte) bool {
	if d.role == RoleProspective {
		// Prospective+voted: the vote is persisted, the role stays.
		d.votedID, d.votedDir = candidate, dir
		if err := d.writeState(); err != nil {
			return false
		}
		return true
	}
	d.transition(now, RoleVoted, d.epoch, d.leaderID, candidate, dir, true)
	return d.fatal == nil
}

// becomeProspective starts a pre-vote in the current epoch (memory only).
func (d *Driver) becomeProspective(now time.Time) {
	d.transition(now, RoleProspective, d.epoch, d.leaderID, d.votedID, d.votedDir, false)
	d.maybeWinElection(now)
}

// becomeCandidate bumps the epoch and votes for itself (durable).
func (d *Driver) becomeCandidate(now time.Time) {
	d.transition(now, RoleCandidate, d.epoch+1, -1, d.self(), d.cfg.DirectoryID, true)
	if d.fatal == nil {
		d.maybeWinElection(now)
	}
}

// startElection is what an expired election or fetch timer does.
func (d *Driver) startElection(now time.Time) {
	if d.epochExhausted(now) {
		return
	}
	if d.cfg.PreVote {
		d.becomeProspective(now)
	} else {
		d.becomeCandidate(now)
	}
}

// epochExhausted reports whether the epoch is MaxEpoch, past which no
// election can go: the node then stays in its role (logged once, a fault
// of the quorum's history that an operator must see) and re-arms the
// timer that fired, so it looks again a fetch timeout later rather than in
// a busy loop.
func (d *Driver) epochExhausted(now time.Time) bool {
	if d.epoch < MaxEpoch {
		return false
	}
	if !d.maxEpochReported {
		d.maxEpochReported = true
		d.lg.Error("epoch is at its maximum; this node can never start an election", zapEpoch("epoch", d.epoch))
	}
	switch {
	case d.unattached != nil:
		d.unattached.election.reset(now, d.cfg.FetchTimeout)
	case d.election != nil:
		d.election.backoff.reset(now, d.cfg.FetchTimeout)
	case d.follower != nil:
		d.follower.fetch.reset(now, d.cfg.FetchTimeout)
		d.follower.updateVoter.reset(now, d.cfg.FetchTimeout)
	case d.resigned != nil:
		d.resigned.election.reset(now, d.cfg.FetchTimeout)
	}
	return true
}

// maybeWinElection checks the count after a grant (or at entry: a single
// voter wins at once).
func (d *Driver) maybeWinElection(now time.Time) {
	e := d.election
	if e == nil || e.backoff.armed() {
		return
	}
	switch d.electionResult() {
	case quorum.VoteWon:
		switch d.role {
		case RoleProspective:
			d.becomeCandidate(now)
		case RoleCandidate:
			d.becomeLeader(now)
		}
	case quorum.VoteLost:
		d.loseElection(now)
	}
}

// loseElection: a Candidate backs off; a Prospective falls back.
func (d *Driver) loseElection(now time.Time) {
	switch d.role {
	case RoleCandidate:
		b := d.electionBackoff() + d.deferDelay()
		d.election.backoff.reset(now, b)
		d.lg.Info("election lost or timed out; backing off", zapEpoch("epoch", d.epoch), zap.Duration("backoff", b))
	case RoleProspective:
		prev := d.election.prevLeader
		if prev >= 0 && prev != d.self() {
			d.transition(now, RoleFollower, d.epoch, prev, d.votedID, d.votedDir, true)
		} else {
			// Keep the vote of this epoch, if any.
			role := RoleUnattached
			if d.votedID >= 0 {
				role = RoleVoted
			}
			d.transition(now, role, d.epoch, -1, d.votedID, d.votedDir, true)
		}
	}
}

// becomeResigned: the leader steps down in its epoch (memory only).
func (d *Driver) becomeResigned(now time.Time) {
	preferred := withFirst(d.leader.preferredSuccessors(int32(d.self())), d.leader.deferTo)
	d.transition(now, RoleResigned, d.epoch, d.self(), d.votedID, d.votedDir, false)
	d.resigned.preferred = preferred
}

// electionResult counts the election's answers against the voter set in
// force: answers of nodes the set no longer holds do not count.
func (d *Driver) electionResult() quorum.VoteResult {
	return d.election.votes.Result(d.voters.Len(), d.voters.ContainsID)
}
