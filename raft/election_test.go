package raft_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

func TestStartupRules(t *testing.T) {
	cases := []struct {
		name     string
		st       *raft.ElectionState
		logEpoch []int32
		role     raft.Role
		epoch    int32
	}{
		{"fresh", nil, nil, raft.RoleUnattached, 0},
		{"was leader", &raft.ElectionState{Epoch: 3, LeaderID: 1, VotedID: 1}, nil, raft.RoleResigned, 3},
		{"voted self", &raft.ElectionState{Epoch: 3, LeaderID: -1, VotedID: 1}, nil, raft.RoleCandidate, 3},
		{"voted other", &raft.ElectionState{Epoch: 3, LeaderID: -1, VotedID: 2}, nil, raft.RoleVoted, 3},
		{"leader known", &raft.ElectionState{Epoch: 3, LeaderID: 2, VotedID: -1}, nil, raft.RoleFollower, 3},
		{"log newer than file", &raft.ElectionState{Epoch: 1, LeaderID: 2, VotedID: -1}, []int32{1, 4}, raft.RoleUnattached, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var opts []opt
			if tc.st != nil {
				opts = append(opts, withState(*tc.st))
			}
			opts = append(opts, withLogBatches(tc.logEpoch...))
			c := newCtx(t, 1, opts...)
			c.wantRole(tc.role, tc.epoch)
			st, ok, _ := c.store.Read()
			if !ok || st.Epoch != tc.epoch || c.store.Writes == 0 {
				t.Errorf("initial state not written back: %+v ok=%v writes=%d", st, ok, c.store.Writes)
			}
			if len(st.Voters) != 3 {
				t.Errorf("persisted voters %v, want the static set", st.Voters)
			}
		})
	}
}

func TestStartupVoteWithoutIDIsAnError(t *testing.T) {
	c := &tctx{}
	_ = c
	cfg := raft.DefaultConfig()
	cfg.NodeID = -1
	cfg.ClusterID = testCluster
	cfg.Voters = []raft.Voter{{ID: 1}}
	store := newStore(raft.ElectionState{Epoch: 1, LeaderID: -1, VotedID: 1})
	if _, err := newDriver(cfg, store); err == nil {
		t.Fatalf("a quorum state with a vote but no node id was accepted")
	}
}

func TestSingleVoterElectsItselfAndCommits(t *testing.T) {
	c := newCtx(t, 1, withVoters(1), withLinger(0))
	c.wantRole(raft.RoleLeader, 1)
	l := &recListener{}
	c.d.Register(l)
	c.poll()
	last, err := c.d.Append(c.now, 1, [][]byte{[]byte("a"), []byte("b")})
	if err != nil || last != 2 {
		t.Fatalf("append: last %d err %v, want 2 (LeaderChange at 0)", last, err)
	}
	c.poll()
	if st := c.status(); st.HighWatermark != 3 {
		t.Fatalf("HW %d, want 3", st.HighWatermark)
	}
	if len(l.commits) != 2 || !l.commits[0].Control || string(l.commits[1].Records[1]) != "b" {
		t.Fatalf("listener commits %+v, want the LeaderChange batch then a,b", l.commits)
	}
	if len(l.leaders) != 1 || l.leaders[0] != (raft.LeaderAndEpoch{LeaderID: 1, Epoch: 1}) {
		t.Fatalf("leader changes %v, want [{1 1}] once caught up", l.leaders)
	}
}

func TestElectionWithPreVote(t *testing.T) {
	c := newCtx(t, 1)
	c.advance(2 * c.cfg.ElectionTimeout)
	c.wantRole(raft.RoleProspective, 0)
	votes := sentOf(c.takeSent(), 52)
	if len(votes) != 2 {
		t.Fatalf("prospective sent %d votes, want 2", len(votes))
	}
	for _, o := range votes {
		p := o.Request.(*kmsg.VoteRequest).Topics[0].Partitions[0]
		if !p.PreVote || p.CandidateEpoch != 0 {
			t.Errorf("pre-vote %+v: want PreVote at the current epoch 0", p)
		}
	}
	if c.store.Writes != 1 {
		t.Errorf("prospective wrote quorum state (%d writes)", c.store.Writes)
	}
	c.respond(votes[0], voteResp(0, -1, true))
	c.wantRole(raft.RoleCandidate, 1)
	st, _, _ := c.store.Read()
	if st.VotedID != 1 || st.Epoch != 1 {
		t.Errorf("candidate state %+v, want epoch 1 voted for itself", st)
	}
	votes = sentOf(c.takeSent(), 52)
	if len(votes) != 2 {
		t.Fatalf("candidate sent %d votes, want 2", len(votes))
	}
	c.respond(votes[1], voteResp(1, -1, true))
	c.wantRole(raft.RoleLeader, 1)
	begins := sentOf(c.takeSent(), 53)
	if len(begins) != 2 {
		t.Fatalf("leader sent %d BeginQuorumEpoch, want 2 at once", len(begins))
	}
	// The LeaderChange control batch is the epoch's first entry.
	b, _, err := protocol.DecodeBatch(c.log.Batches()[0].Data)
	if err != nil || !b.Control || b.PartitionLeaderEpoch != 1 {
		t.Fatalf("first batch %+v err %v, want a control batch of epoch 1", b, err)
	}
	var lc kmsg.LeaderChangeMessage
	if err := lc.ReadFrom(b.Records[0].Value); err != nil || lc.LeaderID != 1 || len(lc.Voters) != 3 || len(lc.GrantingVoters) != 2 {
		t.Fatalf("LeaderChange %+v err %v", lc, err)
	}
	// BeginQuorumEpoch is resent every fetch.timeout/2, acked or not.
	c.advance(c.cfg.FetchTimeout / 2)
	if n := len(sentOf(c.takeSent(), 53)); n != 0 {
		t.Fatalf("resent BeginQuorumEpoch to a destination still in flight (%d)", n)
	}
	for _, o := range begins {
		r := kmsg.NewPtrBeginQuorumEpochResponse()
		tp := kmsg.NewBeginQuorumEpochResponseTopic()
		p := kmsg.NewBeginQuorumEpochResponseTopicPartition()
		p.LeaderID, p.LeaderEpoch = 1, 1
		tp.Partitions = append(tp.Partitions, p)
		r.Topics = append(r.Topics, tp)
		c.respond(o, r)
	}
	c.advance(c.cfg.FetchTimeout / 2)
	if n := len(sentOf(c.takeSent(), 53)); n != 2 {
		t.Fatalf("BeginQuorumEpoch resent to %d voters, want 2", n)
	}
}

