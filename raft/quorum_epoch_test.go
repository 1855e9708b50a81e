package raft_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/topics"
)

func TestBeginQuorumEpoch(t *testing.T) {
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 2, LeaderID: -1, VotedID: -1}))
	r := beginReq(2, 3)
	r.ClusterID = strp("other")
	if top, _ := beginPart(c.request(r)); top != kerr.InconsistentClusterID.Code {
		t.Errorf("cluster id mismatch: %d", top)
	}
	r = beginReq(2, 3)
	r.Topics[0].Partitions = append(r.Topics[0].Partitions, r.Topics[0].Partitions[0])
	if top, _ := beginPart(c.request(r)); top != kerr.InvalidRequest.Code {
		t.Errorf("two partitions: %d", top)
	}
	if _, p := beginPart(c.request(beginReq(2, 1))); p.ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Errorf("older epoch: %d", p.ErrorCode)
	}
	if _, p := beginPart(c.request(beginReq(-1, 3))); p.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("negative leader id: %d", p.ErrorCode)
	}
	if _, p := beginPart(c.request(beginReq(2, 3))); p.ErrorCode != 0 || p.LeaderID != 2 || p.LeaderEpoch != 3 {
		t.Errorf("valid: %+v", p)
	}
	c.wantRole(raft.RoleFollower, 3)
	// Wrong voter key: the transition happened, then INVALID_VOTER_KEY.
	r = beginReq(3, 4)
	r.VoterID = 5
	if _, p := beginPart(c.request(r)); p.ErrorCode != kerr.InvalidVoterKey.Code {
		t.Errorf("wrong voter key: %d", p.ErrorCode)
	}
	c.wantRole(raft.RoleFollower, 4)
}

func TestBeginQuorumEpochForgeriesRefused(t *testing.T) {
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 3, LeaderID: 2, VotedID: -1}))
	writes := c.store.Writes
	cases := []struct {
		name   string
		leader int32
		epoch  int32
	}{
		{"second leader for the epoch", 3, 3},
		{"names this node leader", 1, 3},
		{"names this node leader of a newer epoch", 1, 5},
		{"newer epoch for the current leader", 2, 4},
	}
	for _, tc := range cases {
		_, p := beginPart(c.request(beginReq(tc.leader, tc.epoch)))
		if p.ErrorCode != kerr.InvalidRequest.Code {
			t.Errorf("%s: error %d, want INVALID_REQUEST", tc.name, p.ErrorCode)
		}
		if p.LeaderID == tc.leader && p.LeaderEpoch == tc.epoch {
			t.Errorf("%s: the answer confirms the forged claim", tc.name)
		}
		c.wantRole(raft.RoleFollower, 3)
		if st := c.status(); st.LeaderID != 2 {
			t.Errorf("%s: leader changed to %d", tc.name, st.LeaderID)
		}
	}
	if c.store.Writes != writes {
		t.Errorf("forged messages were persisted")
	}
	// A leader refuses another leader for its own epoch.
	c2 := newCtx(t, 1, withPreVote(false))
	c2.electLocal()
	if _, p := beginPart(c2.request(beginReq(2, 1))); p.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("leader accepted a second leader for its epoch: %d", p.ErrorCode)
	}
	c2.wantRole(raft.RoleLeader, 1)
}

func TestEndQuorumEpochShortensFetchTimer(t *testing.T) {
	for _, tc := range []struct {
		preferred []int32
		want      time.Duration
	}{
		{[]int32{1, 3}, 0},
		{[]int32{3, 1}, 500 * time.Millisecond}, // (1000 >> 1) << 0
		{[]int32{3}, 1000 * time.Millisecond},   // not listed: backoff max
	} {
		c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 3, LeaderID: 2, VotedID: -1}))
		r := c.request(endReq(2, 3, tc.preferred...)).(*kmsg.EndQuorumEpochResponse)
		if r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("EndQuorumEpoch answered %+v", r)
		}
		c.wantElectionAfter(tc.want, 3)
		// The resigned leader's followers grant pre-votes again.
		if _, p := votePart(c.request(voteReq(3, 3, 0, 0, true))); !p.VoteGranted {
			t.Errorf("preferred %v: pre-vote refused after EndQuorumEpoch", tc.preferred)
		}
	}
}

