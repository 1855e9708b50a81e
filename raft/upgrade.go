package raft

// UpdateFeatures (57) for kraft.version: the kraft.version 0 -> 1 upgrade of
// a static quorum, as `kafka-features --bootstrap-controller H:P upgrade
// --feature kraft.version=1` reaches Kafka 4.4's active controller
// (FeatureControlManager.updateFeature, then KafkaRaftClient.
// upgradeKRaftVersion and LeaderState.maybeAppendUpgradedKRaftVersion).
//
// Checks, in Kafka's order, each failing with INVALID_UPDATE_VERSION and
// the top-level message "The update failed for all features since the
// following feature had an error: <reason>":
//   - not the leader -> NOT_CONTROLLER ("The active controller appears to
//     be node N." / "No controller appears to be active."), no prefix;
//   - an unknown upgrade type (a version 0 request has none: UPGRADE, its
//     AllowDowngrade unread, as Kafka's controller reads it); a level below
//     0; a level above 1 or a feature other than kraft.version ("Local
//     controller N ...");
//   - a downgrade with type UPGRADE; an upgrade with a downgrade type; any
//     real downgrade (kraft.version cannot go down);
//   - the requested level is already finalized -> NONE, nothing appended;
//   - some voter's kraft.version range (from the UpdateRaftVoter it sent
//     this leader, the leader's own from its config) lacks the level.
//
// ValidateOnly stops there with NONE. Otherwise one control batch holding
// KRaftVersion(level) and the Voters record of the leader's volatile voters
// (static ids with the directory ids, endpoints and ranges they reported)
// is appended and in force at once; the answer waits until the high
// watermark passes the log end as it was (Kafka answers once the NoOpRecord
// it writes after the batch commits), or fails with NOT_CONTROLLER when
// leadership is lost first.

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/protocol"
)

var (
	errNotController        = kerr.NotController.Code
	errInvalidUpdateVersion = kerr.InvalidUpdateVersion.Code
)

var updateFeaturesAPI = func() *api {
	a := rpc[*kmsg.UpdateFeaturesRequest, *kmsg.UpdateFeaturesResponse]{
		versions: protocol.VersionRange{Min: 0, Max: 2}, // v2 drops the per-feature results
		topError: func(r *kmsg.UpdateFeaturesResponse) *int16 { return &r.ErrorCode },
		handle:   (*Driver).handleUpdateFeatures,
	}.register()
	// The error answer of an UpdateFeatures the node hands to an active
	// controller application instead (Kafka's getErrorResponse: the code
	// and message at the top, no results).
	a.ErrorResponse = func(req kmsg.Request, code int16, msg string) kmsg.Response {
		return updateFeaturesAnswer(req.GetVersion(), nil, code, msg)
	}
	return a
}()

// UpdateFeatures upgrade types (FeatureUpdate.UpgradeType).
const (
	upgradeTypeUnknown         int8 = 0
	upgradeTypeUpgrade         int8 = 1
	upgradeTypeSafeDowngrade   int8 = 2
	upgradeTypeUnsafeDowngrade int8 = 3
)

// pendingUpgrade is an UpdateFeatures answer waiting for the high watermark
// to pass offset.
type pendingUpgrade struct {
	ref      RequestRef
	version  int16
	features []string // for the per-feature results of versions 0-1
	offset   int64
}

func (d *Driver) handleUpdateFeatures(now time.Time, req *kmsg.UpdateFeaturesRequest, ref RequestRef) kmsg.Response {
	l := d.asLeader()
	if l == nil {
		return updateFeaturesAnswer(req.Version, nil, errNotController, d.notControllerMessage())
	}
	// Every update is checked before any is applied: Kafka applies the
	// kraft.version upgrade as it meets it in the loop, so a later bad
	// feature could fail a request whose upgrade already happened.
	target := int16(-1)
	features := make([]string, 0, len(req.FeatureUpdates))
	for _, u := range req.FeatureUpdates {
		features = append(features, u.Feature)
		code, msg, upgrade := d.checkFeatureUpdate(u, req.Version)
		if code != errNone {
			return updateFeaturesAnswer(req.Version, nil, code,
				"The update failed for all features since the following feature had an error: "+msg)
		}
		if upgrade {
			target = u.MaxVersionLevel
		}
	}
	if req.ValidateOnly {
		return updateFeaturesAnswer(req.Version, features, errNone, "")
	}
	if target > 0 {
		d.appendKRaftVersion(now, target)
		if d.fatal != nil {
			return nil
		}
	}
	l.upgrades = append(l.upgrades, pendingUpgrade{
		ref: ref, version: req.Version, features: features, offset: d.log.EndOffset().Offset - 1,
	})
	d.upgradesCommitted()
	return nil
}

