// Package featurecontrol decides UpdateFeatures (api 57) as Kafka 4.4.0's
// active controller does (QuorumController.updateFeatures,
// ConfigurationControlManager.updateFeatures and FeatureControlManager):
// which finalized feature levels may change, the records that change them,
// and the error and message when one may not.
//
// It is pure: the cluster's state comes in as a State, raft's kraft.version
// upgrade as a KRaft the caller provides, and the answer is records to
// append plus an error. Where Kafka's answer depends on the iteration order
// of its collections (which of several bad updates, brokers or controllers
// is reported), the package reproduces that order. See
// docs/design/controller.md, "UpdateFeatures".
package featurecontrol

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kraftd/kraftd/controller/cluster"
	"github.com/kraftd/kraftd/controller/internal/jvmorder"
	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/protocol/metadata"
)

// Upgrade types (FeatureUpdate.UpgradeType); any other code is unknown.
const (
	TypeUpgrade         int8 = 1
	TypeSafeDowngrade   int8 = 2
	TypeUnsafeDowngrade int8 = 3
)

// Update is one feature update of a request: the level asked for and the
// upgrade type code (a version 0 request carries none: the caller passes
// UPGRADE, the field's default, as Kafka's controller ignores its
// AllowDowngrade).
type Update struct {
	Feature string
	Level   int16
	Type    int8
}

// Node is a registered broker or controller and the feature ranges its
// registration lists.
type Node struct {
	ID       int32
	Features []features.Range
}

// State is what the decision reads of the cluster.
type State struct {
	// NodeID is this controller's id; Local its supported ranges
	// (QuorumFeatures.localSupportedFeature).
	NodeID int32
	Local  []features.Range
	// MetadataVersion is the finalized metadata.version (a claimed
	// controller always has one); Finalized the other finalized features
	// (level > 0) but kraft.version, which is KRaftVersion.
	MetadataVersion int16
	Finalized       map[string]int16
	KRaftVersion    int16
	// Brokers and Controllers are the registrations of the working image,
	// in ascending id order (the package puts them in Kafka's order).
	Brokers     []Node
	Controllers []Node
	// QuorumNodeIDs are the static voters (controller.quorum.voters, in
	// the configured order); none with a dynamic quorum. Each must have
	// registered before a feature changes.
	QuorumNodeIDs []int32
	// StaticMinISR is the node's min.insync.replicas property, the value
	// of the cluster-level one written when ELR is turned on without one;
	// ClusterMinISR whether the cluster has one. BrokersWithConfigs are the
	// brokers with any broker-level config, ascending, and MinISRBrokers
	// those among them that set min.insync.replicas.
	StaticMinISR       string
	ClusterMinISR      bool
	BrokersWithConfigs []int32
	MinISRBrokers      map[int32]bool
}

// KRaft is raft's side of a kraft.version update (Kafka's
// KRaftVersionAccessor.upgradeKRaftVersion): it checks the upgrade to level
// and, unless validateOnly, appends it at once. It returns nil when the
// level is already the current (or pending) one; an *Error is an answer
// (Kafka's ApiException); any other error leaves the operation unanswered.
type KRaft interface {
	UpgradeKRaftVersion(level int16, validateOnly bool) error
}

// Error is a refusal: an error code and Kafka's message.
type Error struct {
	Code    int16
	Message string
}

func (e *Error) Error() string { return e.Message }

// FailedPrefix opens the top-level message of a refused request.
const FailedPrefix = "The update failed for all features since the following feature had an error: "

// Decision is the outcome: the records to append as one batch (none when
// validating only or refused), and the refusal.
type Decision struct {
	Records []cluster.Record
	Err     *Error
}

// Decide decides an UpdateFeatures request. updates are the request's in
// its order; Kafka puts them in a HashMap (a feature named twice keeps its
// first place and its last level and type) and checks them in that map's
// order, stopping at the first refusal. A kraft.version upgrade reaches kr
// as it is met: an upgrade already appended stays when a later update is
// refused, as in Kafka. A non-nil error is kr's own failure.
func Decide(updates []Update, validateOnly bool, s State, kr KRaft) (Decision, error) {
	order := jvmorder.NewHashMap[string]()
	last := map[string]Update{}
	for _, u := range updates {
		order.Put(u.Feature, jvmorder.StringHash(u.Feature))
		last[u.Feature] = u
	}
	// The levels as they would be (Kafka's proposedUpdatedVersions), which
	// a feature's dependencies are checked against.
	proposed := map[string]int16{features.MetadataVersionName: s.MetadataVersion}
	for name, level := range s.Finalized {
		proposed[name] = level
	}
	for name, u := range last {
		proposed[name] = u.Level
	}
	var recs []cluster.Record
	for _, name := range order.Keys() {
		u := last[name]
		out, e, err := decideOne(u, validateOnly, s, proposed, kr)
		if err != nil {
			return Decision{}, err
		}
		if e != nil {
			return Decision{Err: e}, nil
		}
		recs = append(recs, out...)
	}
	if validateOnly {
		return Decision{}, nil
	}
	if elr := last[elrFeature]; elr.Feature != "" && elr.Level > 0 {
		recs = append(elrSafetyRecords(s), recs...)
	}
	return Decision{Records: recs}, nil
}

