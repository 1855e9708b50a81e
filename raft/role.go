package raft

import (
	"fmt"
	"time"
)

// Role is a replica's state in the KRaft state machine (see doc.go).
type Role int

const (
	// RoleUnattached: no leader known for the epoch, no vote cast.
	RoleUnattached Role = iota
	// RoleVoted: Unattached with a vote cast in the epoch.
	RoleVoted
	// RoleProspective: collecting pre-votes (KIP-996), nothing persisted.
	RoleProspective
	// RoleCandidate: voted for itself in the epoch, collecting votes.
	RoleCandidate
	// RoleLeader: won the epoch.
	RoleLeader
	// RoleFollower: knows the epoch's leader and fetches from it.
	RoleFollower
	// RoleResigned: former leader of the epoch, sending EndQuorumEpoch.
	RoleResigned
)

func (r Role) String() string {
	switch r {
	case RoleUnattached:
		return "Unattached"
	case RoleVoted:
		return "Voted"
	case RoleProspective:
		return "Prospective"
	case RoleCandidate:
		return "Candidate"
	case RoleLeader:
		return "Leader"
	case RoleFollower:
		return "Follower"
	case RoleResigned:
		return "Resigned"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// roleState is the current role's own state, timers included, and the
// decisions that differ by role: each role decides what its timers do and
// which of them the caller must wake for, which votes it may grant, and
// whether it led its epoch. The Driver holds exactly one (Driver.state),
// created by enter with its timers armed when the node takes the role
// (transition.go) and told by exit when it leaves. One type per role, in
// its own file: unattachedState (Unattached and Voted, unattached.go),
// prospectiveState and candidateState (election.go), leaderState
// (leader.go), followerState (follower.go) and resignedState
// (resigned.go). A behaviour that depends on the role is a method here,
// answered in each of those files; what only one role has (the leader's
// replica tracking, the follower's snapshot download) is reached through
// asLeader, asFollower or a type assertion.
type roleState interface {
	// role is the Role the state serves.
	role() Role
	// poll acts on the role's expired timers and sends what is ready. It
	// may change the role.
	poll(d *Driver, now time.Time)
	// deadline is when poll next has work to do, zero if never. It names
	// only timers the role acts on in its current state (not, say, an
	// election timer while shutting down): an ignored, expired deadline
	// would make the caller poll in a busy loop. It is asked at the end of
	// every round, not returned by poll, because the leader's flush and
	// the listeners run after poll and may move timers (a parked fetch
	// resets check quorum, an Append starts the linger).
	deadline(d *Driver, now time.Time) time.Time
	// exit releases what the role holds as the node leaves it. The
	// quorum-state fields already hold the next role's epoch, leader and
	// vote; the state is still the Driver's current one.
	exit(d *Driver)
	// canGrantVote reports whether the role grants a pre-vote (preVote)
	// to a candidate whose log is at least as up to date as this node's,
	// or whether it may cast its epoch's standard vote at all
	// (docs/design/state-machine.md 4.3); the rules of the vote itself (one
	// per epoch, none once a leader is known) come after it.
	canGrantVote(d *Driver, now time.Time, preVote bool) bool
	// ledEpoch reports whether this node leads, or led, the current epoch
	// (Leader, Resigned): a message naming another leader for it, or
	// naming this node leader of another epoch, is refused.
	ledEpoch() bool
	// postponeElection re-arms, a fetch timeout later, the timer that
	// would start an election: the epoch is at MaxEpoch and none can
	// start (epochExhausted).
	postponeElection(d *Driver, now time.Time)
}

// role is the node's current role.
func (d *Driver) role() Role { return d.state.role() }

// asLeader is the leader's state while this node leads, else nil.
func (d *Driver) asLeader() *leaderState {
	l, _ := d.state.(*leaderState)
	return l
}

// asFollower is the follower's state while this node follows, else nil.
func (d *Driver) asFollower() *followerState {
	f, _ := d.state.(*followerState)
	return f
}
