package controller_test

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/controllertest"
)

func updateFeatures(version int16, validateOnly bool, updates ...kmsg.UpdateFeaturesRequestFeatureUpdate) *kmsg.UpdateFeaturesRequest {
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.Version, req.ValidateOnly, req.FeatureUpdates = version, validateOnly, updates
	return req
}

func featureUpdate(name string, level int16, typ int8) kmsg.UpdateFeaturesRequestFeatureUpdate {
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = name, level, typ
	return u
}

// UpdateFeatures on the active controller: a feature removed (safe
// downgrade) once its record commits on every node, a validate-only change
// writing nothing, a metadata.version downgrade and an unknown feature
// refused at the top level (no per-feature results at v1), per-feature
// results on success at v0-1, a broker lacking the feature refusing its
// upgrade, the kraft.version upgrade through raft, and NOT_CONTROLLER from
// a standby.
func TestActiveUpdateFeatures(t *testing.T) {
	c, lead := activeCluster(t)
	threeBrokers(t, c, lead)

	r := serveCommitted(t, c, lead, updateFeatures(2, true, featureUpdate("share.version", 0, 2))).(*kmsg.UpdateFeaturesResponse)
	if r.ErrorCode != 0 || c.App(lead).Image().FeatureLevel("share.version") != 2 {
		t.Fatalf("validate only: %+v, share.version %d", r, c.App(lead).Image().FeatureLevel("share.version"))
	}
	r = serveCommitted(t, c, lead, updateFeatures(1, false, featureUpdate("share.version", 0, 2))).(*kmsg.UpdateFeaturesResponse)
	if r.ErrorCode != 0 || r.ErrorMessage != nil || len(r.Results) != 1 || r.Results[0].Feature != "share.version" ||
		r.Results[0].ErrorMessage == nil || *r.Results[0].ErrorMessage != "NONE" {
		t.Fatalf("share.version=0 at v1: %+v", r)
	}
	for id := int32(1); id <= 3; id++ {
		if l := c.App(id).Image().FeatureLevel("share.version"); l != 0 {
			t.Errorf("node %d: share.version %d after its removal", id, l)
		}
	}

	for _, tc := range []struct {
		version int16
		update  kmsg.UpdateFeaturesRequestFeatureUpdate
		msg     string
	}{
		{1, featureUpdate("metadata.version", 32, 2), "Unsupported metadata.version downgrade from 33 to 32. Refusing to perform the requested downgrade because it might delete metadata information."},
		{2, featureUpdate("bogus.version", 1, 1), "Invalid update version 1 for feature bogus.version. Local controller "},
		{0, featureUpdate("group.version", 0, 1), "Invalid update version 0 for feature group.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."},
	} {
		r := serveCommitted(t, c, lead, updateFeatures(tc.version, false, tc.update)).(*kmsg.UpdateFeaturesResponse)
		if r.ErrorCode != kerr.InvalidUpdateVersion.Code || r.ErrorMessage == nil || len(r.Results) != 0 ||
			!strings.HasPrefix(*r.ErrorMessage, "The update failed for all features since the following feature had an error: "+tc.msg) {
			t.Errorf("%s=%d at v%d: %+v (%q)", tc.update.Feature, tc.update.MaxVersionLevel, tc.version, r, deref(r.ErrorMessage))
		}
	}

	// A fourth broker supporting share.version up to 1 only (it could not
	// register while 2 was finalized) refuses the upgrade to 2; a feature
	// named twice counts with its last level.
	reg := registration(4)
	for i := range reg.Features {
		if reg.Features[i].Name == "share.version" {
			reg.Features[i].MaxSupportedVersion = 1
		}
	}
	if r := serveCommitted(t, c, lead, reg).(*kmsg.BrokerRegistrationResponse); r.ErrorCode != 0 {
		t.Fatalf("broker 4: %+v", r)
	}
	r = serveCommitted(t, c, lead, updateFeatures(2, false, featureUpdate("share.version", 1, 1), featureUpdate("share.version", 2, 1))).(*kmsg.UpdateFeaturesResponse)
	if want := "Invalid update version 2 for feature share.version. Broker 4 only supports versions 0-1"; r.ErrorCode != kerr.InvalidUpdateVersion.Code ||
		!strings.HasSuffix(deref(r.ErrorMessage), want) {
		t.Errorf("an upgrade a broker lacks: %+v (%q)", r, deref(r.ErrorMessage))
	}
	if r := serveCommitted(t, c, lead, updateFeatures(2, false, featureUpdate("share.version", 1, 1))).(*kmsg.UpdateFeaturesResponse); r.ErrorCode != 0 ||
		c.App(lead).Image().FeatureLevel("share.version") != 1 {
		t.Fatalf("share.version=1: %+v", r)
	}

	// The followers never told this leader their kraft.version ranges
	// (UpdateRaftVoter): raft refuses, with Kafka's raft message.
	r = serveCommitted(t, c, lead, updateFeatures(2, false, featureUpdate("kraft.version", 1, 1))).(*kmsg.UpdateFeaturesResponse)
	if want := "Invalid upgrade of kraft.version to KRAFT_VERSION_1 because not all of the voters support it"; r.ErrorCode != kerr.InvalidUpdateVersion.Code ||
		!strings.HasSuffix(deref(r.ErrorMessage), want) || c.Env.Driver(lead).Status().KRaftVersion != 0 {
		t.Errorf("kraft.version=1: %+v (%q)", r, deref(r.ErrorMessage))
	}

	other := lead%3 + 1
	var a answer
	c.Serve(other, request(updateFeatures(2, false, featureUpdate("group.version", 1, 1)), &a))
	if a.n != 1 || a.code != kerr.NotController.Code {
		t.Fatalf("standby answered %+v", a)
	}
}

