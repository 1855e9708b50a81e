package raft_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/raft/rafttest"
	"github.com/kraftd/kraftd/topics"
)

func TestLeaderFetchValidationOrder(t *testing.T) {
	c := newCtx(t, 1, withPreVote(false))
	c.electLocal() // epoch 1, LeaderChange at offset 0

	r := fetchReq(2, 1, 0, 0, 0)
	r.ClusterID = strp("")
	if top, _ := fetchPart(c.request(r)); top != kerr.InconsistentClusterID.Code {
		t.Errorf("cluster id \"\": %d", top)
	}
	r = fetchReq(2, 1, 0, 0, 0)
	r.Topics[0].TopicID = topics.RaftPerformanceTestID
	if top, _ := fetchPart(c.request(r)); top != kerr.InvalidRequest.Code {
		t.Errorf("wrong topic id: %d", top)
	}
	r = fetchReq(2, 1, 0, 0, 0)
	r.Version = 12
	if top, _ := fetchPart(c.request(r)); top != kerr.InvalidRequest.Code {
		t.Errorf("v12 (no topic id): %d", top)
	}
	cases := []struct {
		name               string
		epoch              int32
		offset             int64
		lastEpoch, maxWait int32
		want               int16
	}{
		{"negative offset", 1, -1, 0, 0, kerr.InvalidRequest.Code},
		{"negative last epoch", 1, 0, -1, 0, kerr.InvalidRequest.Code},
		{"last epoch above current", 1, 0, 2, 0, kerr.InvalidRequest.Code},
		{"negative max wait", 1, 0, 0, -1, kerr.InvalidRequest.Code},
		{"older epoch", 0, 0, 0, 0, kerr.FencedLeaderEpoch.Code},
		{"newer epoch", 2, 0, 0, 0, kerr.UnknownLeaderEpoch.Code},
	}
	for _, tc := range cases {
		_, p := fetchPart(c.request(fetchReq(2, tc.epoch, tc.offset, tc.lastEpoch, tc.maxWait)))
		if p.ErrorCode != tc.want {
			t.Errorf("%s: error %d, want %d", tc.name, p.ErrorCode, tc.want)
		}
		if p.HighWatermark != -1 || p.CurrentLeader.LeaderID != 1 || p.CurrentLeader.LeaderEpoch != 1 {
			t.Errorf("%s: HW %d leader %+v, want -1 and CurrentLeader {1 1}", tc.name, p.HighWatermark, p.CurrentLeader)
		}
		if p.DivergingEpoch.Epoch != -1 || p.SnapshotID.Epoch != -1 {
			t.Errorf("%s: diverging %+v snapshot %+v must stay at -1", tc.name, p.DivergingEpoch, p.SnapshotID)
		}
	}
}

