package raft

// Vote (key 52): v0-v2.
//
// Behavior (receiver), in Kafka's order:
//   - cluster id mismatch ("" is not null) -> top INCONSISTENT_CLUSTER_ID;
//   - not exactly one topic/partition naming the raft partition -> top
//     INVALID_REQUEST;
//   - LastOffset < 0, LastOffsetEpoch < 0, LastOffsetEpoch >=
//     CandidateEpoch (> for a pre-vote), or CandidateEpoch above MaxEpoch
//     -> partition INVALID_REQUEST (these checks: voteAPI);
//   - voter-only check: epoch < local -> FENCED_LEADER_EPOCH, negative
//     candidate id -> INVALID_REQUEST;
//   - a higher epoch moves this node to Unattached at that epoch (durable),
//     even for a pre-vote and even when the vote is then refused;
//   - voter key (VoterId, VoterDirectoryId) not this node -> INVALID_VOTER_KEY;
//   - grant per role (docs/design/state-machine.md 4.3) when the candidate's
//     (last epoch, end offset) >= ours; a standard grant is persisted before
//     the answer leaves. Pre-votes change no state.
//
// Behavior (sender): Prospective sends PreVote=true at its current epoch,
// Candidate sends PreVote=false at its bumped epoch; answers are counted per
// voter; UNSUPPORTED_VERSION to a pre-vote makes a Prospective a Candidate.
//
// Version notes: v1 adds VoterId, directory ids and NodeEndpoints; v2 adds
// PreVote (kraftd advertises v2 only when pre-vote is enabled).

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/protocol"
)

var voteAPI = rpc[*kmsg.VoteRequest, *kmsg.VoteResponse]{
	versions:       protocol.VersionRange{Min: 0, Max: 2}, // v2: pre-vote (KIP-996)
	clusterID:      func(r *kmsg.VoteRequest) *string { return r.ClusterID },
	topError:       func(r *kmsg.VoteResponse) *int16 { return &r.ErrorCode },
	partitionError: func(r *kmsg.VoteResponse) int16 { return protocol.FirstNonZero(r.Topics, votePartitions, voteCode) },
	checkClusterID: true,
	partition:      voteShape,
	check:          (*Driver).checkVote,
	handle:         (*Driver).handleVote,
	answer: func(d *Driver, r *kmsg.VoteRequest, code int16) *kmsg.VoteResponse {
		return d.voteAnswer(r, code, false)
	},
	checkResponse: checkVoteResponse,
	onResponse:    (*Driver).handleVoteResponse,
	onSendError:   voteSendError,
}.register()

func voteShape(r *kmsg.VoteRequest) partitionShape {
	return shapeOf(false, r.Topics, func(t *kmsg.VoteRequestTopic) (string, [16]byte, []kmsg.VoteRequestTopicPartition) {
		return t.Topic, [16]byte{}, t.Partitions
	}, func(p *kmsg.VoteRequestTopicPartition) int32 { return p.Partition })
}

func voteResponseShape(r *kmsg.VoteResponse) partitionShape {
	return shapeOf(false, r.Topics, func(t *kmsg.VoteResponseTopic) (string, [16]byte, []kmsg.VoteResponseTopicPartition) {
		return t.Topic, [16]byte{}, t.Partitions
	}, func(p *kmsg.VoteResponseTopicPartition) int32 { return p.Partition })
}

func votePartitions(t *kmsg.VoteResponseTopic) []kmsg.VoteResponseTopicPartition { return t.Partitions }
func voteCode(p *kmsg.VoteResponseTopicPartition) int16                          { return p.ErrorCode }

// checkVote: the last offset and epochs (the shape passed at the edge).
func (d *Driver) checkVote(req *kmsg.VoteRequest) *refusal {
	p := &req.Topics[0].Partitions[0]
	preVote := req.Version >= 2 && p.PreVote
	switch {
	case p.LastOffset < 0 || p.LastOffsetEpoch < 0:
		return partitionRefusal(errInvalidRequest, "negative last offset %d or epoch %d", p.LastOffset, p.LastOffsetEpoch)
	case p.LastOffsetEpoch > p.CandidateEpoch || (!preVote && p.LastOffsetEpoch == p.CandidateEpoch):
		return partitionRefusal(errInvalidRequest, "last offset epoch %d not below candidate epoch %d", p.LastOffsetEpoch, p.CandidateEpoch)
	}
	return checkEpoch("candidate epoch", Epoch(p.CandidateEpoch))
}

func checkVoteResponse(r *kmsg.VoteResponse) string {
	return protocol.FirstNonZero(r.Topics, votePartitions, func(p *kmsg.VoteResponseTopicPartition) string {
		return checkLeader(NodeID(p.LeaderID), Epoch(p.LeaderEpoch))
	})
}

// handleVote answers a Vote request that passed checkVote.
func (d *Driver) handleVote(now time.Time, req *kmsg.VoteRequest, _ RequestRef) kmsg.Response {
	p := &req.Topics[0].Partitions[0]
	preVote := req.Version >= 2 && p.PreVote
	if code := d.voterOnlyCheck(Epoch(p.CandidateEpoch), NodeID(p.CandidateID)); code != errNone {
		return d.voteAnswer(req, code, false)
	}
	if Epoch(p.CandidateEpoch) > d.epoch {
		d.becomeUnattached(now, Epoch(p.CandidateEpoch))
		if d.fatal != nil {
			return nil
		}
	}
	if req.Version >= 1 && req.VoterID >= 0 &&
		(NodeID(req.VoterID) != d.self() || (p.VoterDirectoryID != [16]byte{} && p.VoterDirectoryID != d.cfg.DirectoryID)) {
		return d.voteAnswer(req, errInvalidVoterKey, false)
	}
	granted := d.decideVote(now, p, preVote)
	if d.fatal != nil {
		return nil
	}
	d.lg.Debug("vote request", zap.Bool("preVote", preVote), zap.Int32("candidate", p.CandidateID),
		zap.Int32("epoch", p.CandidateEpoch), zap.Bool("granted", granted))
	return d.voteAnswer(req, errNone, granted)
}

