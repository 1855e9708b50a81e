package raft

// EndQuorumEpoch (key 54): v0-v1 (v0 is not flexible).
//
// Behavior (receiver): cluster id, topic and epoch checks as
// BeginQuorumEpoch, and a negative preferred successor id -> partition
// INVALID_REQUEST (validate.go); voter-only check; learn the leader (same guards as BeginQuorumEpoch);
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
	"go.uber.org/zap"
)

// handleEndQuorumEpoch answers a request that passed checkEndQuorumEpoch.
func (d *Driver) handleEndQuorumEpoch(now time.Time, req *kmsg.EndQuorumEpochRequest) kmsg.Response {
	p := &req.Topics[0].Partitions[0]
	epoch, leader := Epoch(p.LeaderEpoch), NodeID(p.LeaderID)
	if code := d.followLeaderClaim(now, "EndQuorumEpoch", epoch, leader, nil); code != errNone {
		return d.endQuorumEpochAnswer(req, code)
	}
	if d.fatal != nil {
		return nil
	}
	if d.role == RoleFollower && d.leaderID == leader && epoch == d.epoch {
		var preferred []int32
		if len(p.PreferredCandidates) > 0 {
			for _, c := range p.PreferredCandidates {
				preferred = append(preferred, c.CandidateID)
			}
		} else {
			preferred = p.PreferredSuccessors
		}
		b := d.endQuorumBackoff(preferred)
		d.follower.fetch.shorten(now, b)
		d.follower.hasFetched = false
		d.remoteLg.Info("leader resigned; election timer shortened", zap.Int32("leader", p.LeaderID),
			zap.Int32("epoch", p.LeaderEpoch), zap.Duration("backoff", b))
	}
	return d.endQuorumEpochAnswer(req, errNone)
}

// endQuorumEpochAnswer is the partition answer to an EndQuorumEpoch request
// of the raft partition.
func (d *Driver) endQuorumEpochAnswer(req *kmsg.EndQuorumEpochRequest, code int16) *kmsg.EndQuorumEpochResponse {
	resp := kmsg.NewPtrEndQuorumEpochResponse()
	t := kmsg.NewEndQuorumEpochResponseTopic()
	t.Topic = d.cfg.TopicName
	rp := kmsg.NewEndQuorumEpochResponseTopicPartition()
	rp.Partition = d.cfg.Partition
	rp.ErrorCode = code
	rp.LeaderID = int32(d.leaderID)
	rp.LeaderEpoch = int32(d.epoch)
	t.Partitions = append(t.Partitions, rp)
	resp.Topics = append(resp.Topics, t)
	if req.Version >= 1 && rp.LeaderID >= 0 {
		if id, ep, ok := d.leaderEndpoint(); ok {
			ne := kmsg.NewEndQuorumEpochResponseNodeEndpoint()
			ne.NodeID, ne.Host, ne.Port = int32(id), ep.Host, uint16(ep.Port)
			resp.NodeEndpoints = append(resp.NodeEndpoints, ne)
		}
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

func (d *Driver) buildEndQuorumEpoch() *kmsg.EndQuorumEpochRequest {
	req := kmsg.NewPtrEndQuorumEpochRequest()
	req.ClusterID = d.clusterIDPtr()
	t := kmsg.NewEndQuorumEpochRequestTopic()
	t.Topic = d.cfg.TopicName
	p := kmsg.NewEndQuorumEpochRequestTopicPartition()
	p.Partition = d.cfg.Partition
	p.LeaderID = int32(d.self())
	p.LeaderEpoch = int32(d.epoch)
	for _, id := range d.resigned.preferred {
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

func (d *Driver) handleEndQuorumEpochResponse(now time.Time, p pending, resp *kmsg.EndQuorumEpochResponse) bool {
	if resp.ErrorCode != errNone {
		return d.handleTopLevelError(resp.ErrorCode, apiEndQuorumEpoch, p.to)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return false
	}
	rp := &resp.Topics[0].Partitions[0]
	if handled, ok := d.handleCommonResponse(now, rp.ErrorCode, NodeID(rp.LeaderID), Epoch(rp.LeaderEpoch), p.to, apiEndQuorumEpoch); handled {
		return ok
	}
	if d.role == RoleResigned && rp.ErrorCode == errNone {
		delete(d.resigned.unacked, p.to)
	}
	return true
}

func (d *Driver) handleBeginQuorumEpochResponse(now time.Time, p pending, resp *kmsg.BeginQuorumEpochResponse) bool {
	if resp.ErrorCode != errNone {
		return d.handleTopLevelError(resp.ErrorCode, apiBeginQuorumEpoch, p.to)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return false
	}
	rp := &resp.Topics[0].Partitions[0]
	handled, ok := d.handleCommonResponse(now, rp.ErrorCode, NodeID(rp.LeaderID), Epoch(rp.LeaderEpoch), p.to, apiBeginQuorumEpoch)
	if handled {
		return ok
	}
	return true
}