func TestEndQuorumEpochAcknowledged(t *testing.T) {
	c := newCtx(t, 1, withPreVote(false))
	c.electLocal()
	if err := c.d.Resign(c.now, 1); err != nil {
		t.Fatal(err)
	}
	ends := sentOf(c.takeSent(), 54)
	if len(ends) != 2 {
		t.Fatalf("%d EndQuorumEpoch", len(ends))
	}
	ack := func(o raft.Outbound, topic ...string) {
		r := kmsg.NewPtrEndQuorumEpochResponse()
		tp := kmsg.NewEndQuorumEpochResponseTopic()
		tp.Topic = topics.ClusterMetadata
		if len(topic) > 0 {
			tp.Topic = topic[0]
		}
		p := kmsg.NewEndQuorumEpochResponseTopicPartition()
		p.LeaderID, p.LeaderEpoch = 1, 1
		tp.Partitions = append(tp.Partitions, p)
		r.Topics = append(r.Topics, tp)
		c.respond(o, r)
	}
	ack(ends[0])
	c.respond(ends[1], kmsg.NewPtrEndQuorumEpochResponse()) // malformed: retried
	c.advance(c.cfg.RetryBackoff)
	again := sentOf(c.takeSent(), 54)
	if len(again) != 1 || again[0].To != ends[1].To {
		t.Fatalf("resent to %v, want only the unacknowledged voter %d", again, ends[1].To)
	}
	ack(again[0], "another-topic") // not the raft partition: retried
	c.advance(c.cfg.RetryBackoff)
	if again = sentOf(c.takeSent(), 54); len(again) != 1 || again[0].To != ends[1].To {
		t.Fatalf("after an answer for another topic, resent to %v, want voter %d", again, ends[1].To)
	}
}

func TestDescribeQuorum(t *testing.T) {
	c := newCtx(t, 1, withPreVote(false))
	dq := func() kmsg.DescribeQuorumResponseTopicPartition {
		r := kmsg.NewPtrDescribeQuorumRequest()
		r.Version = 2
		tp := kmsg.NewDescribeQuorumRequestTopic()
		tp.Topic = topics.ClusterMetadata
		tp.Partitions = append(tp.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
		r.Topics = append(r.Topics, tp)
		return c.request(r).(*kmsg.DescribeQuorumResponse).Topics[0].Partitions[0]
	}
	if p := dq(); p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("non-leader answered %d", p.ErrorCode)
	}
	c.electLocal()
	c.request(fetchReq(2, 1, 1, 1, 0))
	c.request(fetchReq(9, 1, 0, 0, 0)) // observer
	p := dq()
	if p.ErrorCode != 0 || p.LeaderID != 1 || p.LeaderEpoch != 1 || p.HighWatermark != 1 {
		t.Fatalf("describe: %+v", p)
	}
	if len(p.CurrentVoters) != 3 || len(p.Observers) != 1 || p.Observers[0].ReplicaID != 9 {
		t.Fatalf("voters %+v observers %+v", p.CurrentVoters, p.Observers)
	}
	for _, v := range p.CurrentVoters {
		switch v.ReplicaID {
		case 1:
			if v.LastFetchTimestamp != c.now.UnixMilli() || v.LogEndOffset != 1 {
				t.Errorf("leader entry %+v", v)
			}
		case 2:
			if v.LogEndOffset != 1 || v.LastCaughtUpTimestamp != c.now.UnixMilli() {
				t.Errorf("voter 2 entry %+v", v)
			}
		case 3:
			if v.LogEndOffset != -1 || v.LastFetchTimestamp != -1 {
				t.Errorf("voter 3 entry %+v", v)
			}
		}
	}
	c.advance(6 * time.Minute)
	c.wantRole(raft.RoleResigned, 1) // check quorum
}

