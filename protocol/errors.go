package protocol

import "github.com/twmb/franz-go/pkg/kmsg"

// TopLevelErrorCode is a raft response's top-level error code, where Kafka reports errors
// of the whole request (INCONSISTENT_CLUSTER_ID among them); ok is false for a response
// kind that has none here.
func TopLevelErrorCode(resp kmsg.Response) (code int16, ok bool) {
	switch r := resp.(type) {
	case *kmsg.VoteResponse:
		return r.ErrorCode, true
	case *kmsg.BeginQuorumEpochResponse:
		return r.ErrorCode, true
	case *kmsg.EndQuorumEpochResponse:
		return r.ErrorCode, true
	case *kmsg.FetchResponse:
		return r.ErrorCode, true
	case *kmsg.FetchSnapshotResponse:
		return r.ErrorCode, true
	case *kmsg.AddRaftVoterResponse:
		return r.ErrorCode, true
	case *kmsg.RemoveRaftVoterResponse:
		return r.ErrorCode, true
	case *kmsg.UpdateRaftVoterResponse:
		return r.ErrorCode, true
	}
	return 0, false
}
