package raft_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kraftd/kraftd/raft"
)

func TestVoteRequestErrors(t *testing.T) {
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 5, LeaderID: -1, VotedID: -1}))

	r := voteReq(2, 6, 0, 0, false)
	r.ClusterID = strp("")
	if top, _ := votePart(c.request(r)); top != kerr.InconsistentClusterID.Code {
		t.Errorf("empty cluster id: top error %d, want INCONSISTENT_CLUSTER_ID", top)
	}
	r = voteReq(2, 6, 0, 0, false)
	r.ClusterID = nil // null is accepted
	if top, p := votePart(c.request(r)); top != 0 || p.ErrorCode != 0 || !p.VoteGranted {
		t.Errorf("null cluster id: top %d partition %d granted %v, want a grant", top, p.ErrorCode, p.VoteGranted)
	}
	c.wantRole(raft.RoleVoted, 6)

	r = voteReq(2, 7, 0, 0, false)
	r.Topics[0].Topic = "other"
	if top, _ := votePart(c.request(r)); top != kerr.InvalidRequest.Code {
		t.Errorf("wrong topic: top error %d, want INVALID_REQUEST", top)
	}
	r = voteReq(2, 7, 7, 3, false) // LastOffsetEpoch >= CandidateEpoch
	if _, p := votePart(c.request(r)); p.ErrorCode != kerr.InvalidRequest.Code || p.VoteGranted {
		t.Errorf("last epoch == candidate epoch: %d, want INVALID_REQUEST", p.ErrorCode)
	}
	r = voteReq(2, 7, 0, -1, false)
	if _, p := votePart(c.request(r)); p.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("negative last offset: %d, want INVALID_REQUEST", p.ErrorCode)
	}
	r = voteReq(3, 4, 0, 0, false)
	if _, p := votePart(c.request(r)); p.ErrorCode != kerr.FencedLeaderEpoch.Code || p.LeaderEpoch != 6 {
		t.Errorf("older epoch: %d epoch %d, want FENCED_LEADER_EPOCH at 6", p.ErrorCode, p.LeaderEpoch)
	}
	r = voteReq(-1, 7, 0, 0, false)
	if _, p := votePart(c.request(r)); p.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("negative candidate id: %d, want INVALID_REQUEST", p.ErrorCode)
	}
	// Wrong voter key: the higher epoch is still adopted first.
	r = voteReq(3, 9, 0, 0, false)
	r.VoterID = 2
	if _, p := votePart(c.request(r)); p.ErrorCode != kerr.InvalidVoterKey.Code || p.VoteGranted || p.LeaderEpoch != 9 {
		t.Errorf("wrong voter key: %d granted %v epoch %d, want INVALID_VOTER_KEY at epoch 9", p.ErrorCode, p.VoteGranted, p.LeaderEpoch)
	}
	c.wantRole(raft.RoleUnattached, 9)
}

func TestVoteGrantRules(t *testing.T) {
	// Local log: epochs 1,1,2 -> end offset 3, last epoch 2.
	c := newCtx(t, 1, withLogBatches(1, 1, 2), withState(raft.ElectionState{Epoch: 2, LeaderID: -1, VotedID: -1}))
	cases := []struct {
		name      string
		cand      int32
		lastEpoch int32
		lastOff   int64
		want      bool
	}{
		{"older last epoch", 2, 1, 10, false},
		{"same epoch shorter log", 2, 2, 2, false},
		{"same epoch same log", 2, 2, 3, true},
		{"re-grant same candidate", 2, 2, 3, true},
		{"second candidate same epoch", 3, 2, 9, false},
	}
	for _, tc := range cases {
		_, p := votePart(c.request(voteReq(tc.cand, 3, tc.lastEpoch, tc.lastOff, false)))
		if p.VoteGranted != tc.want || p.ErrorCode != 0 {
			t.Errorf("%s: granted %v (error %d), want %v", tc.name, p.VoteGranted, p.ErrorCode, tc.want)
		}
	}
	st, _, _ := c.store.Read()
	if st.Epoch != 3 || st.VotedID != 2 {
		t.Errorf("persisted %+v, want epoch 3 voted 2", st)
	}
}