func TestVoterChangesRefused(t *testing.T) {
	c := newCtx(t, 1, withVoters(1), withLinger(0))
	add := kmsg.NewPtrAddRaftVoterRequest()
	add.ClusterID = strp(testCluster)
	add.VoterID = 4
	add.VoterDirectoryID = [16]byte{1}
	if r := c.request(add).(*kmsg.AddRaftVoterResponse); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("add voter without a default-listener endpoint: %d, want INVALID_REQUEST", r.ErrorCode)
	}
	l := kmsg.NewAddRaftVoterRequestListener()
	l.Name, l.Host, l.Port = "CONTROLLER", "localhost", 9004
	add.Listeners = append(add.Listeners, l)
	if r := c.request(add).(*kmsg.AddRaftVoterResponse); r.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Errorf("add voter: %d, want UNSUPPORTED_VERSION", r.ErrorCode)
	}
	add.VoterDirectoryID = [16]byte{}
	if r := c.request(add).(*kmsg.AddRaftVoterResponse); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("add voter without directory id: %d", r.ErrorCode)
	}
	rm := kmsg.NewPtrRemoveRaftVoterRequest()
	rm.ClusterID = strp("x")
	if r := c.request(rm).(*kmsg.RemoveRaftVoterResponse); r.ErrorCode != kerr.InconsistentClusterID.Code || r.ErrorMessage == nil {
		t.Errorf("remove voter, wrong cluster: %d", r.ErrorCode)
	}
	up := kmsg.NewPtrUpdateRaftVoterRequest()
	up.ClusterID = strp(testCluster)
	up.CurrentLeaderEpoch = 7
	if r := c.request(up).(*kmsg.UpdateRaftVoterResponse); r.ErrorCode != kerr.UnknownLeaderEpoch.Code || r.CurrentLeader.LeaderEpoch != 1 {
		t.Errorf("update voter, newer epoch: %d leader %+v", r.ErrorCode, r.CurrentLeader)
	}
}

func TestListenerPanicIsIsolated(t *testing.T) {
	c := newCtx(t, 1, withVoters(1), withLinger(0))
	bad := &recListener{panicOn: "commit"}
	good := &recListener{}
	c.d.Register(bad)
	c.d.Register(good)
	if _, err := c.d.Append(c.now, 1, [][]byte{[]byte("a")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.d.Append(c.now, 1, [][]byte{[]byte("b")}); err != nil {
		t.Fatal(err)
	}
	c.poll()
	if len(good.commits) == 0 || good.commits[len(good.commits)-1].LastOffset != 2 {
		t.Fatalf("healthy listener got %+v", good.commits)
	}
	if c.status().HighWatermark != 3 {
		t.Fatalf("replication stopped: %+v", c.status())
	}
}

// reentrantListener appends from inside HandleCommit and resigns from
// inside HandleLeaderChange, as a state machine on the driver goroutine may.
type reentrantListener struct {
	recListener
	d       *raft.Driver
	c       *tctx
	appends int
	resign  bool
}

func (l *reentrantListener) HandleCommit(b []raft.CommittedBatch) {
	l.recListener.HandleCommit(b)
	if l.appends < 3 {
		l.appends++
		if _, err := l.d.Append(l.c.now, 1, [][]byte{[]byte("from-listener")}); err != nil {
			l.c.t.Errorf("append from listener: %v", err)
		}
	}
}

func (l *reentrantListener) HandleLeaderChange(le raft.LeaderAndEpoch) {
	l.recListener.HandleLeaderChange(le)
	if l.resign && le.LeaderID == 1 {
		if err := l.d.Resign(l.c.now, le.Epoch); err != nil {
			l.c.t.Errorf("resign from listener: %v", err)
		}
	}
}

func TestListenerMayCallDriver(t *testing.T) {
	c := newCtx(t, 1, withVoters(1), withLinger(0))
	l := &reentrantListener{d: c.d, c: c}
	c.d.Register(l)
	for i := 0; i < 5; i++ {
		next := c.poll()
		if next.After(c.now) {
			break
		}
	}
	if l.appends != 3 || len(l.commits) < 4 || c.status().HighWatermark != 4 {
		t.Fatalf("appends %d commits %d HW %d: appends from the listener did not commit", l.appends, len(l.commits), c.status().HighWatermark)
	}
	c2 := newCtx(t, 1, withPreVote(false))
	l2 := &reentrantListener{d: c2.d, c: c2, appends: 3, resign: true}
	c2.d.Register(l2)
	c2.electLocal()
	c2.request(fetchReq(2, 1, 1, 1, 0)) // commits the LeaderChange: leadership announced
	// The resign asked from the callback takes effect at the next round,
	// which the driver asks for at once.
	if next := c2.poll(); next.After(c2.now) && c2.status().Role != raft.RoleResigned {
		t.Fatalf("resign pending but next poll at %v (now %v)", next, c2.now)
	}
	c2.poll()
	c2.wantRole(raft.RoleResigned, 1)
}
