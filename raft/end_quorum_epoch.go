package raft

// EndQuorumEpoch (key 54): v0-v1 (v0 is not flexible).
//
// Behavior (receiver): cluster id and topic checks as BeginQuorumEpoch;
// voter-only check; learn the leader (same guards as BeginQuorumEpoch);
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

func (d *Driver) handleEndQuorumEpoch(now time.Time, req *kmsg.EndQuorumEpochRequest) kmsg.Response {
	resp := kmsg.NewPtrEndQuorumEpochResponse()
	if !d.validClusterID(req.ClusterID) {
		resp.ErrorCode = errInconsistentCluster
		return resp
	}
	if len(req.Topics) != 1 || req.Topics[0].Topic != d.cfg.TopicName ||
		len(req.Topics[0].Partitions) != 1 || req.Topics[0].Partitions[0].Partition != d.cfg.Partition {
		resp.ErrorCode = errInvalidRequest
		return resp
	}
	p := &req.Topics[0].Partitions[0]
	answer := func(code int16) kmsg.Response {
		t := kmsg.NewEndQuorumEpochResponseTopic()
		t.Topic = d.cfg.TopicName
		rp := kmsg.NewEndQuorumEpochResponseTopicPartition()
		rp.Partition = d.cfg.Partition
		rp.ErrorCode = code
		rp.LeaderID = d.leaderID
		rp.LeaderEpoch = d.epoch
		t.Partitions = append(t.Partitions, rp)
		resp.Topics = append(resp.Topics, t)
		if req.Version >= 1 && rp.LeaderID >= 0 {
			if id, ep, ok := d.leaderEndpoint(); ok {
				ne := kmsg.NewEndQuorumEpochResponseNodeEndpoint()
				ne.NodeID, ne.Host, ne.Port = id, ep.Host, uint16(ep.Port)
				resp.NodeEndpoints = append(resp.NodeEndpoints, ne)
			}
		}
		return resp
	}
	if code := d.voterOnlyCheck(p.LeaderEpoch, p.LeaderID); code != errNone {
		return answer(code)
	}
	if reason := d.forgedLeaderClaim(p.LeaderEpoch, p.LeaderID); reason != "" {
		d.lg.Error("refusing EndQuorumEpoch: "+reason, zap.Int32("epoch", p.LeaderEpoch),
			zap.Int32("claimedLeader", p.LeaderID), zap.Int32("localEpoch", d.epoch),
			zap.Int32("knownLeader", d.leaderID), zap.Stringer("role", d.role))
		return answer(errInvalidRequest)
	}
	d.maybeFollow(now, p.LeaderEpoch, p.LeaderID, "EndQuorumEpoch")
	if d.fatal != nil {
		return nil
	}
	if d.role == RoleFollower && d.leaderID == p.LeaderID && p.LeaderEpoch == d.epoch {
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
		d.lg.Info("leader resigned; election timer shortened", zap.Int32("leader", p.LeaderID),
			zap.Int32("epoch", p.LeaderEpoch), zap.Duration("backoff", b))
	}
	return answer(errNone)
}

// endQuorumBackoff is the election delay for this node's position among the
// preferred successors.
func (d *Driver) endQuorumBackoff(preferred []int32) time.Duration {
	max := d.cfg.ElectionBackoffMax
	n := len(preferred)
	for p, id := range preferred {
		if id != d.cfg.NodeID {
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
	p.LeaderID = d.cfg.NodeID
	p.LeaderEpoch = d.epoch
	for _, id := range d.resigned.preferred {
		p.PreferredSuccessors = append(p.PreferredSuccessors, id)
		c := kmsg.NewEndQuorumEpochRequestTopicPartitionPreferredCandidate()
		c.CandidateID = id
		c.CandidateDirectoryID = d.voterDir(id)
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
	if handled, ok := d.handleCommonResponse(now, rp.ErrorCode, rp.LeaderID, rp.LeaderEpoch, p.to, apiEndQuorumEpoch); handled {
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
	handled, ok := d.handleCommonResponse(now, rp.ErrorCode, rp.LeaderID, rp.LeaderEpoch, p.to, apiBeginQuorumEpoch)
	if handled {
		return ok
	}
	return true
}