func TestLeaderHighWatermarkNeedsMajorityInEpoch(t *testing.T) {
	c := newCtx(t, 1, withPreVote(false), withLogBatches(0, 0)) // 2 records from epoch 0... epoch 0 has no leader but tests the rule
	c.electLocal()
	leo := c.log.EndOffset().Offset // 3: two old records + LeaderChange
	// Follower 2 has the old records only: HW stays unknown.
	_, p := fetchPart(c.request(fetchReq(2, 1, 2, 0, 0)))
	if p.ErrorCode != 0 || p.HighWatermark != -1 || len(p.RecordBatches) == 0 {
		t.Fatalf("fetch at 2: error %d HW %d records %d, want HW -1 and the LeaderChange batch", p.ErrorCode, p.HighWatermark, len(p.RecordBatches))
	}
	if hw := c.status().HighWatermark; hw != -1 {
		t.Fatalf("HW %d before an entry of the epoch is on a majority", hw)
	}
	// Follower 2 acknowledges the LeaderChange: majority (1, 2).
	_, p = fetchPart(c.request(fetchReq(2, 1, leo, 1, 0)))
	if p.HighWatermark != leo {
		t.Fatalf("HW %d, want %d", p.HighWatermark, leo)
	}
	// An observer's fetch never moves the HW.
	last, err := c.d.Append(c.now, 1, [][]byte{[]byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	c.advance(c.cfg.AppendLinger)
	c.request(fetchReq(7, 1, last+1, 1, 0))
	if hw := c.status().HighWatermark; hw != leo {
		t.Fatalf("observer moved the HW to %d", hw)
	}
	// A lower fetch offset from a voter never lowers the HW.
	c.request(fetchReq(2, 1, 1, 0, 0))
	if hw := c.status().HighWatermark; hw != leo {
		t.Fatalf("HW went from %d to %d", leo, hw)
	}
}

func TestLeaderFetchDivergence(t *testing.T) {
	// Leader log: epoch 1 [0,2), epoch 3 [2,3) then LeaderChange of epoch 4.
	c := newCtx(t, 1, withPreVote(false), withLogBatches(1, 1, 3),
		withState(raft.ElectionState{Epoch: 3, LeaderID: -1, VotedID: -1}))
	c.electLocal()
	c.wantRole(raft.RoleLeader, 4)
	// Follower with epoch 2 data at offsets 2..4: diverges at end of epoch 1.
	_, p := fetchPart(c.request(fetchReq(2, 4, 5, 2, 0)))
	if p.DivergingEpoch.Epoch != 1 || p.DivergingEpoch.EndOffset != 2 || len(p.RecordBatches) != 0 {
		t.Fatalf("diverging %+v records %d, want epoch 1 end 2", p.DivergingEpoch, len(p.RecordBatches))
	}
	// Follower ahead in the last epoch.
	_, p = fetchPart(c.request(fetchReq(2, 4, 9, 3, 0)))
	if p.DivergingEpoch.Epoch != 3 || p.DivergingEpoch.EndOffset != 3 {
		t.Fatalf("diverging %+v, want epoch 3 end 3", p.DivergingEpoch)
	}
	// A diverging answer does not count as a fetch for the HW.
	if hw := c.status().HighWatermark; hw != -1 {
		t.Fatalf("HW %d after diverging fetches", hw)
	}
	// Consistent position: valid, records returned.
	_, p = fetchPart(c.request(fetchReq(2, 4, 3, 3, 0)))
	if p.DivergingEpoch.Epoch != -1 || len(p.RecordBatches) == 0 {
		t.Fatalf("valid fetch: diverging %+v records %d", p.DivergingEpoch, len(p.RecordBatches))
	}
}

func TestLeaderParksFetchUntilAppend(t *testing.T) {
	c := newCtx(t, 1, withPreVote(false))
	c.electLocal()
	leo := c.log.EndOffset().Offset
	// The first fetch at the log end moves the HW: it is answered at once
	// so the follower learns the HW.
	if r := c.request(fetchReq(2, 1, leo, 1, 500)); r == nil {
		t.Fatalf("fetch that moved the HW was parked")
	} else if _, p := fetchPart(r); p.HighWatermark != leo {
		t.Fatalf("HW %d, want %d", p.HighWatermark, leo)
	}
	if r := c.request(fetchReq(2, 1, leo, 1, 500)); r != nil {
		t.Fatalf("fetch at the log end was answered at once")
	}
	before := len(c.tr.replies)
	if _, err := c.d.Append(c.now, 1, [][]byte{[]byte("a")}); err != nil {
		t.Fatal(err)
	}
	if len(c.tr.replies) != before {
		t.Fatalf("parked fetch answered before the linger expired")
	}
	c.advance(c.cfg.AppendLinger)
	if len(c.tr.replies) != before+1 {
		t.Fatalf("parked fetch not answered after the append was flushed")
	}
	_, p := fetchPart(c.tr.replies[before].resp)
	if len(p.RecordBatches) == 0 || p.ErrorCode != 0 {
		t.Fatalf("woken fetch: error %d, %d record bytes", p.ErrorCode, len(p.RecordBatches))
	}
	// Expiry: answered empty after MaxWaitMs (once the HW is settled).
	c.request(fetchReq(2, 1, c.log.EndOffset().Offset, 1, 0))
	if r := c.request(fetchReq(3, 1, c.log.EndOffset().Offset, 1, 500)); r != nil {
		t.Fatalf("fetch answered at once")
	}
	n := len(c.tr.replies)
	c.advance(c.cfg.MaxFetchWait)
	if len(c.tr.replies) != n+1 {
		t.Fatalf("parked fetch not answered at MaxWaitMs")
	}
	// Leadership ends: parked fetches get NOT_LEADER_OR_FOLLOWER.
	c.request(fetchReq(3, 1, c.log.EndOffset().Offset, 1, 500))
	n = len(c.tr.replies)
	if err := c.d.Resign(c.now, 1); err != nil {
		t.Fatal(err)
	}
	if len(c.tr.replies) != n+1 {
		t.Fatalf("parked fetch not completed on resign")
	}
	if _, p := fetchPart(c.tr.replies[n].resp); p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("parked fetch on resign: error %d", p.ErrorCode)
	}
}

func TestLeaderSnapshotAnswer(t *testing.T) {
	c := newCtx(t, 1, withPreVote(false), withLogBatches(1, 1))
	w, err := c.log.CreateSnapshot(raft.OffsetAndEpoch{Offset: 2, Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write([]byte("snapshot-bytes-0123456789"))
	if err := w.Freeze(); err != nil {
		t.Fatal(err)
	}
	c2 := c
	c2.electLocal()
	_, p := fetchPart(c.request(fetchReq(2, 2, 0, 0, 0)))
	if p.SnapshotID.EndOffset != 2 || p.SnapshotID.Epoch != 1 {
		t.Fatalf("fetch at 0 with a snapshot: snapshot id %+v", p.SnapshotID)
	}
	// FetchSnapshot: chunks resumable by position.
	fs := func(pos int64, maxBytes int32) kmsg.FetchSnapshotResponseTopicPartition {
		r := kmsg.NewPtrFetchSnapshotRequest()
		r.Version = 1
		r.ClusterID = strp(testCluster)
		r.ReplicaID = 2
		r.MaxBytes = maxBytes
		tp := kmsg.NewFetchSnapshotRequestTopic()
		tp.Topic = topics.ClusterMetadata
		pp := kmsg.NewFetchSnapshotRequestTopicPartition()
		pp.CurrentLeaderEpoch = 2
		pp.SnapshotID.EndOffset, pp.SnapshotID.Epoch = 2, 1
		pp.Position = pos
		tp.Partitions = append(tp.Partitions, pp)
		r.Topics = append(r.Topics, tp)
		resp := c.request(r).(*kmsg.FetchSnapshotResponse)
		return resp.Topics[0].Partitions[0]
	}
	a := fs(0, 10)
	if a.ErrorCode != 0 || string(a.Bytes) != "snapshot-b" || a.Size != 25 || a.CurrentLeader.LeaderID != 1 {
		t.Fatalf("chunk 1: %+v", a)
	}
	b := fs(10, 100)
	if string(b.Bytes) != "ytes-0123456789" || b.Position != 10 {
		t.Fatalf("chunk 2: %q at %d", b.Bytes, b.Position)
	}
	if e := fs(25, 10); e.ErrorCode != kerr.PositionOutOfRange.Code {
		t.Fatalf("position at size: %d", e.ErrorCode)
	}
}

func TestFollowerAppendsFlushesAndClampsHW(t *testing.T) {
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 2, LeaderID: 2, VotedID: -1}))
	l := &recListener{}
	c.d.Register(l)
	c.poll()
	f := sentOf(c.takeSent(), 1)
	if len(f) != 1 {
		t.Fatalf("follower sent %d fetches", len(f))
	}
	p := f[0].Request.(*kmsg.FetchRequest).Topics[0].Partitions[0]
	if p.FetchOffset != 0 || p.CurrentLeaderEpoch != 2 {
		t.Fatalf("fetch %+v", p)
	}
	recs := append(dataBatch(0, 1, 2), dataBatch(2, 2, 3)...)
	c.respond(f[0], fetchResp(2, 2, 100, recs))
	if end := c.log.EndOffset().Offset; end != 5 || c.log.FlushedOffset() != 5 {
		t.Fatalf("log end %d flushed %d, want 5 flushed", end, c.log.FlushedOffset())
	}
	if hw := c.status().HighWatermark; hw != 5 {
		t.Fatalf("HW %d, want min(leader HW 100, LEO 5)", hw)
	}
	if len(l.commits) != 2 || l.commits[1].LastOffset != 4 {
		t.Fatalf("listener got %+v", l.commits)
	}
	// Next fetch goes out at once from the new end.
	f = sentOf(c.takeSent(), 1)
	if len(f) != 1 || f[0].Request.(*kmsg.FetchRequest).Topics[0].Partitions[0].FetchOffset != 5 {
		t.Fatalf("next fetch %v", f)
	}
	// Divergence below the HW is refused; nothing truncated.
	r := fetchResp(2, 2, 5, nil)
	r.Topics[0].Partitions[0].DivergingEpoch.Epoch = 1
	r.Topics[0].Partitions[0].DivergingEpoch.EndOffset = 2
	c.respond(f[0], r)
	if end := c.log.EndOffset().Offset; end != 5 {
		t.Fatalf("truncated below the HW to %d", end)
	}
	// A corrupt batch is rejected, not appended, and not fatal.
	c.advance(c.cfg.RetryBackoff)
	f = sentOf(c.takeSent(), 1)
	bad := dataBatch(5, 2, 1)
	bad[len(bad)-1] ^= 0xff
	c.respond(f[0], fetchResp(2, 2, 6, bad))
	if end := c.log.EndOffset().Offset; end != 5 {
		t.Fatalf("corrupt batch appended: end %d", end)
	}
}

