package raft

import "fmt"

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
