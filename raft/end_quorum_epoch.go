package raft

// EndQuorumEpoch (key 54): v0-v1 (v0 is not flexible).
//
// Behavior (receiver): cluster id, topic and epoch checks as
// BeginQuorumEpoch, and a negative preferred successor id -> partition
// INVALID_REQUEST (endQuorumEpochAPI); voter-only check; learn the leader (same guards as BeginQuorumEpoch);
// then a Follower of exactly that leader shortens its fetch timer to its
// position-based backoff: first preferred candidate at once, position p of
// n after min(max, (max >> (n-1)) << (p-1)), unlisted after
// election.backoff.max. It also forgets having fetched from that leader, so
// it grants pre-votes to up-to-date peers. Reply NONE.
//
// Behavior (sender): the resigned leader, to every voter that has not yet
// answered NONE, with the normal retry backoff, until its state changes.
//
// Version notes: v0 carries PreferredSuccessors (ids), v1
// PreferredCandidates (ids with directory ids) and LeaderEndpoints (the JVM
// sends none).

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
)

var endQuorumEpochAPI = rpc[*kmsg.EndQuorumEpochRequest, *kmsg.EndQuorumEpochResponse]{
	versions:  protocol.VersionRange{Min: 0, Max: 1},
	clusterID: func(r *kmsg.EndQuorumEpochRequest) *string { return r.ClusterID },
	topError:  func(r *kmsg.EndQuorumEpochResponse) *int16 { return &r.ErrorCode },
	partitionError: func(r *kmsg.EndQuorumEpochResponse) int16 {
		return protocol.FirstNonZero(r.Topics, endQuorumEpochPartitions, func(p *kmsg.EndQuorumEpochResponseTopicPartition) int16 { return p.ErrorCode })
	},
	checkClusterID: true,
	partition: func(r *kmsg.EndQuorumEpochRequest) partitionShape {
		return shapeOf(false, r.Topics, func(t *kmsg.EndQuorumEpochRequestTopic) (string, [16]byte, []kmsg.EndQuorumEpochRequestTopicPartition) {
			return t.Topic, [16]byte{}, t.Partitions
		}, func(p *kmsg.EndQuorumEpochRequestTopicPartition) int32 { return p.Partition })
	},
	check:  checkEndQuorumEpoch,
	handle: (*Driver).handleEndQuorumEpoch,
	answer: (*Driver).endQuorumEpochAnswer,
	checkResponse: func(r *kmsg.EndQuorumEpochResponse) string {
		return protocol.FirstNonZero(r.Topics, endQuorumEpochPartitions, func(p *kmsg.EndQuorumEpochResponseTopicPartition) string {
			return checkLeader(NodeID(p.LeaderID), Epoch(p.LeaderEpoch))
		})
	},
	onResponse: (*Driver).handleEndQuorumEpochResponse,
}.register()

func endQuorumEpochPartitions(t *kmsg.EndQuorumEpochResponseTopic) []kmsg.EndQuorumEpochResponseTopicPartition {
	return t.Partitions
}

