package raft

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// maybeSendUpdateVoter sends UpdateRaftVoter to the leader when the voter
// set in force records other endpoints or another kraft.version range for
// this voter than it has now (Kafka's pollFollowerAsVoter), or, at
// kraft.version 0, until this epoch's leader has taken it once: the leader
// keeps it for a kraft.version upgrade (Kafka 4.4's
// shouldSendUpdateVoteRequest and hasUpdatedLeader). Returns whether it
// sent.
func (d *Driver) maybeSendUpdateVoter(now time.Time) bool {
	stale := d.voters.NeedsUpdate(d.localVoterNode())
	if d.kraftVersion() < 1 {
		stale = !d.asFollower().updatedLeader && d.localKey().HasDirectory()
	}
	if !stale || !d.reqs.Ready(d.leaderID, now) {
		return false
	}
	req := kmsg.NewPtrUpdateRaftVoterRequest()
	req.ClusterID = d.clusterIDPtr()
	req.CurrentLeaderEpoch = int32(d.epoch)
	req.VoterID, req.VoterDirectoryID = int32(d.self()), d.cfg.DirectoryID
	for _, e := range d.cfg.Endpoints {
		l := kmsg.NewUpdateRaftVoterRequestListener()
		l.Name, l.Host, l.Port = e.Name, e.Host, uint16(e.Port)
		req.Listeners = append(req.Listeners, l)
	}
	req.KRaftVersionFeature.MinSupportedVersion = kraftVersionsSupported.Min
	req.KRaftVersionFeature.MaxSupportedVersion = kraftVersionsSupported.Max
	d.lg.Info("voter set records stale endpoints or kraft.version range for this voter; sending UpdateRaftVoter",
		zapNode("leader", d.leaderID), zapEpoch("epoch", d.epoch))
	d.send(now, d.leaderID, req, false)
	return true
}

// maybeAutoJoin is Kafka 4.4's auto-join (KIP-1186) of an observer:
// every fetch.timeout, an observer controller with
// controller.quorum.auto.join.enable asks the leader to remove the voter
// with its id but another directory id, or else to add it (answered at
// append: AckWhenCommitted false). Like Kafka 4.4 it keeps no memory of
// having been removed: an observer that auto-joins rejoins after a removal
// as long as the option is on. Returns whether it sent.
func (d *Driver) maybeAutoJoin(now time.Time, f *followerState) bool {
	if !d.cfg.AutoJoin || d.shuttingDown || d.self() < 0 || d.kraftVersion() < 1 || !f.updateVoter.expired(now) ||
		d.fetchInFlight() || !d.reqs.Ready(d.leaderID, now) {
		return false
	}
	vs, _ := d.kraft.latestVoters()
	if old, ok := vs.Voter(d.self()); ok {
		req := kmsg.NewPtrRemoveRaftVoterRequest()
		req.ClusterID = d.clusterIDPtr()
		req.VoterID, req.VoterDirectoryID = int32(old.Key.ID), old.Key.DirectoryID
		d.lg.Info("auto-join: removing the voter with this node's id and another directory", zap.Stringer("voter", old.Key))
		d.send(now, d.leaderID, req, false)
	} else {
		req := kmsg.NewPtrAddRaftVoterRequest()
		req.ClusterID = d.clusterIDPtr()
		req.TimeoutMillis = int32(d.cfg.RequestTimeout.Milliseconds())
		req.VoterID, req.VoterDirectoryID = int32(d.self()), d.cfg.DirectoryID
		for _, e := range d.cfg.Endpoints {
			l := kmsg.NewAddRaftVoterRequestListener()
			l.Name, l.Host, l.Port = e.Name, e.Host, uint16(e.Port)
			req.Listeners = append(req.Listeners, l)
		}
		req.AckWhenCommitted = false
		d.lg.Info("auto-join: asking the leader to add this node", zapNode("leader", d.leaderID))
		d.send(now, d.leaderID, req, false)
	}
	f.updateVoter.reset(now, d.cfg.FetchTimeout)
	return true
}

// handleJoinResponse: success, REQUEST_TIMED_OUT and the "already done"
// code wait for the next period; other errors back off (Kafka's
// handleAddVoterResponse / handleRemoveVoterResponse).
func (d *Driver) handleJoinResponse(code, done int16) bool {
	if code == errNone || code == errRequestTimedOut || code == done {
		return true
	}
	d.remoteLg.Info("auto-join request refused", zap.Int16("error", code), zapNode("leader", d.leaderID))
	return false
}

// handleUpdateRaftVoterResponse: an error backs off; the updated set
// arrives through Fetch, and a leader change through the next Fetch. NONE
// or UNSUPPORTED_VERSION (a leader without kraft.version upgrades) mean
// this epoch's leader needs no more updates at kraft.version 0.
func (d *Driver) handleUpdateRaftVoterResponse(_ time.Time, _ pending, r *kmsg.UpdateRaftVoterResponse) bool {
	if f := d.asFollower(); f != nil && (r.ErrorCode == errNone || r.ErrorCode == errUnsupportedVersion) {
		f.updatedLeader = true
	}
	if r.ErrorCode != errNone {
		d.remoteLg.Info("UpdateRaftVoter refused", zap.Int16("error", r.ErrorCode), zapNode("leader", d.leaderID))
		return false
	}
	return true
}
