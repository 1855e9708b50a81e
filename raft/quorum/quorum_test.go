package quorum

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestMajority(t *testing.T) {
	for n, want := range []int{1, 1, 2, 2, 3, 3, 4} {
		if got := Majority(n); got != want {
			t.Errorf("Majority(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestMajorityOffset(t *testing.T) {
	cases := []struct {
		offsets []int64
		want    int64
		ok      bool
	}{
		{nil, 0, false},
		{[]int64{-1}, -1, false},
		{[]int64{7}, 7, true},
		{[]int64{5, -1}, -1, false},            // two voters: both must have it
		{[]int64{5, 3}, 3, true},               // the lower of two
		{[]int64{10, -1, 4}, 4, true},          // one unknown of three
		{[]int64{-1, -1, 4}, -1, false},        // two unknown of three
		{[]int64{1, 9, 9, 2, 9}, 9, true},      // three of five at 9
		{[]int64{1, 9, 8, 2, 7}, 7, true},      // the third highest of five
		{[]int64{0, 0, 0, 0}, 0, true},         // offset 0 is known
		{[]int64{6, 5, 4, 3}, 4, true},         // four voters need three
		{[]int64{3, 3, -1, -1, -1}, -1, false}, // a minority at 3
	}
	for _, c := range cases {
		got, ok := MajorityOffset(slices.Clone(c.offsets))
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("MajorityOffset(%v) = %d/%v, want %d/%v", c.offsets, got, ok, c.want, c.ok)
		}
	}
}

// TestMajorityOffsetMatchesCounting checks the sort-based rule against a
// deliberately simple alternative: the largest offset that at least a
// majority of voters have reached.
func TestMajorityOffsetMatchesCounting(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 0))
	for i := 0; i < 20000; i++ {
		n := 1 + rng.IntN(7)
		offs := make([]int64, n)
		for j := range offs {
			offs[j] = rng.Int64N(12) - 1 // -1 = unknown
		}
		want, wantOK := int64(-1), false
		for _, cand := range offs {
			if cand < 0 {
				continue
			}
			reached := 0
			for _, o := range offs {
				if o >= cand {
					reached++
				}
			}
			if reached >= n/2+1 && cand > want {
				want, wantOK = cand, true
			}
		}
		got, ok := MajorityOffset(slices.Clone(offs))
		if ok != wantOK || (ok && got != want) {
			t.Fatalf("offsets %v: got %d/%v, want %d/%v", offs, got, ok, want, wantOK)
		}
	}
}

func TestVotesResult(t *testing.T) {
	type answer struct {
		id      int32
		granted bool
	}
	cases := []struct {
		name    string
		voters  []int32
		answers []answer
		want    VoteResult
	}{
		{"no answers", []int32{1, 2, 3}, nil, VotePending},
		{"single voter grants itself", []int32{1}, []answer{{1, true}}, VoteWon},
		{"one of three", []int32{1, 2, 3}, []answer{{1, true}}, VotePending},
		{"two of three", []int32{1, 2, 3}, []answer{{1, true}, {3, true}}, VoteWon},
		{"one refusal of three", []int32{1, 2, 3}, []answer{{1, true}, {2, false}}, VotePending},
		{"two refusals of three", []int32{1, 2, 3}, []answer{{1, true}, {2, false}, {3, false}}, VoteLost},
		{"one refusal of two", []int32{1, 2}, []answer{{1, true}, {2, false}}, VoteLost},
		{"two of four", []int32{1, 2, 3, 4}, []answer{{1, true}, {2, true}, {3, false}}, VotePending},
		{"two refusals of four", []int32{1, 2, 3, 4}, []answer{{1, true}, {2, false}, {3, false}}, VoteLost},
		{"three of five", []int32{1, 2, 3, 4, 5}, []answer{{5, true}, {1, true}, {4, false}, {3, true}}, VoteWon},
		{"grants of non-voters do not count", []int32{1, 2, 3}, []answer{{1, true}, {7, true}, {8, true}}, VotePending},
		{"refusals of non-voters do not count", []int32{1, 2, 3}, []answer{{1, true}, {7, false}, {8, false}}, VotePending},
		{"no voters: none can be won", nil, []answer{{1, true}}, VoteLost},
	}
	for _, c := range cases {
		var v Votes[int32]
		for _, a := range c.answers {
			v.Record(a.id, a.granted)
		}
		if got := v.Result(len(c.voters), func(id int32) bool { return slices.Contains(c.voters, id) }); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestVotesKeepFirstAnswer(t *testing.T) {
	var v Votes[int32]
	if v.Answered(2) || len(v.Granted()) != 0 {
		t.Fatal("an empty tally has answers")
	}
	v.Record(3, true)
	v.Record(2, false)
	v.Record(1, true)
	v.Record(2, true) // a second answer changes nothing
	v.Record(3, false)
	if !v.Answered(2) || !v.Answered(3) || v.Answered(4) {
		t.Fatal("Answered does not follow Record")
	}
	if got := v.Granted(); !slices.Equal(got, []int32{1, 3}) {
		t.Fatalf("Granted = %v, want [1 3]", got)
	}
	all := func(int32) bool { return true }
	if got := v.Result(3, all); got != VoteWon {
		t.Fatalf("Result = %v, want won", got)
	}
}