func TestVotePersistedBeforeReply(t *testing.T) {
	c := newCtx(t, 1)
	var order []string
	c.store.OnWrite = func(st raft.ElectionState) {
		if st.VotedID == 2 {
			order = append(order, "persist-vote")
		}
	}
	c.tr.onEvent = func(ev string) { order = append(order, ev) }
	_, p := votePart(c.request(voteReq(2, 1, 0, 0, false)))
	if !p.VoteGranted {
		t.Fatalf("vote not granted")
	}
	persisted, replied := -1, -1
	for i, ev := range order {
		if ev == "persist-vote" && persisted < 0 {
			persisted = i
		}
		if ev == "reply" && replied < 0 {
			replied = i
		}
	}
	if persisted < 0 || replied < 0 || persisted > replied {
		t.Fatalf("order %v: the vote must be persisted before the reply", order)
	}
}

func TestVoteStoreFailureIsFatalAndUnanswered(t *testing.T) {
	c := newCtx(t, 1)
	c.store.FailWrites = errInjected
	n := len(c.tr.replies)
	err := c.d.Step(c.now, raft.Message{Request: voteReq(2, 1, 0, 0, false), Ref: 99})
	if err == nil {
		t.Fatalf("step returned no error after a failed quorum-state write")
	}
	if len(c.tr.replies) != n {
		t.Fatalf("a reply was sent after a failed quorum-state write")
	}
	if _, err := c.d.Poll(c.now); err == nil {
		t.Fatalf("poll after a fatal error returned nil")
	}
}

func TestPreVoteChangesNoState(t *testing.T) {
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 4, LeaderID: -1, VotedID: -1}))
	writes := c.store.Writes
	_, p := votePart(c.request(voteReq(2, 4, 0, 0, true)))
	if !p.VoteGranted {
		t.Errorf("pre-vote from an up-to-date peer not granted")
	}
	if c.store.Writes != writes || c.status().VotedID != -1 {
		t.Errorf("pre-vote changed state: writes %d->%d voted %d", writes, c.store.Writes, c.status().VotedID)
	}
	// A pre-vote at a higher epoch still moves the node to that epoch.
	_, p = votePart(c.request(voteReq(2, 6, 0, 0, true)))
	if !p.VoteGranted || p.LeaderEpoch != 6 {
		t.Errorf("pre-vote at higher epoch: granted %v epoch %d", p.VoteGranted, p.LeaderEpoch)
	}
	c.wantRole(raft.RoleUnattached, 6)
	// LastOffsetEpoch == epoch is valid for a pre-vote, > is not.
	if _, p = votePart(c.request(voteReq(2, 6, 6, 0, true))); p.ErrorCode != 0 {
		t.Errorf("pre-vote with last epoch == epoch: error %d", p.ErrorCode)
	}
	if _, p = votePart(c.request(voteReq(2, 6, 7, 0, true))); p.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("pre-vote with last epoch > epoch: error %d, want INVALID_REQUEST", p.ErrorCode)
	}
}

func TestFollowerRejectsPreVoteAfterFetching(t *testing.T) {
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 3, LeaderID: 2, VotedID: -1}))
	c.wantRole(raft.RoleFollower, 3)
	if _, p := votePart(c.request(voteReq(3, 3, 0, 0, true))); !p.VoteGranted {
		t.Errorf("follower that never fetched refused a pre-vote")
	}
	c.poll()
	f := sentOf(c.takeSent(), 1)
	if len(f) != 1 || f[0].To != 2 {
		t.Fatalf("follower sent %v, want one Fetch to 2", f)
	}
	c.respond(f[0], fetchResp(2, 3, -1, nil))
	if _, p := votePart(c.request(voteReq(3, 3, 0, 0, true))); p.VoteGranted {
		t.Errorf("follower that fetched from its leader granted a pre-vote")
	}
	// Standard votes are never granted by a follower.
	if _, p := votePart(c.request(voteReq(3, 3, 0, 0, false))); p.VoteGranted {
		t.Errorf("follower granted a standard vote in its epoch")
	}
}

func TestIdlessObserverNeverVotes(t *testing.T) {
	c := newCtx(t, -1, func(c *tctx) { c.cfg.Bootstrap = []raft.Endpoint{{Host: "h", Port: 1}} })
	if _, p := votePart(c.request(voteReq(2, 1, 0, 0, false))); p.VoteGranted {
		t.Errorf("id-less observer granted a vote")
	}
}
