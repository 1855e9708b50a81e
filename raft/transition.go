package raft

import (
	"fmt"
	"time"

	"go.uber.org/zap"
)

// setState assigns the quorum-state fields without side effects.
func (d *Driver) setState(epoch Epoch, leader, voted NodeID, votedDir [16]byte) {
	d.epoch, d.leaderID, d.votedID, d.votedDir = epoch, leader, voted, votedDir
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
	from := d.role()
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
	from, fromEpoch := d.role(), d.epoch
	if !d.legalTransition(to, epoch) {
		panic(fmt.Sprintf("raft: invalid transition [%s epoch %d -> %s epoch %d] (leader %d, voted %d)",
			from, d.epoch, to, epoch, leader, voted))
	}
	if to == RoleFollower && leader == d.self() {
		panic(fmt.Sprintf("raft: invalid transition [%s -> Follower of itself, epoch %d]", from, epoch))
	}
	prev := struct {
		epoch         Epoch
		leader, voted NodeID
		votedDir      [16]byte
	}{d.epoch, d.leaderID, d.votedID, d.votedDir}
	d.setState(epoch, leader, voted, votedDir)
	if durable {
		if err := d.writeState(); err != nil {
			d.setState(prev.epoch, prev.leader, prev.voted, prev.votedDir)
			return
		}
	}
	// Every transition forgets in-flight requests, so late responses are
	// ignored.
	d.reqs.Reset()
	d.state.exit(d)
	d.enter(now, to)
	d.lg.Info("completed transition", zap.String("from", fmt.Sprintf("%s(epoch %d)", from, fromEpoch)),
		zap.String("to", fmt.Sprintf("%s(epoch %d)", to, epoch)), zapNode("leader", leader), zapNode("voted", voted))
}

// enter makes role the current one, its state created with its timers
// armed; the quorum-state fields already hold its epoch, leader and vote.
func (d *Driver) enter(now time.Time, role Role) {
	switch role {
	case RoleUnattached, RoleVoted:
		d.state = d.newUnattachedState(now, role == RoleVoted)
	case RoleProspective:
		d.state = d.newProspectiveState(now)
	case RoleCandidate:
		d.state = d.newCandidateState(now)
	case RoleLeader:
		d.state = d.newLeaderState(now, d.log.EndOffset().Offset)
	case RoleFollower:
		d.state = d.newFollowerState(now)
	case RoleResigned:
		d.state = d.newResignedState(now)
	default:
		panic(fmt.Sprintf("raft: enter unknown role %d", role))
	}
	d.noteRoleEntered(now)
}

// becomeUnattached moves to Unattached at a higher epoch (no leader, no vote).
func (d *Driver) becomeUnattached(now time.Time, epoch Epoch) {
	// The remaining time of a running election timer carries over.
	var carried timer
	switch s := d.state.(type) {
	case *unattachedState:
		carried = s.election
	case election:
		carried = s.tally().timeout
	}
	d.transition(now, RoleUnattached, epoch, -1, -1, [16]byte{}, true)
	if u, ok := d.state.(*unattachedState); ok && !u.voted && d.isVoter && carried.armed() {
		u.election = carried
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
		if !(epoch == d.epoch && d.state.ledEpoch()) {
			d.remoteLg.Error("refusing message naming this node leader of an epoch it does not lead",
				zap.String("source", source), zapEpoch("epoch", epoch), zap.Stringer("role", d.role()), zapEpoch("localEpoch", d.epoch))
		}
		return false
	}
	if epoch == d.epoch {
		switch {
		case d.state.ledEpoch():
			d.remoteLg.Error("refusing message naming another leader for this node's own epoch",
				zap.String("source", source), zapEpoch("epoch", epoch), zapNode("claimedLeader", leader))
			return false
		case d.leaderID >= 0 && d.leaderID != leader:
			d.remoteLg.Error("refusing message naming a second leader for the epoch",
				zap.String("source", source), zapEpoch("epoch", epoch), zapNode("knownLeader", d.leaderID),
				zapNode("claimedLeader", leader))
			return false
		case d.asFollower() != nil:
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
	if _, ok := d.state.(*prospectiveState); ok {
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
	d.state.postponeElection(d, now)
	return true
}

// becomeResigned: the leader steps down in its epoch (memory only).
func (d *Driver) becomeResigned(now time.Time) {
	l := d.asLeader()
	preferred := withFirst(l.preferredSuccessors(int32(d.self())), l.deferTo)
	d.transition(now, RoleResigned, d.epoch, d.self(), d.votedID, d.votedDir, false)
	d.state.(*resignedState).preferred = preferred
}