// brokerEpoch is broker id's epoch in the committed image of node at.
func brokerEpoch(t *testing.T, c *controllertest.Cluster, at, id int32) int64 {
	t.Helper()
	b, ok := c.App(at).Image().Broker(id)
	if !ok {
		t.Fatalf("broker %d is not registered on node %d", id, at)
	}
	return b.Epoch
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// The kraft.version upgrade of a single-voter quorum goes through raft,
// which appends its control batch between the controller's records: the
// answer comes once the NoOpRecord after it commits, and a registration
// after it still gets the offset of its own record as broker epoch.
func TestActiveUpdateFeaturesKRaftVersion(t *testing.T) {
	c := activeClusterOf(t, 1)
	if kv := c.Env.Driver(1).Status().KRaftVersion; kv != 0 {
		t.Fatalf("kraft.version %d before the upgrade", kv)
	}
	end := c.Env.Driver(1).Status().LogEndOffset
	r := serveCommitted(t, c, 1, updateFeatures(1, false, featureUpdate("kraft.version", 1, 1))).(*kmsg.UpdateFeaturesResponse)
	if r.ErrorCode != 0 || len(r.Results) != 1 || c.Env.Driver(1).Status().KRaftVersion != 1 {
		t.Fatalf("kraft.version=1: %+v (%q), kraft.version %d", r, deref(r.ErrorMessage), c.Env.Driver(1).Status().KRaftVersion)
	}
	if c.App(1).Image().Provenance().Offset < end+1 {
		t.Fatalf("the image stands at %d; the upgrade's NoOpRecord comes after the control batch at %d", c.App(1).Image().Provenance().Offset, end)
	}
	reg := serveCommitted(t, c, 1, registration(5)).(*kmsg.BrokerRegistrationResponse)
	if reg.ErrorCode != 0 || reg.BrokerEpoch != brokerEpoch(t, c, 1, 5) {
		t.Fatalf("registration after the upgrade: %+v, epoch in the image %d", reg, brokerEpoch(t, c, 1, 5))
	}
	if r := serveCommitted(t, c, 1, updateFeatures(2, false, featureUpdate("kraft.version", 1, 1))).(*kmsg.UpdateFeaturesResponse); r.ErrorCode != 0 {
		t.Fatalf("kraft.version=1 again: %+v", r)
	}
}