const elrFeature = "eligible.leader.replicas.version"

// decideOne is FeatureControlManager.updateFeature for one update.
func decideOne(u Update, validateOnly bool, s State, proposed map[string]int16, kr KRaft) ([]cluster.Record, *Error, error) {
	if u.Type < TypeUpgrade || u.Type > TypeUnsafeDowngrade {
		return nil, invalidUpdate(u, "The controller does not support the given upgrade type."), nil
	}
	var current int16
	switch u.Feature {
	case features.MetadataVersionName:
		current = s.MetadataVersion
	case features.KRaftVersionName:
		current = s.KRaftVersion
	default:
		current = s.Finalized[u.Feature]
	}
	if u.Level < 0 {
		return nil, invalidUpdate(u, "A feature version cannot be less than 0."), nil
	}
	if reason := reasonNotSupported(u.Feature, u.Level, s); reason != "" {
		return nil, invalidUpdate(u, reason), nil
	}
	switch {
	case u.Level < current && u.Type == TypeUpgrade:
		return nil, invalidUpdate(u, "Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."), nil
	case u.Level > current && u.Type != TypeUpgrade:
		return nil, invalidUpdate(u, "Can't downgrade to a newer version."), nil
	}
	switch u.Feature {
	case features.MetadataVersionName:
		rec, e := metadataVersionUpdate(u, s.MetadataVersion)
		return rec, e, nil
	case features.KRaftVersionName:
		if u.Type != TypeUpgrade {
			if u.Level != current {
				return nil, invalidUpdate(u, "Can't downgrade the version of this feature."), nil
			}
			return nil, nil, nil
		}
		err := kr.UpgradeKRaftVersion(u.Level, validateOnly)
		var e *Error
		switch {
		case errors.As(err, &e):
			return nil, e, nil
		case err != nil:
			return nil, nil, err
		}
		// A record to wait on: the answer leaves once it commits.
		return []cluster.Record{{Record: &metadata.NoOpRecord{}}}, nil, nil
	}
	if err := checkDependencies(u, proposed); err != "" {
		return nil, invalidUpdate(u, err), nil
	}
	return []cluster.Record{{Record: &metadata.FeatureLevelRecord{Name: u.Feature, FeatureLevel: u.Level}}}, nil, nil
}

func invalidUpdate(u Update, reason string) *Error {
	return &Error{Code: kerr.InvalidUpdateVersion.Code,
		Message: fmt.Sprintf("Invalid update version %d for feature %s. %s", u.Level, u.Feature, reason)}
}

// reasonNotSupported is FeatureControlManager.reasonNotSupported: the
// level must be in this controller's range, every registered broker's
// (in the order of Kafka's TimelineHashMap of registrations), and, from
// metadata.version 3.7-IV0, every other registered controller's, and every
// static voter must have registered.
func reasonNotSupported(feature string, level int16, s State) string {
	if r := notIn(level, "Local controller "+strconv.Itoa(int(s.NodeID)), rangeOf(s.Local, feature)); r != "" {
		return r
	}
	for _, b := range inTimelineOrder(s.Brokers) {
		if r := notIn(level, "Broker "+strconv.Itoa(int(b.ID)), rangeOf(b.Features, feature)); r != "" {
			return r
		}
	}
	if metadata.Level(s.MetadataVersion).Has(metadata.GateControllerRegistration) {
		found := map[int32]bool{s.NodeID: true}
		for _, c := range inTimelineOrder(s.Controllers) {
			if c.ID == s.NodeID {
				continue
			}
			if r := notIn(level, "Controller "+strconv.Itoa(int(c.ID)), rangeOf(c.Features, feature)); r != "" {
				return r
			}
			found[c.ID] = true
		}
		for _, id := range s.QuorumNodeIDs {
			if !found[id] {
				return fmt.Sprintf("controller %d has not registered, and may not support this feature", id)
			}
		}
	}
	return ""
}