func TestPreVoteUnsupportedVersionFallsBackToCandidate(t *testing.T) {
	for _, how := range []string{"transport error", "response error"} {
		t.Run(how, func(t *testing.T) {
			c := newCtx(t, 1)
			c.advance(2 * c.cfg.ElectionTimeout)
			votes := sentOf(c.takeSent(), 52)
			if how == "transport error" {
				err := fmt.Errorf("network: node 2 supports v0-1: %w", kerr.UnsupportedVersion)
				if e := c.d.Step(c.now, raft.Message{From: votes[0].To, Corr: votes[0].Corr, Err: err}); e != nil {
					t.Fatal(e)
				}
			} else {
				r := kmsg.NewPtrVoteResponse()
				r.ErrorCode = kerr.UnsupportedVersion.Code
				c.respond(votes[0], r)
			}
			c.wantRole(raft.RoleCandidate, 1)
		})
	}
}

func TestPreVoteLostFallsBackToFollower(t *testing.T) {
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 2, LeaderID: 3, VotedID: -1}))
	c.advance(c.cfg.FetchTimeout)
	c.wantRole(raft.RoleProspective, 2)
	for _, o := range sentOf(c.takeSent(), 52) {
		c.respond(o, voteResp(2, -1, false))
	}
	c.wantRole(raft.RoleFollower, 2)
	if c.status().LeaderID != 3 {
		t.Fatalf("fell back to leader %d, want 3", c.status().LeaderID)
	}
}

func TestCandidateBacksOffAfterLosing(t *testing.T) {
	c := newCtx(t, 1, withPreVote(false))
	c.advance(2 * c.cfg.ElectionTimeout)
	c.wantRole(raft.RoleCandidate, 1)
	for _, o := range sentOf(c.takeSent(), 52) {
		c.respond(o, voteResp(1, -1, false))
	}
	// Backing off: 0 or 100 ms after the first loss (retries = 1).
	if st := c.status(); st.Role != raft.RoleCandidate || st.Epoch > 2 {
		t.Fatalf("after losing: %+v", st)
	}
	if c.status().Epoch == 1 {
		c.advance(100 * time.Millisecond)
	}
	c.wantRole(raft.RoleCandidate, 2)
	if n := len(sentOf(c.takeSent(), 52)); n != 2 {
		t.Fatalf("new candidate sent %d votes, want 2", n)
	}
}

func TestCandidateLearnsLeaderFromVoteResponse(t *testing.T) {
	c := newCtx(t, 1, withPreVote(false))
	c.advance(2 * c.cfg.ElectionTimeout)
	votes := sentOf(c.takeSent(), 52)
	c.respond(votes[0], voteResp(1, 3, false))
	c.wantRole(raft.RoleFollower, 1)
	if c.status().LeaderID != 3 {
		t.Fatalf("leader %d, want 3", c.status().LeaderID)
	}
	// A late answer of the old election is ignored.
	c.respond(votes[1], voteResp(1, -1, true))
	c.wantRole(raft.RoleFollower, 1)
}

