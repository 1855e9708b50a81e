package raft_test

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// describe renders a raft request or response in one line for traces.
func describe(m kmsg.Request) string { return describeAny(m) }

func describeAny(m any) string {
	switch r := m.(type) {
	case *kmsg.VoteRequest:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				return fmt.Sprintf("Vote epoch=%d candidate=%d last=%d/%d prevote=%v", p.CandidateEpoch, p.CandidateID, p.LastOffset, p.LastOffsetEpoch, p.PreVote)
			}
		}
	case *kmsg.VoteResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				return fmt.Sprintf("VoteResp err=%d epoch=%d leader=%d granted=%v", p.ErrorCode, p.LeaderEpoch, p.LeaderID, p.VoteGranted)
			}
		}
		return fmt.Sprintf("VoteResp err=%d", r.ErrorCode)
	case *kmsg.BeginQuorumEpochRequest:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				return fmt.Sprintf("BeginQuorumEpoch epoch=%d leader=%d", p.LeaderEpoch, p.LeaderID)
			}
		}
	case *kmsg.BeginQuorumEpochResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				return fmt.Sprintf("BeginQuorumEpochResp err=%d epoch=%d leader=%d", p.ErrorCode, p.LeaderEpoch, p.LeaderID)
			}
		}
		return fmt.Sprintf("BeginQuorumEpochResp err=%d", r.ErrorCode)
	case *kmsg.EndQuorumEpochRequest:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				succ := p.PreferredSuccessors
				for _, c := range p.PreferredCandidates {
					succ = append(succ, c.CandidateID)
				}
				return fmt.Sprintf("EndQuorumEpoch epoch=%d leader=%d successors=%v", p.LeaderEpoch, p.LeaderID, succ)
			}
		}
	case *kmsg.EndQuorumEpochResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				return fmt.Sprintf("EndQuorumEpochResp err=%d epoch=%d leader=%d", p.ErrorCode, p.LeaderEpoch, p.LeaderID)
			}
		}
		return fmt.Sprintf("EndQuorumEpochResp err=%d", r.ErrorCode)
	case *kmsg.FetchRequest:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				replica := r.ReplicaID
				if r.Version >= 15 {
					replica = r.ReplicaState.ID
				}
				return fmt.Sprintf("Fetch replica=%d epoch=%d offset=%d lastEpoch=%d maxWait=%d", replica, p.CurrentLeaderEpoch, p.FetchOffset, p.LastFetchedEpoch, r.MaxWaitMillis)
			}
		}
	case *kmsg.FetchResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				return fmt.Sprintf("FetchResp err=%d/%d hw=%d leader=%d/%d diverging=%d/%d snapshot=%d/%d bytes=%d",
					r.ErrorCode, p.ErrorCode, p.HighWatermark, p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch,
					p.DivergingEpoch.EndOffset, p.DivergingEpoch.Epoch, p.SnapshotID.EndOffset, p.SnapshotID.Epoch, len(p.RecordBatches))
			}
		}
		return fmt.Sprintf("FetchResp err=%d", r.ErrorCode)
	case kmsg.Request:
		return kmsg.NameForKey(r.Key())
	case kmsg.Response:
		return kmsg.NameForKey(r.Key()) + "Resp"
	}
	return fmt.Sprintf("%T", m)
}
