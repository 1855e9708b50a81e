package raft

// AddRaftVoter (80) v0-v1, RemoveRaftVoter (81) v0, UpdateRaftVoter (82) v0.
//
// kraftd runs static voter sets (kraft.version 0), so voter changes are
// refused as a Kafka leader refuses them at kraft.version 0, after the
// checks that come first:
//   - cluster id mismatch -> INCONSISTENT_CLUSTER_ID (with a message);
//   - not leader -> NOT_LEADER_OR_FOLLOWER; shutting down ->
//     BROKER_NOT_AVAILABLE; UpdateRaftVoter also checks CurrentLeaderEpoch
//     (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH);
//   - VoterId < 0 or zero VoterDirectoryId -> INVALID_REQUEST;
//   - HW not yet known in this epoch -> REQUEST_TIMED_OUT;
//   - otherwise UNSUPPORTED_VERSION (finalized kraft.version is 0).
// UpdateRaftVoter always carries CurrentLeader.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// voterChangeCheck returns the error code and message for a voter change.
func (d *Driver) voterChangeCheck(clusterID *string, epoch Epoch, voterID NodeID, dir [16]byte) (int16, string) {
	if !d.validClusterID(clusterID) {
		got := "null"
		if clusterID != nil {
			got = *clusterID
		}
		return errInconsistentCluster, fmt.Sprintf("cluster id %q does not match %q", got, d.cfg.ClusterID)
	}
	if code := d.leaderOnlyCheck(epoch); code != errNone {
		return code, ""
	}
	if voterID < 0 || dir == ([16]byte{}) {
		return errInvalidRequest, "voter id and directory id are required"
	}
	if d.leader.highWatermark < 0 {
		return errRequestTimedOut, "the leader has not committed an entry of its epoch yet"
	}
	return errUnsupportedVersion, "kraft.version is 0: the voter set is static"
}

func (d *Driver) handleAddRaftVoter(req *kmsg.AddRaftVoterRequest) kmsg.Response {
	resp := kmsg.NewPtrAddRaftVoterResponse()
	code, msg := d.voterChangeCheck(req.ClusterID, d.epoch, NodeID(req.VoterID), req.VoterDirectoryID)
	resp.ErrorCode = code
	if msg != "" {
		resp.ErrorMessage = &msg
	}
	return resp
}

func (d *Driver) handleRemoveRaftVoter(req *kmsg.RemoveRaftVoterRequest) kmsg.Response {
	resp := kmsg.NewPtrRemoveRaftVoterResponse()
	code, msg := d.voterChangeCheck(req.ClusterID, d.epoch, NodeID(req.VoterID), req.VoterDirectoryID)
	resp.ErrorCode = code
	if msg != "" {
		resp.ErrorMessage = &msg
	}
	return resp
}

func (d *Driver) handleUpdateRaftVoter(req *kmsg.UpdateRaftVoterRequest) kmsg.Response {
	resp := kmsg.NewPtrUpdateRaftVoterResponse()
	resp.ErrorCode, _ = d.voterChangeCheck(req.ClusterID, Epoch(req.CurrentLeaderEpoch), NodeID(req.VoterID), req.VoterDirectoryID)
	resp.CurrentLeader.LeaderID = int32(d.leaderID)
	resp.CurrentLeader.LeaderEpoch = int32(d.epoch)
	if id, ep, ok := d.leaderEndpoint(); ok && id == NodeID(resp.CurrentLeader.LeaderID) {
		resp.CurrentLeader.Host, resp.CurrentLeader.Port = ep.Host, ep.Port
	}
	return resp
}