// voteAnswer is the partition answer to a Vote request of the raft
// partition.
func (d *Driver) voteAnswer(req *kmsg.VoteRequest, code int16, granted bool) *kmsg.VoteResponse {
	resp := kmsg.NewPtrVoteResponse()
	t := kmsg.NewVoteResponseTopic()
	t.Topic = d.cfg.TopicName
	rp := kmsg.NewVoteResponseTopicPartition()
	rp.Partition = d.cfg.Partition
	rp.ErrorCode = code
	rp.LeaderID = int32(d.leaderID)
	rp.LeaderEpoch = int32(d.epoch)
	rp.VoteGranted = granted
	t.Partitions = append(t.Partitions, rp)
	resp.Topics = append(resp.Topics, t)
	if req.Version >= 1 && rp.LeaderID >= 0 {
		if id, ep, ok := d.leaderEndpoint(); ok {
			ne := kmsg.NewVoteResponseNodeEndpoint()
			ne.NodeID, ne.Host, ne.Port = int32(id), ep.Host, uint16(ep.Port)
			resp.NodeEndpoints = append(resp.NodeEndpoints, ne)
		}
	}
	return resp
}

// decideVote applies the grant rules: the role's (canGrantVote), then for a
// standard vote one per epoch and none once a leader is known. A standard
// grant is durable.
func (d *Driver) decideVote(now time.Time, p *kmsg.VoteRequestTopicPartition, preVote bool) bool {
	if d.self() < 0 {
		return false // an id-less observer never votes
	}
	local := d.lastFetched()
	upToDate := p.LastOffsetEpoch > local.Epoch ||
		(p.LastOffsetEpoch == local.Epoch && p.LastOffset >= local.Offset)
	if preVote {
		return upToDate && d.state.canGrantVote(d, now, true)
	}
	if Epoch(p.CandidateEpoch) != d.epoch || !d.state.canGrantVote(d, now, false) {
		return false
	}
	if d.votedID >= 0 {
		return d.votedID == NodeID(p.CandidateID) &&
			(d.votedDir == [16]byte{} || d.votedDir == p.CandidateDirectoryID)
	}
	if d.leaderID >= 0 || !upToDate {
		return false
	}
	return d.grantVote(now, NodeID(p.CandidateID), p.CandidateDirectoryID)
}

func (d *Driver) buildVote(voter ReplicaKey, preVote bool) *kmsg.VoteRequest {
	req := kmsg.NewPtrVoteRequest()
	req.ClusterID = d.clusterIDPtr()
	req.VoterID = int32(voter.ID)
	t := kmsg.NewVoteRequestTopic()
	t.Topic = d.cfg.TopicName
	p := kmsg.NewVoteRequestTopicPartition()
	p.Partition = d.cfg.Partition
	p.CandidateEpoch = int32(d.epoch)
	p.CandidateID = int32(d.self())
	p.CandidateDirectoryID = d.cfg.DirectoryID
	p.VoterDirectoryID = voter.DirectoryID
	end := d.lastFetched()
	p.LastOffsetEpoch = end.Epoch
	p.LastOffset = end.Offset
	p.PreVote = preVote
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

func (d *Driver) handleVoteResponse(now time.Time, p pending, resp *kmsg.VoteResponse) bool {
	if resp.ErrorCode != errNone {
		if resp.ErrorCode == errUnsupportedVersion && d.skipPreVote(now, p) {
			return true
		}
		return d.handleTopLevelError(resp.ErrorCode, kmsg.Vote, p.to)
	}
	if !d.isRaftPartition(voteResponseShape(resp)) {
		return false
	}
	rp := &resp.Topics[0].Partitions[0]
	for _, e := range resp.NodeEndpoints {
		d.learnEndpoint(NodeID(e.NodeID), e.Host, int32(e.Port))
	}
	if handled, ok := d.handleCommonResponse(now, rp.ErrorCode, NodeID(rp.LeaderID), Epoch(rp.LeaderEpoch), p.to, kmsg.Vote); handled {
		return ok
	}
	e, ok := d.state.(election)
	if !ok || e.preVote() != p.preVote || p.epoch != d.epoch || Epoch(rp.LeaderEpoch) != d.epoch {
		return true // answer to an older election
	}
	e.tally().votes.Record(p.to, rp.VoteGranted)
	d.maybeWinElection(now)
	return true
}

// voteSendError: a pre-vote the transport could not send at v2 goes on as a
// candidacy (skipPreVote).
func voteSendError(d *Driver, now time.Time, p pending, err error) bool {
	if isUnsupportedVersion(err) && d.skipPreVote(now, p) {
		return true
	}
	return d.requestFailed(p, err)
}

// skipPreVote makes a Prospective whose pre-vote a peer cannot take (it
// lacks Vote v2) a Candidate, as Kafka 4.x does; it reports whether it did.
func (d *Driver) skipPreVote(now time.Time, p pending) bool {
	if _, ok := d.state.(*prospectiveState); !p.preVote || !ok {
		return false
	}
	d.lg.Info("peer does not support pre-vote; becoming candidate", zapNode("peer", p.to))
	d.becomeCandidate(now)
	return true
}
