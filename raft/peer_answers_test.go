package raft_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/raft"
)

// A follower's refusals name the leader it follows at its epoch, with its
// endpoint, whoever asks (the leader itself included), as Kafka's
// leaderIdOrSentinel answers do.
func TestRefusalsNameTheKnownLeader(t *testing.T) {
	type answer struct {
		code     int16
		leader   int32
		epoch    int32
		endpoint []int32 // node ids of the answer's endpoints
	}
	voteAns := func(resp kmsg.Response) answer {
		_, p := votePart(resp)
		var ids []int32
		for _, e := range resp.(*kmsg.VoteResponse).NodeEndpoints {
			ids = append(ids, e.NodeID)
		}
		return answer{p.ErrorCode, p.LeaderID, p.LeaderEpoch, ids}
	}
	beginAns := func(resp kmsg.Response) answer {
		_, p := beginPart(resp)
		var ids []int32
		for _, e := range resp.(*kmsg.BeginQuorumEpochResponse).NodeEndpoints {
			ids = append(ids, e.NodeID)
		}
		return answer{p.ErrorCode, p.LeaderID, p.LeaderEpoch, ids}
	}
	endAns := func(resp kmsg.Response) answer {
		v := resp.(*kmsg.EndQuorumEpochResponse)
		p := v.Topics[0].Partitions[0]
		var ids []int32
		for _, e := range v.NodeEndpoints {
			ids = append(ids, e.NodeID)
		}
		return answer{p.ErrorCode, p.LeaderID, p.LeaderEpoch, ids}
	}
	wrongVoter := func(r *kmsg.BeginQuorumEpochRequest) kmsg.Request { r.VoterID = 5; return r }
	cases := []struct {
		name string
		req  func() kmsg.Request
		ans  func(kmsg.Response) answer
		code int16
	}{
		{"stale Vote", func() kmsg.Request { return voteReq(3, 2, 1, 0, false) }, voteAns, kerr.FencedLeaderEpoch.Code},
		{"Vote from the leader itself", func() kmsg.Request { return voteReq(2, 3, 1, 0, false) }, voteAns, 0},
		{"stale BeginQuorumEpoch from the leader", func() kmsg.Request { return beginReq(2, 2) }, beginAns, kerr.FencedLeaderEpoch.Code},
		{"BeginQuorumEpoch for another voter", func() kmsg.Request { return wrongVoter(beginReq(2, 3)) }, beginAns, kerr.InvalidVoterKey.Code},
		{"stale EndQuorumEpoch from the leader", func() kmsg.Request { return endReq(2, 2) }, endAns, kerr.FencedLeaderEpoch.Code},
		{"stale EndQuorumEpoch from another voter", func() kmsg.Request { return endReq(3, 1) }, endAns, kerr.FencedLeaderEpoch.Code},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 3, LeaderID: 2, VotedID: -1}), withLogBatches(1))
			got := tc.ans(c.request(tc.req()))
			if got.code != tc.code || got.leader != 2 || got.epoch != 3 || len(got.endpoint) != 1 || got.endpoint[0] != 2 {
				t.Errorf("answer %+v, want error %d naming leader 2 of epoch 3 with its endpoint", got, tc.code)
			}
			c.wantRole(raft.RoleFollower, 3)
		})
	}
}

// The leader sends BeginQuorumEpoch at once, then every fetch.timeout/2 only
// to the voters that have not fetched within fetch.timeout/2 (Kafka's
// LeaderState.needToSendBeginQuorumRequests).
func TestBeginQuorumEpochOnlyToVotersNotFetching(t *testing.T) {
	c := newCtx(t, 1, withPreVote(false))
	c.advance(2 * c.cfg.ElectionTimeout)
	for _, o := range sentOf(c.takeSent(), 52) {
		c.respond(o, voteResp(1, -1, true))
	}
	c.wantRole(raft.RoleLeader, 1)
	ack := func(out []raft.Outbound) []int32 {
		var to []int32
		for _, o := range sentOf(out, 53) {
			r := kmsg.NewPtrBeginQuorumEpochResponse()
			tp := kmsg.NewBeginQuorumEpochResponseTopic()
			p := kmsg.NewBeginQuorumEpochResponseTopicPartition()
			p.LeaderID, p.LeaderEpoch = 1, 1
			tp.Partitions = append(tp.Partitions, p)
			r.Topics = append(r.Topics, tp)
			c.respond(o, r)
			to = append(to, o.To)
		}
		return to
	}
	if to := ack(c.takeSent()); len(to) != 2 {
		t.Fatalf("BeginQuorumEpoch at election sent to %v, want both voters", to)
	}
	half := c.cfg.FetchTimeout / 2
	fetch := func(id int32) {
		c.t.Helper()
		if code, p := fetchPart(c.request(fetchReq(id, 1, 0, 0, 0))); code != 0 || p.ErrorCode != 0 {
			t.Fatalf("fetch from %d: %d/%d", id, code, p.ErrorCode)
		}
	}
	// Voter 2 fetches a quarter window in, voter 3 never.
	c.advance(half / 2)
	fetch(2)
	c.advance(half - half/2)
	if to := ack(c.takeSent()); len(to) != 1 || to[0] != 3 {
		t.Fatalf("first resend went to %v, want only voter 3", to)
	}
	// A window after its fetch, voter 2 is due again: the check is >=.
	c.advance(half / 2)
	if to := ack(c.takeSent()); len(to) != 0 {
		t.Fatalf("BeginQuorumEpoch sent to %v between timer expiries", to)
	}
	c.advance(half - half/2)
	if to := ack(c.takeSent()); len(to) != 2 {
		t.Fatalf("second resend went to %v, want both voters", to)
	}
}
