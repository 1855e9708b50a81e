package controller

import (
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/featurecontrol"
	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/raft"
)

// updateFeatures serves UpdateFeatures (api 57) as Kafka 4.4.0's active
// controller: controller/featurecontrol decides on the working image, a
// kraft.version upgrade goes to raft as it is met (Kafka's
// KRaftVersionAccessor), and the records (FeatureLevelRecords, the ELR
// safety ConfigRecords, a NoOpRecord after a kraft.version upgrade) are
// appended as one batch; the answer leaves once they commit. A refusal is
// the top-level INVALID_UPDATE_VERSION with Kafka's prefix; versions 0-1
// list a result per update only on success.
func (a *App) updateFeatures(now time.Time, st raft.Status, w node.Writer, r node.ControllerRequest, req *kmsg.UpdateFeaturesRequest) {
	updates := make([]featurecontrol.Update, len(req.FeatureUpdates))
	for i, u := range req.FeatureUpdates {
		typ := u.UpgradeType
		if req.Version == 0 {
			// No type at version 0: Kafka reads the field's default,
			// UPGRADE, and ignores AllowDowngrade.
			typ = featurecontrol.TypeUpgrade
		}
		updates[i] = featurecontrol.Update{Feature: u.Feature, Level: u.MaxVersionLevel, Type: typ}
	}
	kr := &kraftUpgrade{a: a, now: now, w: w}
	d, err := featurecontrol.Decide(updates, req.ValidateOnly, a.featureState(a.act.working.Image(), st), kr)
	if kr.last >= 0 && a.act != nil {
		// Raft appended the upgrade: what comes next lands after it.
		a.act.next, a.act.highest = kr.last+1, kr.last
	}
	if err != nil {
		a.appendFailed(err, "a kraft.version upgrade")
		a.notController(r)
		return
	}
	if a.act == nil {
		a.notController(r)
		return
	}
	resp := req.ResponseKind().(*kmsg.UpdateFeaturesResponse)
	if d.Err != nil {
		msg := featurecontrol.FailedPrefix + d.Err.Message
		resp.ErrorCode, resp.ErrorMessage = d.Err.Code, &msg
	} else if req.Version <= 1 {
		for _, u := range req.FeatureUpdates {
			none := "NONE" // Errors.NONE.message()
			res := kmsg.NewUpdateFeaturesResponseResult()
			res.Feature, res.ErrorMessage = u.Feature, &none
			resp.Results = append(resp.Results, res)
		}
	}
	a.apply(now, w, r, d.Records, func(err error) {
		if err != nil {
			a.notController(r)
			return
		}
		r.Respond(resp)
	})
}

// kraftUpgrade is featurecontrol.KRaft over the node's raft: last is the
// offset of the control batch raft appended, -1 when none.
type kraftUpgrade struct {
	a    *App
	now  time.Time
	w    node.Writer
	last int64
}

func (k *kraftUpgrade) UpgradeKRaftVersion(level int16, validateOnly bool) error {
	k.last = -1
	last, err := k.w.UpgradeKRaftVersion(k.now, k.a.act.epoch, level, validateOnly)
	var refused *raft.UpgradeRefused
	if errors.As(err, &refused) {
		return &featurecontrol.Error{Code: kerr.InvalidUpdateVersion.Code, Message: refused.Message}
	}
	k.last = last
	return err
}

// featureState is what featurecontrol reads of im and the raft status.
func (a *App) featureState(im *image.Image, st raft.Status) featurecontrol.State {
	mv, _ := im.MetadataVersion()
	s := featurecontrol.State{NodeID: a.o.NodeID, Local: a.o.Image.SupportedFeatures, MetadataVersion: int16(mv),
		Finalized: map[string]int16{}, KRaftVersion: st.KRaftVersion, QuorumNodeIDs: a.o.Active.QuorumVoterIDs,
		StaticMinISR: minISR(a.o.Active.Cluster), MinISRBrokers: map[int32]bool{}}
	if s.Local == nil {
		s.Local = features.Supported()
	}
	for name, level := range im.Features() {
		s.Finalized[name] = level
	}
	ranges := func(fs []image.FeatureRange) []features.Range {
		out := make([]features.Range, len(fs))
		for i, f := range fs {
			out[i] = features.Range{Name: f.Name, Min: f.Min, Max: f.Max}
		}
		return out
	}
	for b := range im.Brokers() {
		s.Brokers = append(s.Brokers, featurecontrol.Node{ID: b.ID, Features: ranges(b.Features)})
	}
	for c := range im.Controllers() {
		s.Controllers = append(s.Controllers, featurecontrol.Node{ID: c.ID, Features: ranges(c.Features)})
	}
	byID := func(x, y featurecontrol.Node) int { return int(x.ID) - int(y.ID) }
	slices.SortFunc(s.Brokers, byID)
	slices.SortFunc(s.Controllers, byID)
	for c := range im.AllConfigs() {
		if c.ResourceType != resourceBroker {
			continue
		}
		if c.ResourceName == "" {
			s.ClusterMinISR = s.ClusterMinISR || c.Name == minISRKey
			continue
		}
		id, err := strconv.ParseInt(c.ResourceName, 10, 32)
		if err != nil {
			continue
		}
		if n := len(s.BrokersWithConfigs); n == 0 || s.BrokersWithConfigs[n-1] != int32(id) {
			s.BrokersWithConfigs = append(s.BrokersWithConfigs, int32(id))
		}
		if c.Name == minISRKey {
			s.MinISRBrokers[int32(id)] = true
		}
	}
	slices.Sort(s.BrokersWithConfigs)
	s.BrokersWithConfigs = slices.Compact(s.BrokersWithConfigs)
	return s
}

const (
	resourceBroker int8 = 4
	minISRKey           = "min.insync.replicas"
)