func TestFollowerTruncatesAtDivergence(t *testing.T) {
	c := newCtx(t, 1, withLogBatches(1, 1, 2, 2), withState(raft.ElectionState{Epoch: 3, LeaderID: 2, VotedID: -1}))
	c.poll()
	f := sentOf(c.takeSent(), 1)
	r := fetchResp(2, 3, -1, nil)
	r.Topics[0].Partitions[0].DivergingEpoch.Epoch = 1
	r.Topics[0].Partitions[0].DivergingEpoch.EndOffset = 2
	c.respond(f[0], r)
	if end := c.log.EndOffset(); end.Offset != 2 || end.Epoch != 1 {
		t.Fatalf("log end %+v, want 2 at epoch 1", end)
	}
}

func TestFollowerLearnsNewLeaderFromFetchResponse(t *testing.T) {
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 2, LeaderID: 2, VotedID: -1}))
	c.poll()
	f := sentOf(c.takeSent(), 1)
	r := fetchResp(3, 4, -1, dataBatch(0, 4, 1))
	r.Topics[0].Partitions[0].ErrorCode = kerr.FencedLeaderEpoch.Code
	c.respond(f[0], r)
	c.wantRole(raft.RoleFollower, 4)
	if c.status().LeaderID != 3 || c.log.EndOffset().Offset != 0 {
		t.Fatalf("status %+v log end %d: want leader 3 and no records consumed", c.status(), c.log.EndOffset().Offset)
	}
	// A response naming this node leader of an epoch it does not lead is refused.
	c.poll()
	f = sentOf(c.takeSent(), 1)
	r = fetchResp(1, 5, -1, nil)
	r.Topics[0].Partitions[0].ErrorCode = kerr.NotLeaderForPartition.Code
	c.respond(f[0], r)
	c.wantRole(raft.RoleFollower, 4)
}

