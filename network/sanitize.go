package network

import (
	"fmt"
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kmsg writes a tagged field whenever it differs from its default, even at a version
// below the one that defines it, and a JVM peer rejects such a message ("Tag N is not
// valid for version V") and closes the connection (spec interop pitfall 16). The
// functions below reset every tagged field of the raft apis that is not valid for the
// message's version. Fields that are not tagged are already version-gated by kmsg.
//
// Tag versions (Kafka's message JSON):
//   FetchRequest: ReplicaState 15+; partition ReplicaDirectoryId 17+, HighWatermark 18+.
//   FetchSnapshotRequest: partition ReplicaDirectoryId 1+.
//   FetchResponse: NodeEndpoints 16+.
//   Vote/BeginQuorumEpoch/EndQuorumEpoch/FetchSnapshot responses: NodeEndpoints 1+.

// A lower version drops the fields it does not define. For a field Kafka marks
// non-ignorable, dropping a non-default value changes what the request asks, so Kafka's
// serializer refuses to write it (UnsupportedVersionException) and so does
// downgradeError. Checked, for the requests kraftd sends (Kafka's message JSON):
//   - Vote: PreVote (v2+, not ignorable): a pre-vote sent at v0-1 is a real vote that
//     bumps the voter's epoch and may be granted and persisted; refused. VoterId and the
//     directory ids (v1+, ignorable) only let the receiver check it is the intended
//     voter: dropping them is harmless.
//   - Fetch: LastFetchedEpoch (v12+, not ignorable): without it the leader cannot
//     detect a diverging follower log, which would then never be truncated; refused.
//     ReplicaDirectoryId (v17+), HighWatermark (v18+), ClusterId (v12+ tag),
//     ReplicaState (v15+, carried into ReplicaId below) and Topic/TopicId (raft sets
//     both) are ignorable; dropping them loses a check or an optimisation only.
//   - BeginQuorumEpoch: VoterId, VoterDirectoryId, LeaderEndpoints (v1+) are ignorable.
//   - EndQuorumEpoch: raft fills both PreferredSuccessors (v0) and
//     PreferredCandidates (v1+), so either version carries the successors.
//   - FetchSnapshot: ReplicaDirectoryId (v1+ tag) is ignorable.
//   - AddRaftVoter, RemoveRaftVoter, UpdateRaftVoter: one version each, nothing dropped.

// downgradeError returns an error wrapping kerr.UnsupportedVersion when encoding req at
// version v would drop a field whose value changes the request's meaning.
func downgradeError(req kmsg.Request, v int16) error {
	switch r := req.(type) {
	case *kmsg.VoteRequest:
		if v >= 2 {
			return nil
		}
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if p.PreVote {
					return fmt.Errorf("network: Vote v%d cannot carry PreVote (v2+): %w", v, kerr.UnsupportedVersion)
				}
			}
		}
	case *kmsg.FetchRequest:
		if v >= 12 {
			return nil
		}
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if p.LastFetchedEpoch != -1 {
					return fmt.Errorf("network: Fetch v%d cannot carry LastFetchedEpoch %d (v12+): %w", v, p.LastFetchedEpoch, kerr.UnsupportedVersion)
				}
			}
		}
	}
	return nil
}

// prepareRequest returns the request to encode at version v: req itself when it is valid
// as is, else a copy with the out-of-version tagged fields reset. req is never modified,
// so the caller may send one request object to several peers.
func prepareRequest(req kmsg.Request, v int16) kmsg.Request {
	switch r := req.(type) {
	case *kmsg.FetchRequest:
		cp := *r
		cp.Version = v
		// The replica id moved from ReplicaID (v0-14) to ReplicaState.ID (v15+); carry
		// it across so one request works at either version, as Kafka's builder does.
		if v >= 15 {
			if cp.ReplicaState.ID == -1 && cp.ReplicaID != -1 {
				cp.ReplicaState.ID = cp.ReplicaID
			}
		} else {
			if cp.ReplicaID == -1 && cp.ReplicaState.ID != -1 {
				cp.ReplicaID = cp.ReplicaState.ID
			}
			cp.ReplicaState = kmsg.NewFetchRequestReplicaState()
		}
		if fetchPartitionsNeedReset(cp.Topics, v) {
			topics := make([]kmsg.FetchRequestTopic, len(cp.Topics))
			for i, t := range cp.Topics {
				parts := make([]kmsg.FetchRequestTopicPartition, len(t.Partitions))
				copy(parts, t.Partitions)
				for j := range parts {
					if v < 17 {
						parts[j].ReplicaDirectoryID = [16]byte{}
					}
					if v < 18 {
						parts[j].HighWatermark = math.MaxInt64
					}
				}
				t.Partitions = parts
				topics[i] = t
			}
			cp.Topics = topics
		}
		return &cp
	case *kmsg.FetchSnapshotRequest:
		cp := *r
		cp.Version = v
		if v < 1 && snapshotPartitionsNeedReset(cp.Topics) {
			topics := make([]kmsg.FetchSnapshotRequestTopic, len(cp.Topics))
			for i, t := range cp.Topics {
				parts := make([]kmsg.FetchSnapshotRequestTopicPartition, len(t.Partitions))
				copy(parts, t.Partitions)
				for j := range parts {
					parts[j].ReplicaDirectoryID = [16]byte{}
				}
				t.Partitions = parts
				topics[i] = t
			}
			cp.Topics = topics
		}
		return &cp
	}
	return withVersion(req, v)
}

func fetchPartitionsNeedReset(topics []kmsg.FetchRequestTopic, v int16) bool {
	for _, t := range topics {
		for _, p := range t.Partitions {
			if v < 17 && p.ReplicaDirectoryID != [16]byte{} || v < 18 && p.HighWatermark != math.MaxInt64 {
				return true
			}
		}
	}
	return false
}

func snapshotPartitionsNeedReset(topics []kmsg.FetchSnapshotRequestTopic) bool {
	for _, t := range topics {
		for _, p := range t.Partitions {
			if p.ReplicaDirectoryID != [16]byte{} {
				return true
			}
		}
	}
	return false
}

// sanitizeResponse resets, in place, the tagged fields of a response (owned by the
// connection once respond was called) that its version does not define.
func sanitizeResponse(resp kmsg.Response) {
	v := resp.GetVersion()
	switch r := resp.(type) {
	case *kmsg.FetchResponse:
		if v < 16 {
			r.Brokers = nil
		}
	case *kmsg.VoteResponse:
		if v < 1 {
			r.NodeEndpoints = nil
		}
	case *kmsg.BeginQuorumEpochResponse:
		if v < 1 {
			r.NodeEndpoints = nil
		}
	case *kmsg.EndQuorumEpochResponse:
		if v < 1 {
			r.NodeEndpoints = nil
		}
	case *kmsg.FetchSnapshotResponse:
		if v < 1 {
			r.NodeEndpoints = nil
		}
	}
}
