// Package quorum is the majority arithmetic of a KRaft voter set, kept apart
// from the driver that uses it (as etcd-io/raft keeps its quorum package):
// how many voters make a majority, the offset a majority of voters has
// reached (the leader's candidate for its high watermark), and the outcome
// of a vote or pre-vote. It knows nothing of roles, logs or messages; the
// raft package decides what the numbers mean (the high watermark moves only
// above the epoch start, docs/design/state-machine.md 5.3).
package quorum

import (
	"cmp"
	"slices"
)

// Majority is how many of n voters make a majority: floor(n/2)+1.
func Majority(n int) int { return n/2 + 1 }

// MajorityOffset returns the largest offset that a majority of the given
// end offsets have reached (-1 = unknown): the value at index floor(n/2)
// when they are sorted descending. ok is false when there are none or that
// value is unknown. It sorts offsets in place, so a caller can reuse one
// slice without allocating.
func MajorityOffset(offsets []int64) (offset int64, ok bool) {
	if len(offsets) == 0 {
		return 0, false
	}
	// Insertion sort, descending: voter sets are small.
	for i := 1; i < len(offsets); i++ {
		for j := i; j > 0 && offsets[j] > offsets[j-1]; j-- {
			offsets[j], offsets[j-1] = offsets[j-1], offsets[j]
		}
	}
	v := offsets[len(offsets)/2]
	return v, v >= 0
}

// VoteResult is where an election stands.
type VoteResult int

const (
	// VotePending: neither a majority granted nor one is out of reach.
	VotePending VoteResult = iota
	// VoteWon: a majority of the voters granted.
	VoteWon
	// VoteLost: so many voters refused that a majority is out of reach.
	VoteLost
)

func (r VoteResult) String() string {
	switch r {
	case VoteWon:
		return "won"
	case VoteLost:
		return "lost"
	}
	return "pending"
}

// Votes is the tally of one election (a vote or a pre-vote): each node's
// answer, the first one it gave. The zero value is an empty tally.
type Votes[ID cmp.Ordered] struct {
	answers map[ID]bool // granted, by node
}

// Record notes id's answer; a later answer from the same node is ignored.
func (v *Votes[ID]) Record(id ID, granted bool) {
	if v.answers == nil {
		v.answers = map[ID]bool{}
	}
	if _, ok := v.answers[id]; !ok {
		v.answers[id] = granted
	}
}

// Answered reports whether id's answer is recorded.
func (v *Votes[ID]) Answered(id ID) bool {
	_, ok := v.answers[id]
	return ok
}

// Granted lists the nodes that granted, in ascending order.
func (v *Votes[ID]) Granted() []ID {
	out := make([]ID, 0, len(v.answers))
	for id, ok := range v.answers {
		if ok {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// Result is the election's outcome among n voters, isVoter telling which
// nodes they are: answers of other nodes do not count (the voter set may
// have changed since they were asked).
func (v *Votes[ID]) Result(n int, isVoter func(ID) bool) VoteResult {
	granted, refused := 0, 0
	for id, ok := range v.answers {
		switch {
		case !isVoter(id):
		case ok:
			granted++
		default:
			refused++
		}
	}
	majority := Majority(n)
	switch {
	case granted >= majority:
		return VoteWon
	case refused > n-majority:
		return VoteLost
	}
	return VotePending
}