// checkFeatureUpdate is FeatureControlManager.updateFeature's validation of
// one update; upgrade is set when kraft.version must move up.
func (d *Driver) checkFeatureUpdate(u kmsg.UpdateFeaturesRequestFeatureUpdate, reqVersion int16) (code int16, msg string, upgrade bool) {
	typ := u.UpgradeType
	if reqVersion == 0 {
		// Version 0 carries no type: Kafka reads the field's default,
		// UPGRADE, whatever AllowDowngrade says.
		typ = upgradeTypeUpgrade
	}
	level := u.MaxVersionLevel
	invalid := func(reason string) (int16, string, bool) {
		return errInvalidUpdateVersion, fmt.Sprintf("Invalid update version %d for feature %s. %s", level, u.Feature, reason), false
	}
	current := d.kraftVersion()
	switch {
	case typ < upgradeTypeUpgrade || typ > upgradeTypeUnsafeDowngrade:
		return invalid("The controller does not support the given upgrade type.")
	case level < 0:
		return invalid("A feature version cannot be less than 0.")
	case u.Feature != features.KRaftVersionName:
		// kraftd finalizes no other feature: refused as by a controller
		// that does not know it.
		return invalid(fmt.Sprintf("Local controller %d does not support this feature.", d.self()))
	case level > kraftVersionsSupported.Max:
		return invalid(fmt.Sprintf("Local controller %d only supports versions %d-%d", d.self(),
			kraftVersionsSupported.Min, kraftVersionsSupported.Max))
	case level < current && typ == upgradeTypeUpgrade:
		return invalid("Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.")
	case level > current && typ != upgradeTypeUpgrade:
		return invalid("Can't downgrade to a newer version.")
	case typ != upgradeTypeUpgrade && level != current:
		return invalid("Can't downgrade the version of this feature.")
	case level == current:
		return errNone, "", false
	}
	if msg := d.votersRefuse(level); msg != "" {
		return errInvalidUpdateVersion, msg, false
	}
	return errNone, "", true
}

// votersRefuse is Kafka's refusal of an upgrade to level that some voter's
// kraft.version range lacks, "" when every voter supports it.
func (d *Driver) votersRefuse(level int16) string {
	if vs := d.upgradeVoters(); !vs.supportsVersion(level) {
		d.lg.Info("not all voters support the kraft.version", zap.Int16("level", level), zap.Stringer("voters", vs))
		return fmt.Sprintf("Invalid upgrade of %s to %s because not all of the voters support it",
			features.KRaftVersionName, javaKRaftVersion(level))
	}
	return ""
}

// UpgradeRefused is raft's refusal of a kraft.version upgrade asked by the
// active controller (Kafka's InvalidUpdateVersionException): its answer is
// INVALID_UPDATE_VERSION with Message.
type UpgradeRefused struct{ Message string }

func (e *UpgradeRefused) Error() string { return e.Message }

// UpgradeKRaftVersion is the kraft.version upgrade of the active
// controller's UpdateFeatures (Kafka's RaftClient.upgradeKRaftVersion and
// LeaderState.maybeAppendUpgradedKRaftVersion), for a leader of epoch:
// nothing when level is already the latest kraft.version, a downgrade or a
// level some voter lacks refused (*UpgradeRefused), otherwise unless
// validateOnly the KRaftVersion and Voters control batch appended at once
// (as the UpdateFeatures this driver serves itself appends it), after
// whatever the accumulator held. last is the offset of the last record
// appended, -1 when nothing was. ErrNotLeader or ErrInvalidEpoch when this
// node does not lead epoch.
func (d *Driver) UpgradeKRaftVersion(now time.Time, epoch int32, level int16, validateOnly bool) (last int64, err error) {
	if d.fatal != nil {
		return -1, d.fatal
	}
	if Epoch(epoch) > d.epoch {
		return -1, fmt.Errorf("%w: upgrade for epoch %d, local epoch %d", ErrInvalidEpoch, epoch, d.epoch)
	}
	if d.asLeader() == nil || Epoch(epoch) < d.epoch {
		return -1, fmt.Errorf("%w: upgrade for epoch %d, local epoch %d is %s", ErrNotLeader, epoch, d.epoch, d.role())
	}
	current := d.kraftVersion()
	switch {
	case level == current:
		return -1, nil
	case level < current:
		return -1, &UpgradeRefused{fmt.Sprintf("Invalid upgrade of %s from version %s to %s because the new version is a downgrade",
			features.KRaftVersionName, javaKRaftVersion(current), javaKRaftVersion(level))}
	case level > kraftVersionsSupported.Max:
		return -1, &UpgradeRefused{fmt.Sprintf("Invalid upgrade of %s from version %s to %s",
			features.KRaftVersionName, javaKRaftVersion(current), javaKRaftVersion(level))}
	}
	if msg := d.votersRefuse(level); msg != "" {
		return -1, &UpgradeRefused{msg}
	}
	if validateOnly {
		return -1, nil
	}
	d.appendKRaftVersion(now, level)
	if d.fatal != nil {
		return -1, d.fatal
	}
	// The batch is flushed and replicated at the loop's next poll.
	return d.log.EndOffset().Offset - 1, nil
}