func TestFollowerFetchTimeoutStartsElection(t *testing.T) {
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 2, LeaderID: 2, VotedID: -1}))
	c.advance(c.cfg.FetchTimeout - 1)
	c.wantRole(raft.RoleFollower, 2)
	c.advance(1)
	c.wantRole(raft.RoleProspective, 2)
}

func TestFollowerFlushFailureIsFatal(t *testing.T) {
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 2, LeaderID: 2, VotedID: -1}))
	c.poll()
	f := sentOf(c.takeSent(), 1)
	c.flog.FailFlush = true
	f[0].Request.SetVersion(17)
	resp := fetchResp(2, 2, 1, dataBatch(0, 2, 1))
	resp.SetVersion(17)
	if err := c.d.Step(c.now, raft.Message{From: f[0].To, Corr: f[0].Corr, Response: resp}); err == nil {
		t.Fatalf("flush failure not reported")
	}
	if len(c.takeSent()) != 0 {
		t.Fatalf("requests sent after a fatal flush failure")
	}
	if c.status().HighWatermark >= 0 {
		t.Fatalf("HW advanced over unflushed data")
	}
}

func TestLeaderFlushFailureIsFatal(t *testing.T) {
	c := newCtx(t, 1, withVoters(1), withLinger(0))
	c.flog.FailFlush = true
	// With linger 0 the append drains in the same round: the failed fsync
	// is reported by Append itself, and by every later call.
	if _, err := c.d.Append(c.now, 1, [][]byte{[]byte("a")}); err == nil {
		t.Fatalf("leader flush failure not reported by Append")
	}
	if _, err := c.d.Poll(c.now); err == nil {
		t.Fatalf("leader flush failure not reported by Poll")
	}
	if c.status().HighWatermark > 1 {
		t.Fatalf("HW %d covers the unflushed append", c.status().HighWatermark)
	}
}

