package raft_test

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap/zaptest"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/raft/rafttest"
)

// staticLeader is node 1, the single voter of a static quorum with a
// directory id, leading at once.
func staticLeader(t *testing.T, l *rafttest.MemLog, store *rafttest.MemStateStore) *changeCtx {
	t.Helper()
	cfg := raft.DefaultConfig()
	cfg.NodeID, cfg.DirectoryID, cfg.ClusterID = 1, testDir(1), testCluster
	cfg.ListenerName = "CONTROLLER"
	cfg.Endpoints = []raft.Endpoint{{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9001}}
	cfg.Voters = []raft.Voter{{ID: 1, Endpoints: cfg.Endpoints}}
	cfg.AppendLinger = 0
	c := &changeCtx{t: t, tr: &fakeTransport{}, now: time.Unix(100, 0)}
	d, err := raft.NewDriver(cfg, l, store, c.tr, rand.New(rand.NewPCG(1, 1)), zaptest.NewLogger(t), c.now)
	if err != nil {
		t.Fatal(err)
	}
	c.d = d
	if st := d.Status(); st.Role != raft.RoleLeader || st.HighWatermark < 1 {
		t.Fatalf("static single voter: %+v", st)
	}
	return c
}

func upgradeReq(version, level int16, validateOnly bool) *kmsg.UpdateFeaturesRequest {
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.Version = version
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = features.KRaftVersionName, level, 1
	req.FeatureUpdates = append(req.FeatureUpdates, u)
	req.ValidateOnly = validateOnly
	return req
}

// The upgrade of a static single voter: validate-only changes nothing; the
// real one appends KRaftVersion(1) and the Voters record with the leader's
// directory id in one control batch and answers once it commits (v1 with a
// result per feature); the next quorum-state write is data_version 1, and a
// restart reads kraft.version 1 and the set back from the log.
func TestUpgradeKRaftVersion(t *testing.T) {
	l, store := rafttest.NewMemLog(), rafttest.NewMemStateStore()
	c := staticLeader(t, l, store)
	end := l.EndOffset()
	if _, resp := c.step(upgradeReq(1, 1, true)); resp.(*kmsg.UpdateFeaturesResponse).ErrorCode != 0 || l.EndOffset() != end {
		t.Fatalf("validate-only: %+v, log end %v -> %v", resp, end, l.EndOffset())
	}
	_, resp := c.step(upgradeReq(1, 1, false))
	r, ok := resp.(*kmsg.UpdateFeaturesResponse)
	if !ok || r.ErrorCode != 0 || len(r.Results) != 1 || r.Results[0].Feature != features.KRaftVersionName || r.Results[0].ErrorCode != 0 {
		t.Fatalf("upgrade answer: %+v", resp)
	}
	b, ok := l.BatchAt(end.Offset)
	if !ok || b.LastOffset != end.Offset+1 {
		t.Fatalf("upgrade batch at %d: %+v", end.Offset, b)
	}
	if types := controlTypes(t, b.Data); len(types) != 2 || types[0] != protocol.ControlKRaftVersion || types[1] != protocol.ControlKRaftVoters {
		t.Fatalf("upgrade batch records %v, want KRaftVersion, KRaftVoters", types)
	}
	st := c.d.Status()
	if st.KRaftVersion != 1 || st.HighWatermark <= b.LastOffset {
		t.Fatalf("after the upgrade: %+v", st)
	}
	if v, ok := st.Voters.Voter(1); !ok || v.Key.DirectoryID != testDir(1) || v.KRaftVersions != (raft.VersionRange{Min: 0, Max: 1}) {
		t.Fatalf("voter set after the upgrade: %v", st.Voters)
	}
	if _, resp := c.step(upgradeReq(2, 1, false)); resp.(*kmsg.UpdateFeaturesResponse).ErrorCode != 0 || l.EndOffset().Offset != b.LastOffset+1 {
		t.Fatalf("repeated upgrade: %+v, log end %v", resp, l.EndOffset())
	}

	c.d.Shutdown(c.now)
	c2 := staticLeader(t, l, store)
	st2 := c2.d.Status()
	if st2.KRaftVersion != 1 || !st2.Voters.Equal(st.Voters) {
		t.Fatalf("after restart: kraft.version %d voters %v, want 1 %v", st2.KRaftVersion, st2.Voters, st.Voters)
	}
	if qs, _ := store.State(); qs.Voters != nil {
		t.Errorf("quorum state after the upgrade keeps data_version 0's voters %v", qs.Voters)
	}
}

