package raft

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// Error codes used by the handlers.
var (
	errNone                 = int16(0)
	errUnknownServer        = kerr.UnknownServerError.Code
	errUnknownTopic         = kerr.UnknownTopicOrPartition.Code
	errNotLeader            = kerr.NotLeaderForPartition.Code
	errRequestTimedOut      = kerr.RequestTimedOut.Code
	errBrokerNotAvailable   = kerr.BrokerNotAvailable.Code
	errUnsupportedVersion   = kerr.UnsupportedVersion.Code
	errInvalidRequest       = kerr.InvalidRequest.Code
	errFencedLeaderEpoch    = kerr.FencedLeaderEpoch.Code
	errUnknownLeaderEpoch   = kerr.UnknownLeaderEpoch.Code
	errSnapshotNotFound     = kerr.SnapshotNotFound.Code
	errPositionOutOfRange   = kerr.PositionOutOfRange.Code
	errInconsistentCluster  = kerr.InconsistentClusterID.Code
	errInvalidVoterKey      = kerr.InvalidVoterKey.Code
	errClusterAuthorization = kerr.ClusterAuthorizationFailed.Code
)

// validClusterID: null is accepted, otherwise exact string equality ("" is
// not null).
func (d *Driver) validClusterID(id *string) bool {
	return id == nil || *id == d.cfg.ClusterID
}

// voterOnlyCheck validates the epoch and sender of Vote, BeginQuorumEpoch
// and EndQuorumEpoch.
func (d *Driver) voterOnlyCheck(epoch Epoch, sender NodeID) int16 {
	switch {
	case epoch < d.epoch:
		return errFencedLeaderEpoch
	case sender < 0:
		return errInvalidRequest
	}
	return errNone
}

// leaderOnlyCheck validates the epoch of Fetch and FetchSnapshot.
func (d *Driver) leaderOnlyCheck(epoch Epoch) int16 {
	switch {
	case epoch < d.epoch:
		return errFencedLeaderEpoch
	case epoch > d.epoch:
		return errUnknownLeaderEpoch
	case d.asLeader() == nil:
		return errNotLeader
	case d.shuttingDown:
		return errBrokerNotAvailable
	}
	return errNone
}

// leaderEndpoint is the current leader's address on the default listener.
//
// Every response names the leader this node knows at its epoch (d.leaderID)
// with this endpoint, even to the requester itself, as Kafka does
// (QuorumState.leaderIdOrSentinel). A JVM node halts on an answer naming it
// leader while it does not lead, but checks that only for an answer with a
// higher epoch or FENCED_LEADER_EPOCH / NOT_LEADER_OR_FOLLOWER
// (KafkaRaftClient.hasConsistentLeader), an answer a Kafka peer would give it
// as well; a resigned leader moves to the next epoch before it asks again.
func (d *Driver) leaderEndpoint() (NodeID, Endpoint, bool) {
	if d.leaderID < 0 {
		return -1, Endpoint{}, false
	}
	if d.leaderID == d.self() {
		for _, e := range d.cfg.Endpoints {
			if e.Name == d.cfg.ListenerName || d.cfg.ListenerName == "" {
				return d.leaderID, e, true
			}
		}
		return -1, Endpoint{}, false
	}
	if e, ok := d.voters.Endpoint(d.leaderID, d.cfg.ListenerName); ok {
		return d.leaderID, e, true
	}
	// A leader outside this node's voter set (an observer's view, or a set
	// not yet replicated here): the address it advertised.
	if e, ok := d.learned[d.leaderID]; ok {
		return d.leaderID, e, true
	}
	return -1, Endpoint{}, false
}

// handleCommonResponse applies the partition-level rules every raft
// response shares (docs/design/state-machine.md 2.4). It returns handled=true
// when the response is fully dealt with, and then success tells whether
// the destination should back off (false) or is ready again (true).
func (d *Driver) handleCommonResponse(now time.Time, code int16, leader NodeID, epoch Epoch, from NodeID, api kmsg.Key) (handled, success bool) {
	switch {
	case epoch < d.epoch || code == errUnknownLeaderEpoch:
		// Stale peer: ignore (Kafka retries at once; we back off so a
		// discovery fetch does not spin on it).
		return true, false
	case epoch > d.epoch || code == errFencedLeaderEpoch || code == errNotLeader:
		var changed bool
		if leader >= 0 {
			changed = d.maybeFollow(now, epoch, leader, api.Name()+" response")
		} else {
			changed = d.observeEpoch(now, epoch)
		}
		// Kafka retries at once either way; when the answer taught nothing
		// (e.g. an unattached peer, or a leader that just resigned) we back
		// off retry.backoff.ms instead of spinning on the same answer.
		return true, changed
	case leader >= 0 && d.leaderID < 0 && d.asLeader() == nil:
		// Same epoch, leader newly learned: follow, and process the
		// payload of a NONE answer in the same round.
		changed := d.maybeFollow(now, epoch, leader, api.Name()+" response")
		if code != errNone || !changed {
			return true, code == errNone
		}
		return false, false
	case leader >= 0 && d.leaderID >= 0 && leader != d.leaderID:
		d.remoteLg.Error("response names a second leader for the epoch; ignored", zap.String("api", api.Name()),
			zapNode("from", from), zapEpoch("epoch", epoch), zapNode("claimed", leader), zapNode("known", d.leaderID))
		return true, false
	case code == errBrokerNotAvailable:
		return true, false
	case code == errInvalidVoterKey:
		d.remoteLg.Warn("peer reports an invalid voter key", zap.String("api", api.Name()), zapNode("from", from))
		return true, true
	case code == errInvalidRequest:
		d.remoteLg.Error("peer rejected request as invalid", zap.String("api", api.Name()), zapNode("from", from))
		return true, false
	case code != errNone:
		d.remoteLg.Warn("unexpected error in response", zap.String("api", api.Name()), zapNode("from", from),
			zap.Int16("error", code))
		return true, false
	}
	return false, false
}

// handleTopLevelError: everything backs off and retries (cluster
// authorization failures included: a local decision, logged loudly).
func (d *Driver) handleTopLevelError(code int16, api kmsg.Key, from NodeID) bool {
	if code == errClusterAuthorization {
		d.remoteLg.Error("cluster authorization failed", zap.String("api", api.Name()), zapNode("from", from))
	} else {
		d.remoteLg.Warn("top-level error in response", zap.String("api", api.Name()), zapNode("from", from), zap.Int16("error", code))
	}
	return false
}