func TestObserverDiscoversLeaderThroughBootstrap(t *testing.T) {
	c := newCtx(t, 7, func(c *tctx) {
		c.cfg.Bootstrap = []raft.Endpoint{{Host: "a", Port: 1}, {Host: "b", Port: 2}}
	})
	c.wantRole(raft.RoleUnattached, 0)
	c.poll()
	f := sentOf(c.takeSent(), 1)
	if len(f) != 1 || f[0].To > -2 {
		t.Fatalf("observer sent %v, want one Fetch to a bootstrap id", f)
	}
	r := fetchResp(2, 3, -1, nil)
	r.Topics[0].Partitions[0].ErrorCode = kerr.NotLeaderForPartition.Code
	c.respond(f[0], r)
	c.wantRole(raft.RoleFollower, 3)
	f = sentOf(c.takeSent(), 1)
	if len(f) != 1 || f[0].To != 2 {
		t.Fatalf("observer fetches from %v, want leader 2", f)
	}
	// Observers never start elections.
	c.advance(10 * c.cfg.FetchTimeout)
	if r := c.status().Role; r == raft.RoleProspective || r == raft.RoleCandidate {
		t.Fatalf("observer became %s", r)
	}
}

func TestFollowerRefusesBadDivergence(t *testing.T) {
	c := newCtx(t, 1, withLogBatches(1, 1), withState(raft.ElectionState{Epoch: 3, LeaderID: 2, VotedID: -1}))
	for _, div := range []struct {
		epoch int32
		end   int64
	}{{1, -5}, {0, -1}} {
		c.advance(c.cfg.RetryBackoff)
		f := sentOf(c.takeSent(), 1)
		if len(f) != 1 {
			t.Fatalf("no fetch to answer")
		}
		r := fetchResp(2, 3, -1, nil)
		r.Topics[0].Partitions[0].DivergingEpoch.Epoch = div.epoch
		r.Topics[0].Partitions[0].DivergingEpoch.EndOffset = div.end
		c.respond(f[0], r)
		if end := c.log.EndOffset().Offset; end != 2 {
			t.Fatalf("diverging %+v: log truncated to %d", div, end)
		}
	}
}

func TestLeaderAnswersStaleHighWatermarkAtOnce(t *testing.T) {
	c := newCtx(t, 1, withPreVote(false))
	c.electLocal()
	leo := c.log.EndOffset().Offset
	c.request(fetchReq(2, 1, leo, 1, 0)) // HW = leo
	r := fetchReq(3, 1, leo, 1, 500)
	r.Version = 18
	r.Topics[0].Partitions[0].HighWatermark = leo - 1
	resp := c.request(r)
	if resp == nil {
		t.Fatalf("v18 fetch with a stale HW was parked")
	}
	if _, p := fetchPart(resp); p.HighWatermark != leo {
		t.Fatalf("HW %d, want %d", p.HighWatermark, leo)
	}
	r = fetchReq(3, 1, leo, 1, 500)
	r.Version = 18
	r.Topics[0].Partitions[0].HighWatermark = leo
	if c.request(r) != nil {
		t.Fatalf("v18 fetch with a current HW was answered at once")
	}
}

type learningTransport struct {
	fakeTransport
	learned   []string
	forgotten []int32
}

func (l *learningTransport) LearnEndpoint(id int32, host string, port int32) {
	l.learned = append(l.learned, fmt.Sprintf("%d=%s:%d", id, host, port))
}

func (l *learningTransport) ForgetEndpoint(id int32) { l.forgotten = append(l.forgotten, id) }