// Refusals a Kafka 4.4 controller gives, at the edge of the request.
func TestUpgradeKRaftVersionRefusals(t *testing.T) {
	c := staticLeader(t, rafttest.NewMemLog(), rafttest.NewMemStateStore())
	for _, tc := range []struct {
		name string
		req  func() *kmsg.UpdateFeaturesRequest
		code int16
	}{
		{"unknown upgrade type", func() *kmsg.UpdateFeaturesRequest {
			r := upgradeReq(1, 1, false)
			r.FeatureUpdates[0].UpgradeType = 9
			return r
		}, kerr.InvalidUpdateVersion.Code},
		{"negative level", func() *kmsg.UpdateFeaturesRequest { return upgradeReq(1, -1, false) }, kerr.InvalidUpdateVersion.Code},
		{"unknown feature", func() *kmsg.UpdateFeaturesRequest {
			r := upgradeReq(2, 1, false)
			r.FeatureUpdates[0].Feature = "group.version"
			return r
		}, kerr.InvalidUpdateVersion.Code},
		{"level too high", func() *kmsg.UpdateFeaturesRequest { return upgradeReq(2, 7, false) }, kerr.InvalidUpdateVersion.Code},
	} {
		_, resp := c.step(tc.req())
		r, ok := resp.(*kmsg.UpdateFeaturesResponse)
		if !ok || r.ErrorCode != tc.code || r.ErrorMessage == nil || len(r.Results) != 0 {
			t.Errorf("%s: %+v, want %v with a message", tc.name, resp, kerr.ErrorForCode(tc.code))
		}
	}
	if st := c.d.Status(); st.KRaftVersion != 0 {
		t.Errorf("a refused upgrade moved kraft.version to %d", st.KRaftVersion)
	}
	// Kafka's controller reads no upgrade type from a version 0 request
	// (UPGRADE, the field's default) and ignores its AllowDowngrade.
	r := upgradeReq(0, 1, false)
	r.FeatureUpdates[0].AllowDowngrade = true
	r.FeatureUpdates[0].UpgradeType = 0 // as a version 0 request decodes
	if _, resp := c.step(r); resp == nil || resp.(*kmsg.UpdateFeaturesResponse).ErrorCode != 0 || c.d.Status().KRaftVersion != 1 {
		t.Errorf("v0 upgrade with AllowDowngrade: %+v, kraft.version %d; want an upgrade to 1", resp, c.d.Status().KRaftVersion)
	}
}

// controlTypes lists the control record types of one control batch.
func controlTypes(t *testing.T, data []byte) []int16 {
	t.Helper()
	b, _, err := protocol.DecodeBatch(data)
	if err != nil || !b.Control {
		t.Fatalf("not a control batch (%v)", err)
	}
	var types []int16
	for _, r := range b.Records {
		typ, _, err := protocol.ReadControlRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, typ)
	}
	return types
}

// The active controller's path to the upgrade: validation alone appends
// nothing, the upgrade appends the control batch and reports its offset, a
// repeat is nothing, a downgrade is refused with Kafka's raft message, and
// another epoch is refused as Append refuses it.
func TestUpgradeKRaftVersionForController(t *testing.T) {
	c := staticLeader(t, rafttest.NewMemLog(), rafttest.NewMemStateStore())
	epoch := c.d.Status().Epoch
	end := c.d.Status().LogEndOffset
	if last, err := c.d.UpgradeKRaftVersion(c.now, epoch, 1, true); err != nil || last != -1 || c.d.Status().KRaftVersion != 0 {
		t.Fatalf("validate only: %d %v, kraft.version %d", last, err, c.d.Status().KRaftVersion)
	}
	if _, err := c.d.UpgradeKRaftVersion(c.now, epoch+1, 1, false); !errors.Is(err, raft.ErrInvalidEpoch) {
		t.Fatalf("newer epoch: %v", err)
	}
	last, err := c.d.UpgradeKRaftVersion(c.now, epoch, 1, false)
	if err != nil || last < end || c.d.Status().KRaftVersion != 1 {
		t.Fatalf("upgrade: last %d (log end was %d) %v, kraft.version %d", last, end, err, c.d.Status().KRaftVersion)
	}
	if again, err := c.d.UpgradeKRaftVersion(c.now, epoch, 1, false); err != nil || again != -1 {
		t.Fatalf("repeat: %d %v", again, err)
	}
	var refused *raft.UpgradeRefused
	_, err = c.d.UpgradeKRaftVersion(c.now, epoch, 0, false)
	if !errors.As(err, &refused) || refused.Message != "Invalid upgrade of kraft.version from version KRAFT_VERSION_1 to KRAFT_VERSION_0 because the new version is a downgrade" {
		t.Fatalf("downgrade: %v", err)
	}
}
