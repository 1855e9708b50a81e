package hostile

import (
	"context"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Extreme values of MaxValues.
const (
	maxEpoch  = math.MaxInt32
	maxID     = math.MaxInt32
	badID     = -5
	maxOffset = math.MaxInt64
	badOffset = -2
)

// MaxValues sends every raft RPC (Vote, BeginQuorumEpoch, EndQuorumEpoch,
// Fetch, FetchSnapshot) and DescribeQuorum with extreme values: epoch
// 2147483647, offsets MaxInt64 and -2, ids MaxInt32 and -5, MaxBytes
// MaxInt32 and negative sizes, the partition index MaxInt32, and p's
// cluster id (nil: null, which a KRaft node accepts). Each request goes on
// its own connection and its answer is awaited briefly (a Fetch may be
// parked for its MaxWaitMs). Requests that only read go first, so the
// epoch bumps of the last ones do not hide how the target reads them.
func MaxValues(ctx context.Context, addr string, p Partition) (Result, error) {
	var t tally
	var firstErr error
	for i, req := range maxValueRequests(p) {
		if ctx.Err() != nil {
			break
		}
		c, err := dial(ctx, addr, &t)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if _, err := roundTrip(c, int32(i), req, &t); closedByPeer(ctx, err) {
			t.closed.Add(1)
		}
		c.Close()
	}
	return finish(&t, firstErr)
}

func maxValueRequests(p Partition) []kmsg.Request {
	var out []kmsg.Request
	// DescribeQuorum of the partition and of partitions that do not exist.
	for _, part := range []int32{p.Partition, maxID, badID} {
		req := kmsg.NewPtrDescribeQuorumRequest()
		req.Version = maxVersion(int16(kmsg.DescribeQuorum))
		t := kmsg.NewDescribeQuorumRequestTopic()
		t.Topic = p.Topic
		dp := kmsg.NewDescribeQuorumRequestTopicPartition()
		dp.Partition = part
		t.Partitions = append(t.Partitions, dp)
		req.Topics = append(req.Topics, t)
		out = append(out, req)
	}
	// Fetch: extreme offsets, ids, sizes; a long poll of MaxInt32 ms.
	type fetchCase struct {
		replica              int32
		offset, hw, logStart int64
		epoch, lastEpoch     int32
		maxBytes, partBytes  int32
		maxWait              int32
	}
	for _, fc := range []fetchCase{
		{maxID, maxOffset, maxOffset, maxOffset, maxEpoch, maxEpoch, math.MaxInt32, math.MaxInt32, 0},
		{badID, badOffset, badOffset, badOffset, -1, -1, -1, -1, 0},
		{maxID, 0, maxOffset, badOffset, -1, maxEpoch, math.MaxInt32, -1, 0},
		{-1, badOffset, -1, -1, maxEpoch, badID, -1, math.MaxInt32, math.MaxInt32},
		{maxID, maxOffset, -1, -1, -1, -1, math.MaxInt32, math.MaxInt32, math.MaxInt32},
	} {
		req := kmsg.NewPtrFetchRequest()
		req.Version = maxVersion(int16(kmsg.Fetch))
		req.ClusterID = p.ClusterID
		req.ReplicaID = fc.replica
		req.ReplicaState.ID, req.ReplicaState.Epoch = fc.replica, maxOffset
		req.MaxWaitMillis = fc.maxWait
		req.MaxBytes = fc.maxBytes
		t := kmsg.NewFetchRequestTopic()
		t.Topic, t.TopicID = p.Topic, p.TopicID
		for _, part := range []int32{p.Partition, maxID} {
			fp := kmsg.NewFetchRequestTopicPartition()
			fp.Partition = part
			fp.CurrentLeaderEpoch = fc.epoch
			fp.FetchOffset = fc.offset
			fp.LastFetchedEpoch = fc.lastEpoch
			fp.LogStartOffset = fc.logStart
			fp.PartitionMaxBytes = fc.partBytes
			fp.HighWatermark = fc.hw
			t.Partitions = append(t.Partitions, fp)
		}
		req.Topics = append(req.Topics, t)
		out = append(out, req)
	}
	// FetchSnapshot: snapshot ids and positions out of any range.
	for _, pos := range []int64{maxOffset, badOffset, 0} {
		for _, maxBytes := range []int32{math.MaxInt32, -1} {
			req := kmsg.NewPtrFetchSnapshotRequest()
			req.Version = maxVersion(int16(kmsg.FetchSnapshot))
			req.ClusterID = p.ClusterID
			req.ReplicaID = maxID
			req.MaxBytes = maxBytes
			t := kmsg.NewFetchSnapshotRequestTopic()
			t.Topic = p.Topic
			sp := kmsg.NewFetchSnapshotRequestTopicPartition()
			sp.Partition = p.Partition
			sp.CurrentLeaderEpoch = maxEpoch
			sp.SnapshotID.EndOffset, sp.SnapshotID.Epoch = pos, maxEpoch
			sp.Position = pos
			t.Partitions = append(t.Partitions, sp)
			req.Topics = append(req.Topics, t)
			out = append(out, req)
		}
	}
	// EndQuorumEpoch, BeginQuorumEpoch and Vote at epoch MaxInt32 from ids
	// that are not voters.
	for _, leader := range []int32{maxID, badID} {
		req := kmsg.NewPtrEndQuorumEpochRequest()
		req.Version = maxVersion(int16(kmsg.EndQuorumEpoch))
		req.ClusterID = p.ClusterID
		t := kmsg.NewEndQuorumEpochRequestTopic()
		t.Topic = p.Topic
		ep := kmsg.NewEndQuorumEpochRequestTopicPartition()
		ep.Partition = p.Partition
		ep.LeaderID, ep.LeaderEpoch = leader, maxEpoch
		ep.PreferredSuccessors = []int32{maxID, badID}
		t.Partitions = append(t.Partitions, ep)
		req.Topics = append(req.Topics, t)
		out = append(out, req)
	}
	for _, leader := range []int32{maxID, badID} {
		out = append(out, beginQuorumEpoch(p, leader, maxEpoch, maxID))
	}
	for _, cand := range []int32{maxID, badID} {
		for _, pre := range []bool{true, false} {
			req := kmsg.NewPtrVoteRequest()
			req.Version = maxVersion(int16(kmsg.Vote))
			req.ClusterID = p.ClusterID
			req.VoterID = maxID
			t := kmsg.NewVoteRequestTopic()
			t.Topic = p.Topic
			vp := kmsg.NewVoteRequestTopicPartition()
			vp.Partition = p.Partition
			vp.CandidateEpoch, vp.CandidateID = maxEpoch, cand
			vp.LastOffsetEpoch, vp.LastOffset = maxEpoch, maxOffset
			vp.PreVote = pre
			t.Partitions = append(t.Partitions, vp)
			req.Topics = append(req.Topics, t)
			out = append(out, req)
		}
	}
	return out
}

// beginQuorumEpoch is a BeginQuorumEpoch naming leader at epoch, addressed to voter.
func beginQuorumEpoch(p Partition, leader, epoch, voter int32) *kmsg.BeginQuorumEpochRequest {
	req := kmsg.NewPtrBeginQuorumEpochRequest()
	req.Version = maxVersion(int16(kmsg.BeginQuorumEpoch))
	req.ClusterID = p.ClusterID
	req.VoterID = voter
	t := kmsg.NewBeginQuorumEpochRequestTopic()
	t.Topic = p.Topic
	bp := kmsg.NewBeginQuorumEpochRequestTopicPartition()
	bp.Partition = p.Partition
	bp.LeaderID, bp.LeaderEpoch = leader, epoch
	t.Partitions = append(t.Partitions, bp)
	req.Topics = append(req.Topics, t)
	return req
}

// ForgedLeadersParams configures ForgedLeaders.
type ForgedLeadersParams struct {
	Partition Partition
	Target    int32 // the attacked voter's id
	Epoch     int32 // the quorum's current epoch
	Voter     int32 // a voter other than the leader, named as leader
	Attacker  int32 // an id outside the voter set, named as leader
	Rounds    int   // times the whole set is sent
	Interval  time.Duration
}

// ForgedLeaders tells Target that leaders were elected that were not:
// BeginQuorumEpoch naming Voter and then Attacker at Epoch and Epoch+1, and
// EndQuorumEpoch naming each of them as the resigning leader of Epoch. A
// forged epoch+1 is what a real election would send, so the quorum may have
// to elect again; it must not split, stall for good, or take a batch from
// a leader nobody elected.
func ForgedLeaders(ctx context.Context, addr string, p ForgedLeadersParams) (Result, error) {
	var t tally
	var firstErr error
	for r := 0; r < p.Rounds && ctx.Err() == nil; r++ {
		if r > 0 && !sleep(ctx, p.Interval) {
			break
		}
		var reqs []kmsg.Request
		for _, leader := range []int32{p.Voter, p.Attacker} {
			for _, epoch := range []int32{p.Epoch, p.Epoch + 1} {
				reqs = append(reqs, beginQuorumEpoch(p.Partition, leader, epoch, p.Target))
			}
			req := kmsg.NewPtrEndQuorumEpochRequest()
			req.Version = maxVersion(int16(kmsg.EndQuorumEpoch))
			req.ClusterID = p.Partition.ClusterID
			tp := kmsg.NewEndQuorumEpochRequestTopic()
			tp.Topic = p.Partition.Topic
			ep := kmsg.NewEndQuorumEpochRequestTopicPartition()
			ep.Partition = p.Partition.Partition
			ep.LeaderID, ep.LeaderEpoch = leader, p.Epoch
			ep.PreferredSuccessors = []int32{p.Attacker}
			tp.Partitions = append(tp.Partitions, ep)
			req.Topics = append(req.Topics, tp)
			reqs = append(reqs, req)
		}
		c, err := dial(ctx, addr, &t)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		for i, req := range reqs {
			if _, err := roundTrip(c, int32(i), req, &t); err != nil {
				if closedByPeer(ctx, err) {
					t.closed.Add(1)
				}
				break
			}
		}
		c.Close()
	}
	return finish(&t, firstErr)
}