func TestObserverLearnsLeaderEndpoint(t *testing.T) {
	lt := &learningTransport{}
	cfg := raft.DefaultConfig()
	cfg.NodeID = -1
	cfg.ClusterID = testCluster
	cfg.ListenerName = "CONTROLLER"
	cfg.Bootstrap = []raft.Endpoint{{Host: "b", Port: 1}}
	d, err := raft.NewDriver(cfg, rafttest.NewMemLog(), rafttest.NewMemStateStore(), lt, rand.New(rand.NewPCG(1, 0)), zap.NewNop(), time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(0, 0)
	if _, err := d.Poll(now); err != nil {
		t.Fatal(err)
	}
	if len(lt.sent) != 1 || lt.sent[0].To != -2 {
		t.Fatalf("sent %v", lt.sent)
	}
	o := lt.sent[0]
	for i := 0; i < 2; i++ {
		r := fetchResp(5, 3, -1, nil)
		if i == 0 { // the bootstrap server names the leader; then the leader answers
			r.Topics[0].Partitions[0].ErrorCode = kerr.NotLeaderForPartition.Code
		}
		b := kmsg.NewFetchResponseBroker()
		b.NodeID, b.Host, b.Port = 5, "leader.host", 9093
		r.Brokers = append(r.Brokers, b)
		r.SetVersion(17)
		if err := d.Step(now, raft.Message{From: o.To, Corr: o.Corr, Response: r}); err != nil {
			t.Fatal(err)
		}
		o = lt.sent[len(lt.sent)-1]
	}
	if len(lt.learned) != 1 || lt.learned[0] != "5=leader.host:9093" {
		t.Fatalf("learned %v, want the leader's address once", lt.learned)
	}
	if st := d.Status(); st.Role != raft.RoleFollower || st.LeaderID != 5 {
		t.Fatalf("status %+v", st)
	}
	if o.To != 5 {
		t.Fatalf("next fetch to %d, want the leader 5", o.To)
	}
}

// A peer that advertises ever new node ids cannot grow what the transport
// keeps: past the driver's bound every learned address is forgotten again.
func TestLearnedEndpointsStayBounded(t *testing.T) {
	lt := &learningTransport{}
	cfg := raft.DefaultConfig()
	cfg.NodeID = -1
	cfg.ClusterID = testCluster
	cfg.ListenerName = "CONTROLLER"
	cfg.Bootstrap = []raft.Endpoint{{Host: "b", Port: 1}}
	now := time.Unix(0, 0)
	d, err := raft.NewDriver(cfg, rafttest.NewMemLog(), rafttest.NewMemStateStore(), lt, rand.New(rand.NewPCG(1, 0)), zap.NewNop(), now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Poll(now); err != nil {
		t.Fatal(err)
	}
	const advertised = 10000
	next := int32(100)
	for next < 100+advertised {
		o := lt.sent[len(lt.sent)-1]
		r := fetchResp(5, 3, -1, nil)
		r.Topics[0].Partitions[0].ErrorCode = kerr.NotLeaderForPartition.Code
		for i := 0; i < 1000; i++ {
			b := kmsg.NewFetchResponseBroker()
			b.NodeID, b.Host, b.Port = next, "h", 9093
			r.Brokers = append(r.Brokers, b)
			next++
		}
		r.SetVersion(17)
		if err := d.Step(now, raft.Message{From: o.To, Corr: o.Corr, Response: r}); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
		if _, err := d.Poll(now); err != nil {
			t.Fatal(err)
		}
	}
	kept := len(lt.learned) - len(lt.forgotten)
	if len(lt.learned) != advertised || kept <= 0 || kept > 4096 {
		t.Fatalf("learned %d, forgotten %d: the transport keeps %d addresses, want 1..4096",
			len(lt.learned), len(lt.forgotten), kept)
	}
	if lt.forgotten[0] != 100 {
		t.Fatalf("first forgotten id %d, want 100 (the oldest)", lt.forgotten[0])
	}
}

// A follower fsyncs once per fetch response that carries records (however
// many batches), before its next Fetch, and never for one without records.
func TestFollowerFlushesOncePerFetchResponse(t *testing.T) {
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 2, LeaderID: 2, VotedID: -1}))
	c.poll()
	f := sentOf(c.takeSent(), 1)
	c.flog.FailFlushAfter = 1 // the first flush succeeds, any second one fails
	f[0].Request.SetVersion(17)
	resp := fetchResp(2, 2, 1, append(dataBatch(0, 2, 2), dataBatch(2, 2, 3)...))
	resp.SetVersion(17)
	if err := c.d.Step(c.now, raft.Message{From: f[0].To, Corr: f[0].Corr, Response: resp}); err != nil {
		t.Fatalf("response with two batches flushed more than once: %v", err)
	}
	if got := c.flog.FlushedOffset(); got != 5 {
		t.Fatalf("flushed offset %d, want 5", got)
	}
	f = sentOf(c.takeSent(), 1)
	if len(f) != 1 || f[0].Request.(*kmsg.FetchRequest).Topics[0].Partitions[0].FetchOffset != 5 {
		t.Fatalf("next fetch %+v, want one at offset 5", f)
	}
	// Only a new HW: nothing to flush.
	f[0].Request.SetVersion(17)
	resp = fetchResp(2, 2, 5, nil)
	resp.SetVersion(17)
	if err := c.d.Step(c.now, raft.Message{From: f[0].To, Corr: f[0].Corr, Response: resp}); err != nil {
		t.Fatalf("response without records flushed: %v", err)
	}
	if c.status().HighWatermark != 5 {
		t.Fatalf("HW %d, want 5", c.status().HighWatermark)
	}
	// The next records need a flush again (the injected failure shows it).
	f = sentOf(c.takeSent(), 1)
	f[0].Request.SetVersion(17)
	resp = fetchResp(2, 2, 5, dataBatch(5, 2, 1))
	resp.SetVersion(17)
	if err := c.d.Step(c.now, raft.Message{From: f[0].To, Corr: f[0].Corr, Response: resp}); err == nil {
		t.Fatalf("records appended without a flush")
	}
}

