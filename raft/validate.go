package raft

// Range checks at the edge. Every request and response is checked here,
// before any handler runs, so handlers may assume what these establish:
// an epoch that can become the local one is at most MaxEpoch, ids are >= -1,
// offsets, positions and sizes are not negative where they are used, and
// the partition is the raft partition. A request that fails is answered with
// Kafka's code for it (INVALID_REQUEST unless Kafka answers another); a
// response that fails is dropped and its destination backs off. Both are
// logged through the rate-limited remote logger: a peer causes them.

import (
	"fmt"
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// MaxEpoch is the largest epoch this node accepts or persists. An election
// increments the epoch, so MaxInt32 itself could only be reached to be
// stuck there (the quorum-state store refuses it): a node at MaxEpoch never
// starts an election, and a message naming a higher epoch is refused.
const MaxEpoch Epoch = math.MaxInt32 - 1

// refusal is why a request is refused at the edge, and how it is answered.
type refusal struct {
	code int16 // Kafka error code
	top  bool  // in the top-level error code (else the partition's)
	why  string
}

func topRefusal(code int16, why string) *refusal { return &refusal{code: code, top: true, why: why} }

func partitionRefusal(code int16, format string, args ...any) *refusal {
	return &refusal{code: code, why: fmt.Sprintf(format, args...)}
}

// refuseRequest validates req; a refused request gets its error answer.
// Requests without checks (DescribeQuorum, voter changes) carry nothing
// that reaches local state or arithmetic.
func (d *Driver) refuseRequest(req kmsg.Request) kmsg.Response {
	var (
		r         *refusal
		partition func(code int16) kmsg.Response // the answer with the partition's error
	)
	switch req := req.(type) {
	case *kmsg.VoteRequest:
		r, partition = d.checkVote(req), func(c int16) kmsg.Response { return d.voteAnswer(req, c, false) }
	case *kmsg.BeginQuorumEpochRequest:
		r, partition = d.checkBeginQuorumEpoch(req), func(c int16) kmsg.Response { return d.beginQuorumEpochAnswer(req, c) }
	case *kmsg.EndQuorumEpochRequest:
		r, partition = d.checkEndQuorumEpoch(req), func(c int16) kmsg.Response { return d.endQuorumEpochAnswer(req, c) }
	case *kmsg.FetchRequest:
		r, partition = d.checkFetch(req), func(c int16) kmsg.Response { return d.fetchError(req, fetchReplicaID(req), c) }
	case *kmsg.FetchSnapshotRequest:
		r, partition = d.checkFetchSnapshot(req), func(c int16) kmsg.Response { return d.fetchSnapshotAnswer(req, c, true) }
	}
	if r == nil {
		return nil
	}
	d.remoteLg.Warn("refusing request: "+r.why, zap.Int16("api", req.Key()), zap.Int16("error", r.code))
	if r.top {
		return topError(req, r.code)
	}
	return partition(r.code)
}

// topError is the answer to req with only its top-level error code set.
func topError(req kmsg.Request, code int16) kmsg.Response {
	resp := req.ResponseKind()
	switch resp := resp.(type) {
	case *kmsg.VoteResponse:
		resp.ErrorCode = code
	case *kmsg.BeginQuorumEpochResponse:
		resp.ErrorCode = code
	case *kmsg.EndQuorumEpochResponse:
		resp.ErrorCode = code
	case *kmsg.FetchResponse:
		resp.ErrorCode = code
	case *kmsg.FetchSnapshotResponse:
		resp.ErrorCode = code
	}
	return resp
}

// checkPartition is the cluster id and single-partition shape check shared
// by Vote, BeginQuorumEpoch and EndQuorumEpoch, in Kafka's order.
func (d *Driver) checkPartition(clusterID *string, topics int, topic string, partitions int, partition int32) *refusal {
	switch {
	case !d.validClusterID(clusterID):
		return topRefusal(errInconsistentCluster, "wrong cluster id")
	case topics != 1 || topic != d.cfg.TopicName || partitions != 1 || partition != d.cfg.Partition:
		return topRefusal(errInvalidRequest, "not exactly the raft partition")
	}
	return nil
}

// checkEpoch refuses an epoch this node could not move to. A negative
// epoch is left to the handlers: older than any local epoch, it is fenced,
// as Kafka answers it.
func checkEpoch(what string, epoch Epoch) *refusal {
	if epoch > MaxEpoch {
		return partitionRefusal(errInvalidRequest, "%s %d is above the largest epoch %d", what, epoch, MaxEpoch)
	}
	return nil
}

func (d *Driver) checkVote(req *kmsg.VoteRequest) *refusal {
	if len(req.Topics) != 1 || len(req.Topics[0].Partitions) != 1 {
		return d.checkPartition(req.ClusterID, len(req.Topics), "", 0, 0)
	}
	t := &req.Topics[0]
	if r := d.checkPartition(req.ClusterID, 1, t.Topic, 1, t.Partitions[0].Partition); r != nil {
		return r
	}
	p := &t.Partitions[0]
	preVote := req.Version >= 2 && p.PreVote
	switch {
	case p.LastOffset < 0 || p.LastOffsetEpoch < 0:
		return partitionRefusal(errInvalidRequest, "negative last offset %d or epoch %d", p.LastOffset, p.LastOffsetEpoch)
	case p.LastOffsetEpoch > p.CandidateEpoch || (!preVote && p.LastOffsetEpoch == p.CandidateEpoch):
		return partitionRefusal(errInvalidRequest, "last offset epoch %d not below candidate epoch %d", p.LastOffsetEpoch, p.CandidateEpoch)
	}
	return checkEpoch("candidate epoch", Epoch(p.CandidateEpoch))
}

func (d *Driver) checkBeginQuorumEpoch(req *kmsg.BeginQuorumEpochRequest) *refusal {
	if len(req.Topics) != 1 || len(req.Topics[0].Partitions) != 1 {
		return d.checkPartition(req.ClusterID, len(req.Topics), "", 0, 0)
	}
	t := &req.Topics[0]
	if r := d.checkPartition(req.ClusterID, 1, t.Topic, 1, t.Partitions[0].Partition); r != nil {
		return r
	}
	return checkEpoch("leader epoch", Epoch(t.Partitions[0].LeaderEpoch))
}

func (d *Driver) checkEndQuorumEpoch(req *kmsg.EndQuorumEpochRequest) *refusal {
	if len(req.Topics) != 1 || len(req.Topics[0].Partitions) != 1 {
		return d.checkPartition(req.ClusterID, len(req.Topics), "", 0, 0)
	}
	t := &req.Topics[0]
	if r := d.checkPartition(req.ClusterID, 1, t.Topic, 1, t.Partitions[0].Partition); r != nil {
		return r
	}
	p := &t.Partitions[0]
	for _, id := range p.PreferredSuccessors {
		if id < 0 {
			return partitionRefusal(errInvalidRequest, "preferred successor id %d", id)
		}
	}
	for _, c := range p.PreferredCandidates {
		if c.CandidateID < 0 {
			return partitionRefusal(errInvalidRequest, "preferred candidate id %d", c.CandidateID)
		}
	}
	return checkEpoch("leader epoch", Epoch(p.LeaderEpoch))
}

func (d *Driver) checkFetch(req *kmsg.FetchRequest) *refusal {
	switch {
	case !d.validClusterID(req.ClusterID):
		return topRefusal(errInconsistentCluster, "wrong cluster id")
	case req.Version < 13 || len(req.Topics) != 1 || req.Topics[0].TopicID != d.cfg.TopicID ||
		len(req.Topics[0].Partitions) != 1 || req.Topics[0].Partitions[0].Partition != d.cfg.Partition:
		return topRefusal(errInvalidRequest, "not exactly the raft partition")
	}
	p := &req.Topics[0].Partitions[0]
	switch {
	case req.MaxWaitMillis < 0 || p.FetchOffset < 0 || p.LastFetchedEpoch < 0:
		return partitionRefusal(errInvalidRequest, "negative max wait %d, fetch offset %d or last fetched epoch %d",
			req.MaxWaitMillis, p.FetchOffset, p.LastFetchedEpoch)
	case p.LastFetchedEpoch > p.CurrentLeaderEpoch:
		return partitionRefusal(errInvalidRequest, "last fetched epoch %d above current leader epoch %d",
			p.LastFetchedEpoch, p.CurrentLeaderEpoch)
	}
	return checkEpoch("current leader epoch", Epoch(p.CurrentLeaderEpoch))
}

// checkFetchSnapshot leaves the topic and partition to the handler: Kafka
// answers a wrong one in the partition, echoing it.
func (d *Driver) checkFetchSnapshot(req *kmsg.FetchSnapshotRequest) *refusal {
	switch {
	case !d.validClusterID(req.ClusterID):
		return topRefusal(errInconsistentCluster, "wrong cluster id")
	case len(req.Topics) != 1 && (len(req.Topics) == 0 || len(req.Topics[0].Partitions) != 1),
		len(req.Topics[0].Partitions) == 0:
		return topRefusal(errInvalidRequest, "no partition")
	}
	t := &req.Topics[0]
	p := &t.Partitions[0]
	if len(req.Topics) != 1 || len(t.Partitions) != 1 || t.Topic != d.cfg.TopicName || p.Partition != d.cfg.Partition {
		return nil
	}
	if p.SnapshotID.EndOffset < 0 || p.SnapshotID.Epoch < 0 {
		// No such snapshot can exist; the log is never asked for it.
		return partitionRefusal(errSnapshotNotFound, "snapshot id %d-%d", p.SnapshotID.EndOffset, p.SnapshotID.Epoch)
	}
	return checkEpoch("current leader epoch", Epoch(p.CurrentLeaderEpoch))
}

// checkResponse returns why a response cannot be used, or "". What it
// establishes for the handlers: the leader epoch of every partition is in
// [-1, MaxEpoch] and the leader id >= -1 (handleCommonResponse may move to
// them); a Fetch answer's diverging epoch and snapshot id are either unset
// (-1) or in range; a FetchSnapshot answer's position and size are not
// negative.
func checkResponse(resp kmsg.Response) string {
	switch r := resp.(type) {
	case *kmsg.VoteResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if why := checkLeader(NodeID(p.LeaderID), Epoch(p.LeaderEpoch)); why != "" {
					return why
				}
			}
		}
	case *kmsg.BeginQuorumEpochResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if why := checkLeader(NodeID(p.LeaderID), Epoch(p.LeaderEpoch)); why != "" {
					return why
				}
			}
		}
	case *kmsg.EndQuorumEpochResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if why := checkLeader(NodeID(p.LeaderID), Epoch(p.LeaderEpoch)); why != "" {
					return why
				}
			}
		}
	case *kmsg.FetchResponse:
		for _, t := range r.Topics {
			for i := range t.Partitions {
				if why := checkFetchPartition(&t.Partitions[i]); why != "" {
					return why
				}
			}
		}
	case *kmsg.FetchSnapshotResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if why := checkLeader(NodeID(p.CurrentLeader.LeaderID), Epoch(p.CurrentLeader.LeaderEpoch)); why != "" {
					return why
				}
				if p.ErrorCode == errNone && (p.Position < 0 || p.Size < 0 || p.SnapshotID.EndOffset < 0 ||
					p.SnapshotID.Epoch < 0 || Epoch(p.SnapshotID.Epoch) > MaxEpoch) {
					return fmt.Sprintf("snapshot %d-%d chunk at position %d of size %d",
						p.SnapshotID.EndOffset, p.SnapshotID.Epoch, p.Position, p.Size)
				}
			}
		}
	}
	return ""
}