func TestCheckQuorumResigns(t *testing.T) {
	c := newCtx(t, 1, withPreVote(false))
	c.electLocal()
	// One voter keeps fetching: with itself, a majority -> no resign.
	for i := 0; i < 4; i++ {
		c.advance(c.cfg.FetchTimeout / 2)
		c.request(fetchReq(2, 1, c.log.EndOffset().Offset, 1, 0))
	}
	c.wantRole(raft.RoleLeader, 1)
	c.advance(c.cfg.FetchTimeout * 3 / 2)
	c.wantRole(raft.RoleResigned, 1)
	ends := sentOf(c.takeSent(), 54)
	if len(ends) != 2 {
		t.Fatalf("resigned sent %d EndQuorumEpoch, want 2", len(ends))
	}
	p := ends[0].Request.(*kmsg.EndQuorumEpochRequest).Topics[0].Partitions[0]
	if len(p.PreferredCandidates) != 2 || p.PreferredCandidates[0].CandidateID != 2 {
		t.Fatalf("preferred candidates %+v, want 2 (most caught up) first", p.PreferredCandidates)
	}
	// Resigned: no standard vote in its epoch, fetches get NOT_LEADER.
	if _, fp := fetchPart(c.request(fetchReq(2, 1, 0, 0, 0))); fp.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("resigned answered fetch with %d", fp.ErrorCode)
	}
}

func TestResignAndShutdown(t *testing.T) {
	c := newCtx(t, 1, withPreVote(false))
	c.electLocal()
	if err := c.d.Resign(c.now, 0); err != nil {
		t.Errorf("resign of an older epoch: %v, want ignored", err)
	}
	if err := c.d.Resign(c.now, 2); !errors.Is(err, raft.ErrInvalidEpoch) {
		t.Errorf("resign of a newer epoch: %v", err)
	}
	l := &recListener{}
	c.d.Register(l)
	c.poll()
	c.d.Shutdown(c.now)
	if l.shut != 1 {
		t.Errorf("BeginShutdown called %d times", l.shut)
	}
	c.wantRole(raft.RoleResigned, 1)
	if c.d.Done() {
		t.Fatalf("done before another leader appeared")
	}
	if len(sentOf(c.takeSent(), 54)) != 2 {
		t.Fatalf("no EndQuorumEpoch on shutdown")
	}
	// Another leader takes over: shutdown completes.
	c.request(beginReq(2, 2))
	if !c.d.Done() {
		t.Fatalf("not done after a new leader was elected (%+v)", c.status())
	}
}

func TestShutdownTimesOut(t *testing.T) {
	c := newCtx(t, 1)
	c.d.Shutdown(c.now)
	c.advance(time.Second)
	if c.d.Done() {
		t.Fatalf("unattached voter done before the timeout")
	}
	c.advance(c.cfg.ShutdownTimeout)
	if !c.d.Done() {
		t.Fatalf("not done after the shutdown timeout")
	}
	c.wantRole(raft.RoleUnattached, 0) // never started an election
}

func TestExpiredParkedFetchDoesNotRefreshCheckQuorum(t *testing.T) {
	c := newCtx(t, 1, withPreVote(false))
	c.electLocal()
	leo := c.log.EndOffset().Offset
	c.request(fetchReq(2, 1, leo, 1, 0)) // HW known; check-quorum window reset now
	if r := c.request(fetchReq(2, 1, leo, 1, 500)); r != nil {
		t.Fatalf("fetch not parked")
	}
	c.advance(c.cfg.MaxFetchWait) // expires: answered, but not a new fetch
	c.advance(c.cfg.FetchTimeout*3/2 - c.cfg.MaxFetchWait)
	c.wantRole(raft.RoleResigned, 1)
}

func TestSingleVoterRestartLeadsNextEpoch(t *testing.T) {
	c := newCtx(t, 1, withVoters(1), withState(raft.ElectionState{Epoch: 4, LeaderID: 1, VotedID: 1}))
	c.wantRole(raft.RoleLeader, 5)
}

func TestUnattachedVoterDiscoversLeaderByFetch(t *testing.T) {
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 2, LeaderID: -1, VotedID: 3}))
	c.wantRole(raft.RoleVoted, 2)
	c.poll()
	f := sentOf(c.takeSent(), 1)
	if len(f) != 1 || (f[0].To != 2 && f[0].To != 3) {
		t.Fatalf("unattached voter sent %v, want one discovery Fetch to a voter", f)
	}
	// The peer is not the leader and knows none: back off, no spinning.
	r := fetchResp(-1, 2, -1, nil)
	r.Topics[0].Partitions[0].ErrorCode = kerr.NotLeaderForPartition.Code
	c.respond(f[0], r)
	first := f[0].To
	c.poll()
	f = sentOf(c.takeSent(), 1)
	if len(f) > 1 || (len(f) == 1 && f[0].To == first) {
		t.Fatalf("fetches %v right after an answer from %d that taught nothing", f, first)
	}
	if len(f) == 0 {
		c.advance(c.cfg.RetryBackoff)
		f = sentOf(c.takeSent(), 1)
	}
	if len(f) != 1 {
		t.Fatalf("no discovery fetch after the backoff")
	}
	// The leader answers: follow it.
	c.respond(f[0], fetchResp(3, 2, 0, nil))
	c.wantRole(raft.RoleFollower, 2)
	if c.status().LeaderID != 3 {
		t.Fatalf("leader %d, want 3", c.status().LeaderID)
	}
}
