package raft_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/topics"
)

func snapshotResp(leader, epoch int32, id raft.OffsetAndEpoch, size, pos int64, data []byte) *kmsg.FetchSnapshotResponse {
	r := kmsg.NewPtrFetchSnapshotResponse()
	t := kmsg.NewFetchSnapshotResponseTopic()
	t.Topic = topics.ClusterMetadata
	p := kmsg.NewFetchSnapshotResponseTopicPartition()
	p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = leader, epoch
	p.SnapshotID.EndOffset, p.SnapshotID.Epoch = id.Offset, id.Epoch
	p.Size, p.Position, p.Bytes = size, pos, data
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	return r
}

func TestFollowerDownloadsSnapshot(t *testing.T) {
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 4, LeaderID: 2, VotedID: -1}))
	l := &recListener{}
	c.d.Register(l)
	c.poll()
	f := sentOf(c.takeSent(), 1)
	id := raft.OffsetAndEpoch{Offset: 50, Epoch: 3}
	r := fetchResp(2, 4, 50, nil)
	r.Topics[0].Partitions[0].SnapshotID.EndOffset = id.Offset
	r.Topics[0].Partitions[0].SnapshotID.Epoch = id.Epoch
	c.respond(f[0], r)
	// Regular fetches pause; FetchSnapshot from position 0.
	out := c.takeSent()
	if len(sentOf(out, 1)) != 0 || len(sentOf(out, 59)) != 1 {
		t.Fatalf("after a snapshot id: sent %v", out)
	}
	fs := sentOf(out, 59)[0]
	p := fs.Request.(*kmsg.FetchSnapshotRequest).Topics[0].Partitions[0]
	if p.Position != 0 || p.SnapshotID.EndOffset != 50 || p.SnapshotID.Epoch != 3 || p.CurrentLeaderEpoch != 4 {
		t.Fatalf("fetch snapshot request %+v", p)
	}
	data := []byte("0123456789abcdefghij")
	c.respond(fs, snapshotResp(2, 4, id, 20, 0, data[:8]))
	fs = sentOf(c.takeSent(), 59)[0]
	if pos := fs.Request.(*kmsg.FetchSnapshotRequest).Topics[0].Partitions[0].Position; pos != 8 {
		t.Fatalf("resume position %d, want 8", pos)
	}
	// A chunk at the wrong position is dropped.
	c.respond(fs, snapshotResp(2, 4, id, 20, 4, data[4:12]))
	c.advance(c.cfg.RetryBackoff)
	fs = sentOf(c.takeSent(), 59)[0]
	c.respond(fs, snapshotResp(2, 4, id, 20, 8, data[8:]))
	if got, ok := c.log.LatestSnapshot(); !ok || got != id {
		t.Fatalf("latest snapshot %v %v, want %v", got, ok, id)
	}
	if c.log.StartOffset() != 50 || c.log.EndOffset().Offset != 50 || c.status().HighWatermark != 50 {
		t.Fatalf("log start %d end %d HW %d, want 50", c.log.StartOffset(), c.log.EndOffset().Offset, c.status().HighWatermark)
	}
	if len(l.loads) != 1 || l.loads[0] != id {
		t.Fatalf("listener loads %v", l.loads)
	}
	f = sentOf(c.takeSent(), 1)
	if len(f) != 1 || f[0].Request.(*kmsg.FetchRequest).Topics[0].Partitions[0].FetchOffset != 50 {
		t.Fatalf("fetching did not resume at 50: %v", f)
	}
}

func TestFollowerAbandonsMissingSnapshot(t *testing.T) {
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 4, LeaderID: 2, VotedID: -1}))
	c.poll()
	f := sentOf(c.takeSent(), 1)
	r := fetchResp(2, 4, 50, nil)
	r.Topics[0].Partitions[0].SnapshotID.EndOffset = 50
	r.Topics[0].Partitions[0].SnapshotID.Epoch = 3
	c.respond(f[0], r)
	fs := sentOf(c.takeSent(), 59)[0]
	nf := snapshotResp(2, 4, raft.OffsetAndEpoch{Offset: 50, Epoch: 3}, 0, 0, nil)
	nf.Topics[0].Partitions[0].ErrorCode = kerr.SnapshotNotFound.Code
	c.respond(fs, nf)
	c.advance(c.cfg.RetryBackoff)
	if out := c.takeSent(); len(sentOf(out, 1)) != 1 {
		t.Fatalf("did not go back to Fetch: %v", out)
	}
	if _, ok := c.log.LatestSnapshot(); ok {
		t.Fatalf("partial snapshot kept")
	}
	// Invalid snapshot ids in a Fetch answer are refused.
	c.advance(c.cfg.RetryBackoff)
	for _, f := range sentOf(c.takeSent(), 1) {
		r := fetchResp(2, 4, 50, nil)
		r.Topics[0].Partitions[0].SnapshotID.EndOffset = 50
		r.Topics[0].Partitions[0].SnapshotID.Epoch = -1
		c.respond(f, r)
	}
	if out := c.takeSent(); len(sentOf(out, 59)) != 0 {
		t.Fatalf("followed an invalid snapshot id")
	}
}