// checkEndQuorumEpoch: the preferred successors' ids and the epoch (the
// shape passed at the edge).
func checkEndQuorumEpoch(_ *Driver, req *kmsg.EndQuorumEpochRequest) *refusal {
	p := &req.Topics[0].Partitions[0]
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

// handleEndQuorumEpoch answers a request that passed checkEndQuorumEpoch.
func (d *Driver) handleEndQuorumEpoch(now time.Time, req *kmsg.EndQuorumEpochRequest, _ RequestRef) kmsg.Response {
	p := &req.Topics[0].Partitions[0]
	epoch, leader := Epoch(p.LeaderEpoch), NodeID(p.LeaderID)
	if code := d.followLeaderClaim(now, "EndQuorumEpoch", epoch, leader, nil); code != errNone {
		return d.endQuorumEpochAnswer(req, code)
	}
	if d.fatal != nil {
		return nil
	}
	if f := d.asFollower(); f != nil && d.leaderID == leader && epoch == d.epoch {
		var preferred []int32
		if len(p.PreferredCandidates) > 0 {
			for _, c := range p.PreferredCandidates {
				preferred = append(preferred, c.CandidateID)
			}
		} else {
			preferred = p.PreferredSuccessors
		}
		f.leaderResigned(d, now, preferred)
	}
	return d.endQuorumEpochAnswer(req, errNone)
}

// endQuorumEpochAnswer is the partition answer to an EndQuorumEpoch request
// of the raft partition: BeginQuorumEpoch's, converted.
func (d *Driver) endQuorumEpochAnswer(req *kmsg.EndQuorumEpochRequest, code int16) *kmsg.EndQuorumEpochResponse {
	b := d.quorumEpochAnswer(req.Version, code)
	resp := kmsg.NewPtrEndQuorumEpochResponse()
	t := kmsg.NewEndQuorumEpochResponseTopic()
	t.Topic = b.Topics[0].Topic
	t.Partitions = append(t.Partitions, kmsg.EndQuorumEpochResponseTopicPartition(b.Topics[0].Partitions[0]))
	resp.Topics = append(resp.Topics, t)
	for _, e := range b.NodeEndpoints {
		resp.NodeEndpoints = append(resp.NodeEndpoints, kmsg.EndQuorumEpochResponseNodeEndpoint(e))
	}
	return resp
}

// endQuorumBackoff is the election delay for this node's position among the
// preferred successors, lengthened while deferring (deferral.go).
func (d *Driver) endQuorumBackoff(preferred []int32) time.Duration {
	return d.positionBackoff(preferred) + d.deferDelay()
}

// positionBackoff is Kafka's delay for position p of n successors.
func (d *Driver) positionBackoff(preferred []int32) time.Duration {
	max := d.cfg.ElectionBackoffMax
	n := len(preferred)
	for p, id := range preferred {
		if NodeID(id) != d.self() {
			continue
		}
		if p == 0 {
			return 0
		}
		return min(max, (max>>(n-1))<<(p-1))
	}
	return max
}

// buildEndQuorumEpoch is the resigned leader's request, naming preferred
// as its successors.
func (d *Driver) buildEndQuorumEpoch(preferred []int32) *kmsg.EndQuorumEpochRequest {
	req := kmsg.NewPtrEndQuorumEpochRequest()
	req.ClusterID = d.clusterIDPtr()
	t := kmsg.NewEndQuorumEpochRequestTopic()
	t.Topic = d.cfg.TopicName
	p := kmsg.NewEndQuorumEpochRequestTopicPartition()
	p.Partition = d.cfg.Partition
	p.LeaderID = int32(d.self())
	p.LeaderEpoch = int32(d.epoch)
	for _, id := range preferred {
		p.PreferredSuccessors = append(p.PreferredSuccessors, id)
		c := kmsg.NewEndQuorumEpochRequestTopicPartitionPreferredCandidate()
		c.CandidateID = id
		c.CandidateDirectoryID = d.voterDir(NodeID(id))
		p.PreferredCandidates = append(p.PreferredCandidates, c)
	}
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

// handleEndQuorumEpochResponse: a resigned leader stops resending to a
// voter that acknowledged.
func (d *Driver) handleEndQuorumEpochResponse(now time.Time, p pending, resp *kmsg.EndQuorumEpochResponse) bool {
	var rp *kmsg.BeginQuorumEpochResponseTopicPartition
	if d.isRaftPartition(shapeOf(false, resp.Topics, func(t *kmsg.EndQuorumEpochResponseTopic) (string, [16]byte, []kmsg.EndQuorumEpochResponseTopicPartition) {
		return t.Topic, [16]byte{}, t.Partitions
	}, func(p *kmsg.EndQuorumEpochResponseTopicPartition) int32 { return p.Partition })) {
		c := kmsg.BeginQuorumEpochResponseTopicPartition(resp.Topics[0].Partitions[0])
		rp = &c
	}
	acked, ok := d.quorumEpochResponse(now, p, resp.ErrorCode, rp)
	if r, ok := d.state.(*resignedState); acked && ok {
		delete(r.unacked, p.to)
	}
	return ok
}