// inTimelineOrder puts registrations in the order Kafka iterates its
// TimelineHashMap of them.
func inTimelineOrder(nodes []Node) []Node {
	ids := make([]int32, len(nodes))
	byID := make(map[int32]Node, len(nodes))
	for i, n := range nodes {
		ids[i] = n.ID
		byID[n.ID] = n
	}
	out := make([]Node, len(nodes))
	for i, id := range jvmorder.TimelineIntOrder(ids) {
		out[i] = byID[id]
	}
	return out
}

// rangeOf is a node's range for feature; a feature it does not list is
// supported at level 0 only (QuorumFeatures.DISABLED).
func rangeOf(rs []features.Range, feature string) features.Range {
	for _, r := range rs {
		if r.Name == feature {
			return r
		}
	}
	return features.Range{Name: feature}
}

// notIn is QuorumFeatures.reasonNotSupported, with VersionRange's text.
func notIn(level int16, what string, r features.Range) string {
	if level >= r.Min && level <= r.Max {
		return ""
	}
	if r.Max == 0 {
		return what + " does not support this feature."
	}
	text := fmt.Sprintf("%d-%d", r.Min, r.Max)
	switch {
	case r.Min == r.Max:
		text = strconv.Itoa(int(r.Min))
	case r.Max == 32767:
		text = fmt.Sprintf("%d+", r.Min)
	}
	return what + " only supports versions " + text
}

// metadataVersionUpdate is FeatureControlManager.updateMetadataVersion:
// an upgrade (or the same level) is written; a downgrade only when no level
// it crosses changed the metadata, whatever the downgrade type.
func metadataVersionUpdate(u Update, current int16) ([]cluster.Record, *Error) {
	if _, err := features.MetadataVersionByLevel(u.Level); err != nil {
		return nil, &Error{Code: kerr.InvalidUpdateVersion.Code, Message: fmt.Sprintf(
			"Invalid metadata.version %d. Valid versions are from %d to %d.", u.Level,
			features.MinimumMetadataVersion().Level, features.LatestTesting().Level)}
	}
	if u.Level < current && features.MetadataChanged(current, u.Level) {
		why := "Refusing to perform the requested downgrade because it might delete metadata information."
		if u.Type == TypeUnsafeDowngrade {
			why = "Unsafe metadata downgrade is not supported in this version."
		}
		return nil, &Error{Code: kerr.InvalidUpdateVersion.Code, Message: fmt.Sprintf(
			"Unsupported metadata.version downgrade from %d to %d. %s", current, u.Level, why)}
	}
	return []cluster.Record{{Record: &metadata.FeatureLevelRecord{Name: features.MetadataVersionName, FeatureLevel: u.Level}}}, nil
}

// checkDependencies is Feature.featureFromName, fromFeatureLevel and
// validateVersion against the proposed levels: the feature must be known,
// and a level of 1 or more needs a metadata.version of at least 3.3-IV3 and
// whatever metadata.version the level depends on.
func checkDependencies(u Update, proposed map[string]int16) string {
	if !features.Known(u.Feature) {
		return "Feature " + u.Feature + " not found."
	}
	mv, ok := proposed[features.MetadataVersionName]
	minimum := features.MinimumMetadataVersion()
	if u.Level >= 1 && (!ok || mv < minimum.Level) {
		return fmt.Sprintf("%s could not be set to %d because it depends on metadata.version=%d (%s)",
			u.Feature, u.Level, minimum.Level, minimum.Name)
	}
	if err := features.CheckLevel(u.Feature, u.Level, features.MetadataVersion{Level: mv}); err != nil {
		return err.Error()[len("features: "):]
	}
	return ""
}

// elrSafetyRecords are ConfigurationControlManager.maybeGenerateElrSafetyRecords,
// written before the feature records when an update sets
// eligible.leader.replicas.version above 0: a cluster-level
// min.insync.replicas (the static one) when there is none, and the removal
// of every broker-level one, in the order of Kafka's TimelineHashSet of the
// brokers with configs.
func elrSafetyRecords(s State) []cluster.Record {
	var out []cluster.Record
	if !s.ClusterMinISR {
		v := s.StaticMinISR
		out = append(out, cluster.Record{Record: &metadata.ConfigRecord{ResourceType: brokerResource,
			Name: minISRConfig, Value: &v}})
	}
	for _, id := range jvmorder.TimelineIntOrder(s.BrokersWithConfigs) {
		if s.MinISRBrokers[id] {
			out = append(out, cluster.Record{Record: &metadata.ConfigRecord{ResourceType: brokerResource,
				ResourceName: strconv.Itoa(int(id)), Name: minISRConfig}})
		}
	}
	return out
}

const (
	brokerResource int8 = 4
	minISRConfig        = "min.insync.replicas"
)