func TestTopLevelErrorsBackOff(t *testing.T) {
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 4, LeaderID: 2, VotedID: -1}))
	c.poll()
	f := sentOf(c.takeSent(), 1)
	r := kmsg.NewPtrFetchResponse()
	r.ErrorCode = kerr.InconsistentClusterID.Code
	c.respond(f[0], r)
	c.poll()
	if n := len(sentOf(c.takeSent(), 1)); n != 0 {
		t.Fatalf("refetched without backing off")
	}
	c.advance(c.cfg.RetryBackoff)
	if n := len(sentOf(c.takeSent(), 1)); n != 1 {
		t.Fatalf("no fetch after the backoff")
	}
	// A response to a request that is not in flight is ignored.
	c.respond(f[0], fetchResp(2, 4, 10, dataBatch(0, 4, 1)))
	if c.log.EndOffset().Offset != 0 {
		t.Fatalf("stale response appended")
	}
}

func fetchSnapshotReq(epoch int32, id raft.OffsetAndEpoch, pos int64) *kmsg.FetchSnapshotRequest {
	r := kmsg.NewPtrFetchSnapshotRequest()
	r.Version = 1
	r.ClusterID = strp(testCluster)
	r.ReplicaID = 2
	r.MaxBytes = 1 << 20
	tp := kmsg.NewFetchSnapshotRequestTopic()
	tp.Topic = topics.ClusterMetadata
	pp := kmsg.NewFetchSnapshotRequestTopicPartition()
	pp.CurrentLeaderEpoch = epoch
	pp.SnapshotID.EndOffset, pp.SnapshotID.Epoch = id.Offset, id.Epoch
	pp.Position = pos
	tp.Partitions = append(tp.Partitions, pp)
	r.Topics = append(r.Topics, tp)
	return r
}

func TestLeaderFetchSnapshotErrors(t *testing.T) {
	c := newCtx(t, 1, withPreVote(false))
	id := raft.OffsetAndEpoch{Offset: 1, Epoch: 1}
	top := func(r kmsg.Response) (int16, *kmsg.FetchSnapshotResponseTopicPartition) {
		v := r.(*kmsg.FetchSnapshotResponse)
		if len(v.Topics) == 0 {
			return v.ErrorCode, nil
		}
		return v.ErrorCode, &v.Topics[0].Partitions[0]
	}
	// Not leader yet.
	if _, p := top(c.request(fetchSnapshotReq(0, id, 0))); p == nil || p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("non-leader: %+v", p)
	}
	c.electLocal()
	r := fetchSnapshotReq(1, id, 0)
	r.ClusterID = strp("")
	if e, _ := top(c.request(r)); e != kerr.InconsistentClusterID.Code {
		t.Errorf("cluster id: %d", e)
	}
	r = fetchSnapshotReq(1, id, 0)
	r.Topics = nil
	if e, _ := top(c.request(r)); e != kerr.InvalidRequest.Code {
		t.Errorf("no topics: %d", e)
	}
	r = fetchSnapshotReq(1, id, 0)
	r.Topics[0].Topic = "other"
	if _, p := top(c.request(r)); p == nil || p.ErrorCode != kerr.UnknownTopicOrPartition.Code || p.CurrentLeader.LeaderEpoch != 0 { // JVM: CurrentLeader left at 0/0 (omitted)
		t.Errorf("wrong topic: %+v", p)
	}
	if _, p := top(c.request(fetchSnapshotReq(0, id, 0))); p.ErrorCode != kerr.FencedLeaderEpoch.Code || p.CurrentLeader.LeaderEpoch != 1 {
		t.Errorf("older epoch: %+v", p)
	}
	if _, p := top(c.request(fetchSnapshotReq(2, id, 0))); p.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Errorf("newer epoch: %+v", p)
	}
	if _, p := top(c.request(fetchSnapshotReq(1, id, 0))); p.ErrorCode != kerr.SnapshotNotFound.Code || p.CurrentLeader.LeaderID != 1 {
		t.Errorf("unknown snapshot: %+v", p)
	}
	if _, p := top(c.request(fetchSnapshotReq(1, raft.OffsetAndEpoch{}, 0))); p.ErrorCode != kerr.SnapshotNotFound.Code {
		t.Errorf("bootstrap snapshot 0-0: %+v", p)
	}
	w, _ := c.log.CreateSnapshot(id)
	_, _ = w.Write([]byte("abc"))
	_ = w.Freeze()
	if _, p := top(c.request(fetchSnapshotReq(1, id, -1))); p.ErrorCode != kerr.PositionOutOfRange.Code {
		t.Errorf("negative position: %+v", p)
	}
	if _, p := top(c.request(fetchSnapshotReq(1, id, 1))); p.ErrorCode != 0 || string(p.Bytes) != "bc" || p.Size != 3 {
		t.Errorf("valid: %+v", p)
	}
}