// A leader's Fetch answer holds whole batches up to MaxReadBytes, and a
// batch larger than that on its own, whatever MaxBytes the follower asked.
func TestLeaderFetchAnswerBoundedByMaxReadBytes(t *testing.T) {
	const maxRead = 2048
	c := newCtx(t, 1, withPreVote(false), withLinger(0), func(c *tctx) { c.cfg.MaxReadBytes = maxRead })
	c.electLocal()
	start := c.log.EndOffset().Offset
	for i := 0; i < 10; i++ { // ten batches of ~570 bytes
		if _, err := c.d.Append(c.now, 1, [][]byte{make([]byte, 500)}); err != nil {
			t.Fatal(err)
		}
	}
	big := c.log.EndOffset().Offset
	if _, err := c.d.Append(c.now, 1, [][]byte{make([]byte, 3*maxRead)}); err != nil {
		t.Fatal(err)
	}
	end := c.log.EndOffset().Offset
	answers := 0
	for off := start; off < end; answers++ {
		req := fetchReq(2, 1, off, 1, 0)
		req.MaxBytes = 8 << 20 // what Kafka's followers ask for
		_, p := fetchPart(c.request(req))
		data := p.RecordBatches
		if p.ErrorCode != 0 || len(data) == 0 {
			t.Fatalf("fetch at %d: error %d, %d bytes", off, p.ErrorCode, len(data))
		}
		batches := 0
		for len(data) > 0 {
			b, rest, err := protocol.DecodeBatch(data)
			if err != nil {
				t.Fatalf("fetch at %d: batch %d of the answer: %v", off, batches, err)
			}
			off, data = b.LastOffset()+1, rest
			batches++
		}
		if n := len(p.RecordBatches); n > maxRead && batches != 1 {
			t.Fatalf("answer of %d bytes (%d batches) past MaxReadBytes %d", n, batches, maxRead)
		}
		if off > big && len(p.RecordBatches) <= maxRead {
			t.Fatalf("the %d-byte batch at %d came in a %d-byte answer", 3*maxRead, big, len(p.RecordBatches))
		}
	}
	if answers < 4 {
		t.Fatalf("%d answers for ~%d bytes with MaxReadBytes %d", answers, 10*570+3*maxRead, maxRead)
	}
}

