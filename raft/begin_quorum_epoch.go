package raft

// BeginQuorumEpoch (key 53): v0-v1 (v0 is not flexible).
//
// Behavior (receiver):
//   - cluster id mismatch -> top INCONSISTENT_CLUSTER_ID;
//   - wrong topic/partition shape -> top INVALID_REQUEST;
//   - LeaderEpoch above MaxEpoch -> partition INVALID_REQUEST (these checks:
//     beginQuorumEpochAPI);
//   - voter-only check on (LeaderId, LeaderEpoch): older epoch ->
//     FENCED_LEADER_EPOCH, negative leader id -> INVALID_REQUEST;
//   - learn the leader: a higher epoch, or the same epoch with no leader
//     known, makes this node a Follower (observers too);
//   - refused, with INVALID_REQUEST and an error log, and never applied
//     (docs/design/state-machine.md 11.3): a second leader for an epoch
//     that has one, this node named leader when it is not, and a higher
//     epoch naming the leader this node already follows (a leader only
//     reaches a new epoch through an election; the follower learns it from
//     its Fetch answers);
//   - voter key not this node -> INVALID_VOTER_KEY (after the transition);
//   - else NONE.
//
// Behavior (sender): the leader sends it to every other voter at once, then
// every fetch.timeout/2 to the voters that have not fetched within
// fetch.timeout/2.
//
// Version notes: v1 adds VoterId, VoterDirectoryId, LeaderEndpoints and the
// response NodeEndpoints.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/protocol"
)

var beginQuorumEpochAPI = rpc[*kmsg.BeginQuorumEpochRequest, *kmsg.BeginQuorumEpochResponse]{
	versions:  protocol.VersionRange{Min: 0, Max: 1},
	clusterID: func(r *kmsg.BeginQuorumEpochRequest) *string { return r.ClusterID },
	topError:  func(r *kmsg.BeginQuorumEpochResponse) *int16 { return &r.ErrorCode },
	partitionError: func(r *kmsg.BeginQuorumEpochResponse) int16 {
		return protocol.FirstNonZero(r.Topics, beginQuorumEpochPartitions, func(p *kmsg.BeginQuorumEpochResponseTopicPartition) int16 { return p.ErrorCode })
	},
	checkClusterID: true,
	partition: func(r *kmsg.BeginQuorumEpochRequest) partitionShape {
		return shapeOf(false, r.Topics, func(t *kmsg.BeginQuorumEpochRequestTopic) (string, [16]byte, []kmsg.BeginQuorumEpochRequestTopicPartition) {
			return t.Topic, [16]byte{}, t.Partitions
		}, func(p *kmsg.BeginQuorumEpochRequestTopicPartition) int32 { return p.Partition })
	},
	check: func(_ *Driver, r *kmsg.BeginQuorumEpochRequest) *refusal {
		return checkEpoch("leader epoch", Epoch(r.Topics[0].Partitions[0].LeaderEpoch))
	},
	handle: (*Driver).handleBeginQuorumEpoch,
	answer: (*Driver).beginQuorumEpochAnswer,
	checkResponse: func(r *kmsg.BeginQuorumEpochResponse) string {
		return protocol.FirstNonZero(r.Topics, beginQuorumEpochPartitions, func(p *kmsg.BeginQuorumEpochResponseTopicPartition) string {
			return checkLeader(NodeID(p.LeaderID), Epoch(p.LeaderEpoch))
		})
	},
	onResponse: (*Driver).handleBeginQuorumEpochResponse,
}.register()

func beginQuorumEpochPartitions(t *kmsg.BeginQuorumEpochResponseTopic) []kmsg.BeginQuorumEpochResponseTopicPartition {
	return t.Partitions
}

// handleBeginQuorumEpoch answers a request that passed the checks.
func (d *Driver) handleBeginQuorumEpoch(now time.Time, req *kmsg.BeginQuorumEpochRequest, _ RequestRef) kmsg.Response {
	p := &req.Topics[0].Partitions[0]
	epoch, leader := Epoch(p.LeaderEpoch), NodeID(p.LeaderID)
	learn := func() {
		for _, e := range req.LeaderEndpoints {
			if e.Name == d.cfg.ListenerName {
				d.learnEndpoint(leader, e.Host, int32(e.Port))
			}
		}
	}
	if code := d.followLeaderClaim(now, "BeginQuorumEpoch", epoch, leader, learn); code != errNone {
		return d.beginQuorumEpochAnswer(req, code)
	}
	if d.fatal != nil {
		return nil
	}
	if req.Version >= 1 && req.VoterID >= 0 &&
		(NodeID(req.VoterID) != d.self() || (p.VoterDirectoryID != [16]byte{} && p.VoterDirectoryID != d.cfg.DirectoryID)) {
		return d.beginQuorumEpochAnswer(req, errInvalidVoterKey)
	}
	return d.beginQuorumEpochAnswer(req, errNone)
}

// beginQuorumEpochAnswer is the partition answer to a BeginQuorumEpoch
// request of the raft partition.
func (d *Driver) beginQuorumEpochAnswer(req *kmsg.BeginQuorumEpochRequest, code int16) *kmsg.BeginQuorumEpochResponse {
	return d.quorumEpochAnswer(req.Version, code)
}

