package raft_test

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kraftd/kraftd/raft"
)

func withDeferral() opt { return func(c *tctx) { c.cfg.DeferLeadership = true } }

// deferringLeader is node 1 of voters 1,2,3, deferring, elected in epoch 1 and told the
// preferred leaders; its log holds the epoch's LeaderChange at offset 0.
func deferringLeader(t *testing.T, preferred []int32, lg *zap.Logger) *tctx {
	t.Helper()
	c := newCtx(t, 1, withPreVote(false), withDeferral(), withLogger(lg))
	if err := c.d.SetPreferredLeaders(c.now, preferred); err != nil {
		t.Fatal(err)
	}
	c.electLocal()
	c.wantRole(raft.RoleLeader, 1)
	return c
}

// catchUp makes voter id fetch the LeaderChange, then fetch from the log end.
func (c *tctx) catchUp(id int32) {
	c.t.Helper()
	c.request(fetchReq(id, 1, 0, 0, 0))
	c.request(fetchReq(id, 1, 1, 1, 0))
}

// endQuorumSuccessors are the preferred successors of the EndQuorumEpoch requests sent.
func endQuorumSuccessors(t *testing.T, out []raft.Outbound) []int32 {
	t.Helper()
	ends := sentOf(out, 54)
	if len(ends) == 0 {
		t.Fatal("no EndQuorumEpoch sent")
	}
	var ids []int32
	for _, c := range ends[0].Request.(*kmsg.EndQuorumEpochRequest).Topics[0].Partitions[0].PreferredCandidates {
		ids = append(ids, c.CandidateID)
	}
	return ids
}

// A deferring leader resigns once its epoch is committed and a preferred voter has fetched
// up to its log end, naming the caught-up preferred voter first; a fetch timeout into the
// epoch without one it says so, once.
func TestDeferringLeaderResignsToCaughtUpPreferredVoter(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	c := deferringLeader(t, []int32{3}, zap.New(core))
	c.catchUp(2) // commits the epoch; 2 is not preferred
	c.wantRole(raft.RoleLeader, 1)
	if hw := c.status().HighWatermark; hw != 1 {
		t.Fatalf("high watermark %d, want 1", hw)
	}
	c.request(fetchReq(3, 1, 0, 0, 0)) // 3 fetches, not yet up to the end
	c.wantRole(raft.RoleLeader, 1)
	if n := logs.FilterMessageSnippet("has caught up within the fetch timeout").Len(); n != 0 {
		t.Fatalf("%d log lines about no caught-up controller before the fetch timeout", n)
	}
	c.advance(2 * time.Second) // fetch timeout: 3 is still behind
	c.request(fetchReq(2, 1, 1, 1, 0))
	c.advance(time.Second)
	c.request(fetchReq(2, 1, 1, 1, 0))
	if n := logs.FilterMessageSnippet("has caught up within the fetch timeout").Len(); n != 1 {
		t.Fatalf("%d log lines about no caught-up controller a fetch timeout into the epoch, want 1", n)
	}
	c.wantRole(raft.RoleLeader, 1)
	c.request(fetchReq(3, 1, 1, 1, 0))
	c.wantRole(raft.RoleResigned, 1)
	if got := endQuorumSuccessors(t, c.takeSent()); !slices.Equal(got, []int32{3, 2}) {
		t.Fatalf("successors %v, want [3 2]", got)
	}
}

// Without a preferred voter in the voter set a deferring leader leads and says so once per
// epoch; preferred leaders learned later make it re-check at once.
func TestDeferringLeaderWithoutPreferredVoterLeads(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	c := deferringLeader(t, []int32{4}, zap.New(core)) // 4 is no voter
	c.catchUp(2)
	c.catchUp(3)
	c.advance(100 * time.Millisecond)
	c.request(fetchReq(2, 1, 1, 1, 0))
	c.wantRole(raft.RoleLeader, 1)
	if n := logs.FilterMessageSnippet("no voter that can act as the active controller").Len(); n != 1 {
		t.Fatalf("%d log lines about leading without a preferred voter, want 1", n)
	}
	c.takeSent()
	if err := c.d.SetPreferredLeaders(c.now, []int32{4, 2}); err != nil {
		t.Fatal(err)
	}
	c.wantRole(raft.RoleResigned, 1)
	if got := endQuorumSuccessors(t, c.takeSent()); !slices.Equal(got, []int32{2, 3}) {
		t.Fatalf("successors %v, want [2 3]", got)
	}
}

// A preferred node does not defer, nor does any node with deferral off.
func TestPreferredOrNonDeferringLeaderKeepsLeading(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      []opt
		preferred []int32
	}{
		{"preferred itself", []opt{withDeferral()}, []int32{1, 2}},
		{"deferral off", nil, []int32{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCtx(t, 1, append(tc.opts, withPreVote(false))...)
			if err := c.d.SetPreferredLeaders(c.now, tc.preferred); err != nil {
				t.Fatal(err)
			}
			c.electLocal()
			c.catchUp(2)
			c.catchUp(3)
			c.wantRole(raft.RoleLeader, 1)
		})
	}
}

// A deferring follower waits one election timeout longer than the fetch timeout before it
// campaigns; without a preferred voter it waits the fetch timeout only.
func TestDeferringFollowerWaitsLonger(t *testing.T) {
	for _, tc := range []struct {
		preferred []int32
		wait      time.Duration
	}{
		{[]int32{2}, 3 * time.Second}, // fetch timeout 2s + election timeout 1s
		{nil, 2 * time.Second},
	} {
		c := newCtx(t, 1, withPreVote(false), withDeferral())
		if err := c.d.SetPreferredLeaders(c.now, tc.preferred); err != nil {
			t.Fatal(err)
		}
		c.request(beginReq(2, 1))
		c.wantRole(raft.RoleFollower, 1)
		c.advance(tc.wait - time.Millisecond)
		c.wantRole(raft.RoleFollower, 1)
		c.advance(time.Millisecond)
		c.wantRole(raft.RoleCandidate, 2)
	}
}

// A deferring follower judges its leader by the plain fetch timeout when asked for a
// pre-vote: a preferred voter whose fetch timer ran out gets its pre-vote (else the
// deferring follower, waiting longer, would refuse it and win the election it defers);
// before that, the pre-vote is refused as Kafka's followers refuse it.
func TestDeferringFollowerGrantsPreVoteAfterFetchTimeout(t *testing.T) {
	c := newCtx(t, 1, withDeferral())
	if err := c.d.SetPreferredLeaders(c.now, []int32{2}); err != nil {
		t.Fatal(err)
	}
	c.request(beginReq(3, 1))
	c.wantRole(raft.RoleFollower, 1)
	c.poll()
	var fetch *raft.Outbound
	for _, o := range sentOf(c.takeSent(), 1) {
		if o.To == 3 {
			fetch = &o
		}
	}
	if fetch == nil {
		t.Fatal("no Fetch sent to the leader")
	}
	c.respond(*fetch, fetchResp(3, 1, -1, nil))
	granted := func() bool {
		_, p := votePart(c.request(voteReq(2, 1, 0, 0, true)))
		return p.VoteGranted
	}
	c.advance(2*time.Second - time.Millisecond)
	if granted() {
		t.Error("pre-vote granted while the leader was heard within the fetch timeout")
	}
	c.advance(time.Millisecond)
	c.wantRole(raft.RoleFollower, 1) // its own election waits one election timeout more
	if !granted() {
		t.Error("pre-vote of a preferred voter refused a fetch timeout after the last fetch")
	}
}