// upgradeVoters is the voter set an upgrade writes: the leader's volatile
// voters (the static set with what UpdateRaftVoter told it), with this
// node's own key, endpoints and range, which Kafka puts there when the
// epoch starts.
func (d *Driver) upgradeVoters() VoterSet {
	l := d.asLeader()
	vs, _ := d.kraft.latestVoters()
	if l.volatileVoters != nil {
		vs = *l.volatileVoters
	}
	if local, ok := vs.Update(d.localVoterNode()); ok {
		vs = local
	}
	return vs
}

// appendKRaftVersion appends KRaftVersion(level) and, when it differs from
// the set in force, the Voters record of the upgrade's voters, as one
// control batch after whatever the accumulator holds.
func (d *Driver) appendKRaftVersion(now time.Time, level int16) {
	l := d.asLeader()
	vs := d.upgradeVoters()
	d.drainAppends(now)
	if d.fatal != nil {
		return
	}
	recs := []protocol.Record{protocol.ControlRecord(0, protocol.ControlKRaftVersion,
		protocol.KRaftVersionRecord{KRaftVersion: level}.AppendTo(nil))}
	if persisted, _ := d.kraft.latestVoters(); !persisted.Equal(vs) {
		vr := vs.Record()
		recs = append(recs, protocol.ControlRecord(1, protocol.ControlKRaftVoters, vr.AppendTo(nil)))
	}
	off := d.appendControlBatch(now, recs)
	l.acc.reset(d.log.EndOffset().Offset, d.epoch)
	l.volatileVoters = nil
	d.lg.Info("appended kraft.version upgrade", zap.Int16("kraft.version", level), zap.Stringer("voters", vs), zap.Int64("offset", off))
}

// upgradesCommitted answers the UpdateFeatures requests whose offset the
// high watermark has passed.
func (d *Driver) upgradesCommitted() {
	l := d.asLeader()
	for len(l.upgrades) > 0 && l.highWatermark > l.upgrades[0].offset {
		u := l.upgrades[0]
		l.upgrades = l.upgrades[1:]
		d.tr.Reply(u.ref, updateFeaturesAnswer(u.version, u.features, errNone, ""))
	}
}

// failUpgrades answers every waiting UpdateFeatures with NOT_CONTROLLER:
// leadership was lost before its commit.
func (d *Driver) failUpgrades() {
	l := d.asLeader()
	for _, u := range l.upgrades {
		d.tr.Reply(u.ref, updateFeaturesAnswer(u.version, nil, errNotController, d.notControllerMessage()))
	}
	l.upgrades = nil
}

// notControllerMessage is Kafka's NotControllerException text.
func (d *Driver) notControllerMessage() string {
	if d.leaderID >= 0 && d.leaderID != d.self() {
		return fmt.Sprintf("The active controller appears to be node %d.", d.leaderID)
	}
	return "No controller appears to be active."
}

// updateFeaturesAnswer builds the response. Versions 0-1 list a result per
// feature on success, with Kafka's message "NONE" (Errors.NONE.message()),
// and none on error.
func updateFeaturesAnswer(version int16, features []string, code int16, msg string) *kmsg.UpdateFeaturesResponse {
	resp := kmsg.NewPtrUpdateFeaturesResponse()
	resp.SetVersion(version)
	resp.ErrorCode = code
	if msg != "" {
		resp.ErrorMessage = &msg
	}
	if version <= 1 && code == errNone {
		for _, f := range features {
			none := "NONE"
			r := kmsg.NewUpdateFeaturesResponseResult()
			r.Feature, r.ErrorMessage = f, &none
			resp.Results = append(resp.Results, r)
		}
	}
	return resp
}

// supportsVersion reports whether every voter's kraft.version range holds
// level (Kafka's VoterSet.supportsVersion).
func (s VoterSet) supportsVersion(level int16) bool {
	for _, v := range s.voters {
		if v.KRaftVersions.Min > level || v.KRaftVersions.Max < level {
			return false
		}
	}
	return true
}

// javaKRaftVersion is KRaftVersion's enum name.
func javaKRaftVersion(level int16) string { return fmt.Sprintf("KRAFT_VERSION_%d", level) }