// quorumEpochAnswer is the answer BeginQuorumEpoch and EndQuorumEpoch share
// (their partition and endpoint types have the same fields, so an
// EndQuorumEpoch answer converts it): the raft partition with code and the
// leader and epoch this node knows, and at v1+ the leader's endpoint.
func (d *Driver) quorumEpochAnswer(version, code int16) *kmsg.BeginQuorumEpochResponse {
	resp := kmsg.NewPtrBeginQuorumEpochResponse()
	t := kmsg.NewBeginQuorumEpochResponseTopic()
	t.Topic = d.cfg.TopicName
	rp := kmsg.NewBeginQuorumEpochResponseTopicPartition()
	rp.Partition = d.cfg.Partition
	rp.ErrorCode = code
	rp.LeaderID = int32(d.leaderID)
	rp.LeaderEpoch = int32(d.epoch)
	t.Partitions = append(t.Partitions, rp)
	resp.Topics = append(resp.Topics, t)
	if version >= 1 && rp.LeaderID >= 0 {
		if id, ep, ok := d.leaderEndpoint(); ok {
			ne := kmsg.NewBeginQuorumEpochResponseNodeEndpoint()
			ne.NodeID, ne.Host, ne.Port = int32(id), ep.Host, uint16(ep.Port)
			resp.NodeEndpoints = append(resp.NodeEndpoints, ne)
		}
	}
	return resp
}

// handleBeginQuorumEpochResponse: the answer's leader and epoch (the
// voter's acknowledgement itself changes nothing).
func (d *Driver) handleBeginQuorumEpochResponse(now time.Time, p pending, resp *kmsg.BeginQuorumEpochResponse) bool {
	var rp *kmsg.BeginQuorumEpochResponseTopicPartition
	if d.isRaftPartition(shapeOf(false, resp.Topics, func(t *kmsg.BeginQuorumEpochResponseTopic) (string, [16]byte, []kmsg.BeginQuorumEpochResponseTopicPartition) {
		return t.Topic, [16]byte{}, t.Partitions
	}, func(p *kmsg.BeginQuorumEpochResponseTopicPartition) int32 { return p.Partition })) {
		rp = &resp.Topics[0].Partitions[0]
	}
	_, ok := d.quorumEpochResponse(now, p, resp.ErrorCode, rp)
	return ok
}

// quorumEpochResponse handles what the answers to BeginQuorumEpoch and
// EndQuorumEpoch share: a top-level error, then the raft partition (rp,
// nil when the answer does not name exactly that one; an EndQuorumEpoch
// answer's converted) with its leader and epoch. acked: the answer is NONE
// and left to the caller; ok: the destination is ready again.
func (d *Driver) quorumEpochResponse(now time.Time, p pending, top int16, rp *kmsg.BeginQuorumEpochResponseTopicPartition) (acked, ok bool) {
	switch {
	case top != errNone:
		return false, d.handleTopLevelError(top, p.key, p.to)
	case rp == nil:
		return false, false
	}
	if handled, ok := d.handleCommonResponse(now, rp.ErrorCode, NodeID(rp.LeaderID), Epoch(rp.LeaderEpoch), p.to, p.key); handled {
		return false, ok
	}
	return true, true
}

// followLeaderClaim runs what BeginQuorumEpoch and EndQuorumEpoch do with
// their claim that leader leads epoch: the voter-only check, the refusal
// of a forged claim (logged), then learn (the claim's endpoints; may be
// nil) and following the leader. It returns the code to answer with when
// the claim is refused, else errNone (check d.fatal after it).
func (d *Driver) followLeaderClaim(now time.Time, api string, epoch Epoch, leader NodeID, learn func()) int16 {
	if code := d.voterOnlyCheck(epoch, leader); code != errNone {
		return code
	}
	if reason := d.forgedLeaderClaim(epoch, leader); reason != "" {
		d.remoteLg.Error("refusing "+api+": "+reason, zapEpoch("epoch", epoch),
			zapNode("claimedLeader", leader), zapEpoch("localEpoch", d.epoch),
			zapNode("knownLeader", d.leaderID), zap.Stringer("role", d.role()))
		return errInvalidRequest
	}
	if learn != nil {
		learn()
	}
	d.maybeFollow(now, epoch, leader, api)
	return errNone
}

// forgedLeaderClaim explains why a leader claim (from BeginQuorumEpoch or
// EndQuorumEpoch) cannot be true, or returns "".
func (d *Driver) forgedLeaderClaim(epoch Epoch, leader NodeID) string {
	switch {
	case leader == d.self() && !(epoch == d.epoch && d.state.ledEpoch()):
		return "it names this node leader of an epoch it does not lead"
	case epoch == d.epoch && d.state.ledEpoch() && leader != d.self():
		return "another node claims this node's own epoch"
	case epoch == d.epoch && d.leaderID >= 0 && d.leaderID != leader:
		return "a second leader for the epoch"
	case epoch > d.epoch && d.leaderID >= 0 && leader == d.leaderID && d.asFollower() != nil:
		return "a higher epoch naming the leader of the current epoch"
	}
	return ""
}
