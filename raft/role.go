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

// roleState is the current role's own state, timers included: each role
// decides what its timers do and which of them the caller must wake for.
type roleState interface {
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
}
