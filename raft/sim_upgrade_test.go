package raft_test

// The kraft.version upgrade in the simulator (mix "upgrade"): a static
// quorum (controller.quorum.voters; every node has a directory id, as
// Kafka's format writes one) whose followers report themselves to each
// leader with UpdateRaftVoter. The nemesis sends kafka-features'
// UpdateFeatures(kraft.version=1), sometimes validate-only, to the leader or
// another node while crashes, partitions, resignations and snapshots go on;
// after the heal an admin repeats it until the upgrade commits.
//
// Invariants, besides the others (sim_check_test.go) and M1/M2 of the
// membership mix:
//
//	U1  once a node's high watermark passes the committed upgrade, its
//	    kraft.version is 1 and stays 1 (no truncation or snapshot load
//	    rewinds a committed upgrade)
//	U2  at convergence the upgrade has committed and every node holds
//	    kraft.version 1 and the same voter set: the static ids, each with
//	    its node's directory id, endpoint and kraft.version range 0-1

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

// upgradeKRaftVersion is the nemesis' upgrade event.
func (s *sim) upgradeKRaftVersion() {
	n := s.pick()
	if !n.up {
		return
	}
	s.stats.upgrades++
	validate := s.rng.IntN(4) == 0
	s.tracef("NEMESIS UpdateFeatures kraft.version=1 validate-only=%v via %d", validate, n.id)
	s.adminRequest(n, upgradeRequest(validate))
}

func upgradeRequest(validateOnly bool) *kmsg.UpdateFeaturesRequest {
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.Version = 2
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = features.KRaftVersionName, 1, 1
	req.FeatureUpdates = append(req.FeatureUpdates, u)
	req.ValidateOnly = validateOnly
	return req
}

// finalUpgrade runs after the heal: every second until the upgrade commits,
// the admin asks the leader again (refused until every voter has reported
// its range to it).
func (s *sim) finalUpgrade() {
	if s.violation != "" || s.chk.done || s.chk.upgradedAt >= 0 {
		return
	}
	if l := s.leaderNode(); l != nil {
		s.stats.upgrades++
		s.tracef("ADMIN UpdateFeatures kraft.version=1 via leader %d", l.id)
		s.adminRequest(l, upgradeRequest(false))
	}
	s.after(time.Second, s.finalUpgrade)
}

// noteCommittedUpgrade records the offset of the first committed
// KRaftVersion(1) record.
func (c *checker) noteCommittedUpgrade(b protocol.Batch) {
	if c.upgradedAt >= 0 {
		return
	}
	for i, r := range b.Records {
		typ, value, err := protocol.ReadControlRecord(r)
		if err != nil || typ != protocol.ControlKRaftVersion {
			continue
		}
		var kv protocol.KRaftVersionRecord
		if err := kv.ReadFrom(value); err == nil && kv.KRaftVersion == 1 {
			c.upgradedAt = b.BaseOffset + int64(i)
			c.s.tracef("UPGRADE committed at offset %d", c.upgradedAt)
			return
		}
	}
}

// checkUpgrade is U1 for node n after an event.
func (c *checker) checkUpgrade(n *simNode, st raft.Status) {
	if c.upgradedAt >= 0 && st.HighWatermark > c.upgradedAt && st.KRaftVersion != 1 {
		c.s.fail("U1: node %d has high watermark %d past the upgrade committed at %d but kraft.version %d",
			n.id, st.HighWatermark, c.upgradedAt, st.KRaftVersion)
	}
}

// upgradeConverged is U2, checked when the quorum has converged otherwise.
func (c *checker) upgradeConverged(leader raft.Status) (bool, string) {
	s := c.s
	if c.upgradedAt < 0 {
		return false, "the kraft.version upgrade has not committed"
	}
	want := leader.Voters
	if want.Len() != s.opts.voters {
		return false, fmt.Sprintf("upgraded voter set %v, want the %d static voters", want, s.opts.voters)
	}
	for _, v := range want.Nodes() {
		i, ok := s.byID[int32(v.Key.ID)]
		if !ok || !s.nodes[i].voter || v.Key.DirectoryID != s.nodes[i].dir || len(v.Endpoints) != 1 ||
			v.KRaftVersions != (raft.VersionRange{Min: 0, Max: 1}) {
			return false, fmt.Sprintf("upgraded voter %v (%v, range %v) does not match its node", v.Key, v.Endpoints, v.KRaftVersions)
		}
	}
	for _, n := range s.nodes {
		st := n.drv.Status()
		if st.KRaftVersion != 1 || !st.Voters.Equal(want) {
			return false, fmt.Sprintf("node %d at kraft.version %d with voters %v, leader %v", n.id, st.KRaftVersion, st.Voters, want)
		}
	}
	return true, ""
}