func checkLeader(id NodeID, epoch Epoch) string {
	if id < -1 || epoch < -1 || epoch > MaxEpoch {
		return fmt.Sprintf("leader %d in epoch %d", id, epoch)
	}
	return ""
}

func checkFetchPartition(p *kmsg.FetchResponseTopicPartition) string {
	if why := checkLeader(NodeID(p.CurrentLeader.LeaderID), Epoch(p.CurrentLeader.LeaderEpoch)); why != "" {
		return why
	}
	div, snap := p.DivergingEpoch, p.SnapshotID
	switch {
	case p.HighWatermark < -1 || p.LogStartOffset < -1:
		return fmt.Sprintf("high watermark %d, log start offset %d", p.HighWatermark, p.LogStartOffset)
	case (div.Epoch < 0 || div.EndOffset < 0) && (div.Epoch != -1 || div.EndOffset != -1),
		Epoch(div.Epoch) > MaxEpoch:
		return fmt.Sprintf("diverging epoch %d end offset %d", div.Epoch, div.EndOffset)
	case (snap.Epoch < 0 || snap.EndOffset < 0) && (snap.Epoch != -1 || snap.EndOffset != -1),
		Epoch(snap.Epoch) > MaxEpoch:
		return fmt.Sprintf("snapshot id %d-%d", snap.EndOffset, snap.Epoch)
	}
	return ""
}
