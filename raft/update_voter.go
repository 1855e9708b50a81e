package raft

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// maybeSendUpdateVoter sends UpdateRaftVoter to the leader when the voter
// set in force records other endpoints or another kraft.version range for
// this voter than it has now (Kafka's pollFollowerAsVoter). Returns
// whether it sent.
func (d *Driver) maybeSendUpdateVoter(now time.Time) bool {
	if d.kraftVersion() < 1 || !d.voters.NeedsUpdate(d.localVoterNode()) || !d.reqs.ready(d.leaderID, now) {
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
	d.send(now, d.leaderID, apiUpdateRaftVoter, req, false)
	return true
}

// handleUpdateRaftVoterResponse: an error backs off; the updated set
// arrives through Fetch, and a leader change through the next Fetch.
func (d *Driver) handleUpdateRaftVoterResponse(r *kmsg.UpdateRaftVoterResponse) bool {
	if r.ErrorCode != errNone {
		d.remoteLg.Info("UpdateRaftVoter refused", zap.Int16("error", r.ErrorCode), zapNode("leader", d.leaderID))
		return false
	}
	return true
}