// A follower receiving records at FetchPaceRate or faster holds its next
// Fetch for FetchPace (and tells the caller when to poll); slower records,
// the first answer of an epoch and answers without records fetch at once.
func TestFollowerPacesFetchesWhileRecordsArriveFast(t *testing.T) {
	const pace = 3 * time.Millisecond
	const rate = 1 << 20 // bytes/s: 3,146 bytes within one pace
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 2, LeaderID: 2, VotedID: -1}), func(c *tctx) {
		c.cfg.FetchPace, c.cfg.FetchPaceRate = pace, rate
	})
	fetchAt := func(off int64) raft.Outbound {
		t.Helper()
		f := sentOf(c.takeSent(), 1)
		if len(f) != 1 || f[0].Request.(*kmsg.FetchRequest).Topics[0].Partitions[0].FetchOffset != off {
			t.Fatalf("sent %+v, want one fetch at offset %d", f, off)
		}
		return f[0]
	}
	c.poll()
	first := dataBatch(0, 2, 1000)
	if len(first) < rate*3/1000 {
		t.Fatalf("test batch of %d bytes is below the rate over one pace", len(first))
	}
	c.respond(fetchAt(0), fetchResp(2, 2, 0, first)) // no earlier answer: no rate yet
	f := fetchAt(1000)
	c.advance(time.Millisecond)
	c.respond(f, fetchResp(2, 2, 0, dataBatch(1000, 2, 1000))) // >= rate over max(1 ms, pace)
	if got := sentOf(c.takeSent(), 1); len(got) != 0 {
		t.Fatalf("fetched at once while records arrive fast: %+v", got)
	}
	if next := c.poll(); !next.Equal(c.now.Add(pace)) {
		t.Fatalf("next poll at %v, want the pace's end %v", next, c.now.Add(pace))
	}
	c.advance(pace - time.Microsecond)
	if got := sentOf(c.takeSent(), 1); len(got) != 0 {
		t.Fatalf("fetched before the pace ended: %+v", got)
	}
	c.advance(time.Microsecond)
	f = fetchAt(2000)
	// The same bytes over 50 ms is below the rate: the next fetch goes at once.
	c.advance(50 * time.Millisecond)
	c.respond(f, fetchResp(2, 2, 0, dataBatch(2000, 2, 1000)))
	f = fetchAt(3000)
	// An answer without records is never paced.
	c.respond(f, fetchResp(2, 2, 3000, nil))
	f = fetchAt(3000)
	// Nor is one that leaves the follower below the leader's high watermark
	// (catching up), however fast its records came.
	c.advance(time.Millisecond)
	c.respond(f, fetchResp(2, 2, 5000, dataBatch(3000, 2, 1000)))
	f = fetchAt(4000)
	// Caught up again at the same rate: paced.
	c.advance(time.Millisecond)
	c.respond(f, fetchResp(2, 2, 5000, dataBatch(4000, 2, 1000)))
	if got := sentOf(c.takeSent(), 1); len(got) != 0 {
		t.Fatalf("fetched at once when caught up at a fast rate: %+v", got)
	}
}

// FetchPace 0 turns pacing off, whatever the rate.
func TestFollowerFetchPaceOff(t *testing.T) {
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 2, LeaderID: 2, VotedID: -1}), func(c *tctx) {
		c.cfg.FetchPace, c.cfg.FetchPaceRate = 0, 1
	})
	c.poll()
	for i := int64(0); i < 3; i++ {
		f := sentOf(c.takeSent(), 1)
		if len(f) != 1 {
			t.Fatalf("pacing off: %d fetches after answer %d, want 1 at once", len(f), i)
		}
		c.respond(f[0], fetchResp(2, 2, 0, dataBatch(i*100, 2, 100)))
	}
}

// A pace that is not below the fetch timeout is refused: a follower paused
// that long would miss its own fetch timeout.
func TestFetchPaceBelowFetchTimeout(t *testing.T) {
	cfg := raft.DefaultConfig()
	cfg.NodeID, cfg.ClusterID = 1, testCluster
	cfg.Voters = []raft.Voter{{ID: 1}}
	cfg.FetchTimeout, cfg.FetchPace = 10*time.Millisecond, 10*time.Millisecond
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "fetch pace 10ms: must be below the fetch timeout 10ms") {
		t.Fatalf("Validate = %v, want the pace refused", err)
	}
	cfg.FetchPace = 9 * time.Millisecond
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate with a pace below the timeout: %v", err)
	}
}
