package clusterid

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kraftd/kraftd/protocol/metadata"
)

// MetadataVersion is a metadata.version feature level with Kafka's name for
// it ("3.9-IV0").
type MetadataVersion struct {
	Name  string
	Level int16
}

// metadataVersions lists Kafka 4.4.0's MetadataVersion enum from the lowest
// level a KRaft cluster bootstraps from (3.3-IV3); the last entry, 4.5-IV0,
// is not production-ready.
var metadataVersions = []MetadataVersion{
	{"3.3-IV3", 7}, {"3.4-IV0", 8}, {"3.5-IV0", 9}, {"3.5-IV1", 10}, {"3.5-IV2", 11},
	{"3.6-IV0", 12}, {"3.6-IV1", 13}, {"3.6-IV2", 14}, {"3.7-IV0", 15}, {"3.7-IV1", 16},
	{"3.7-IV2", 17}, {"3.7-IV3", 18}, {"3.7-IV4", 19}, {"3.8-IV0", 20}, {"3.9-IV0", 21},
	{"4.0-IV0", 22}, {"4.0-IV1", 23}, {"4.0-IV2", 24}, {"4.0-IV3", 25}, {"4.1-IV0", 26},
	{"4.1-IV1", 27}, {"4.2-IV0", 28}, {"4.2-IV1", 29}, {"4.3-IV0", 30}, {"4.4-IV0", 31},
	{"4.4-IV1", 32}, {"4.4-IV2", 33}, {"4.5-IV0", 34},
}

// DefaultMetadataVersion is what format writes without a release version:
// Kafka 4.4's latest production level.
var DefaultMetadataVersion = MetadataVersion{"4.4-IV2", 33}

// production reports whether Kafka 4.4 lets format use mv without
// unstable.feature.versions.enable.
func (mv MetadataVersion) production() bool { return mv.Level <= DefaultMetadataVersion.Level }

// LookupMetadataVersion resolves a --release-version argument as Kafka's
// MetadataVersion.fromVersionString does: a full name ("3.9-IV0") or a
// release ("3.9", meaning its last level).
func LookupMetadataVersion(name string) (MetadataVersion, error) {
	var found *MetadataVersion
	for i := range metadataVersions {
		v := &metadataVersions[i]
		if v.Name == name || strings.HasPrefix(v.Name, name+"-IV") {
			found = v
		}
	}
	if found == nil {
		names := make([]string, len(metadataVersions))
		for i, v := range metadataVersions {
			names[i] = v.Name
		}
		return MetadataVersion{}, fmt.Errorf("clusterid: Unknown metadata.version '%s'. Supported metadata.version are: %s", clip(name), strings.Join(names, ", "))
	}
	return *found, nil
}

// metadataVersionByLevel is Kafka's MetadataVersion.fromFeatureLevel.
func metadataVersionByLevel(level int16) (MetadataVersion, error) {
	for _, v := range metadataVersions {
		if v.Level == level {
			return v, nil
		}
	}
	first, last := metadataVersions[0], metadataVersions[len(metadataVersions)-1]
	return MetadataVersion{}, fmt.Errorf("clusterid: No MetadataVersion with feature level %d. Valid feature levels are from %d to %d.", level, first.Level, last.Level)
}

// Feature names with a meaning of their own in format.
const (
	featureMetadataVersion = "metadata.version"
	featureKRaftVersion    = "kraft.version"
)

// featureVersion is one level of a feature: the lowest metadata.version that
// turns it on by default, and the metadata.version it needs (0: none).
type featureVersion struct {
	bootstrapMV int16
	needsMV     int16
}

// features are Kafka 4.4's production features; levels[i] is level i.
// (kraft.version's default is not used: format derives it from the quorum
// configuration.)
var features = map[string][]featureVersion{
	"eligible.leader.replicas.version": {{7, 0}, {26, 23}},
	"group.version":                    {{7, 0}, {22, 0}},
	featureKRaftVersion:                {{7, 0}, {21, 0}},
	"share.version":                    {{7, 0}, {28, 0}, {31, 0}},
	"streams.version":                  {{7, 0}, {29, 0}},
	"transaction.version":              {{7, 0}, {24, 0}, {24, 0}},
}

// defaultLevel is Kafka's Feature.defaultLevel: the highest level whose
// bootstrap metadata.version is at or below mv.
func defaultLevel(levels []featureVersion, mv MetadataVersion) int16 {
	var l int16
	for i, v := range levels {
		if v.bootstrapMV <= mv.Level {
			l = int16(i)
		}
	}
	return l
}

// featureSettings is what format resolved from --release-version, --feature
// and the quorum flags: the metadata.version and every feature's level.
type featureSettings struct {
	mv     MetadataVersion
	levels map[string]int16 // every production feature, kraft.version included
}

// resolveFeatures applies Kafka 4.4's Formatter rules, in its order and with
// its messages: metadata.version from --feature metadata.version=N or the
// release version (not both), then the requested features (known names
// only), kraft.version from the quorum kind, defaults for the rest, and each
// level checked against the levels and dependencies Kafka knows.
func resolveFeatures(release *MetadataVersion, requested map[string]int16, dynamic bool) (featureSettings, error) {
	mv, err := effectiveMetadataVersion(release, requested)
	if err != nil {
		return featureSettings{}, err
	}
	s := featureSettings{mv: mv, levels: map[string]int16{}}
	for _, name := range sortedNames(requested) {
		if name == featureMetadataVersion {
			continue
		}
		if _, ok := features[name]; !ok {
			return featureSettings{}, fmt.Errorf("clusterid: Unsupported feature: %s. Supported features are: %s", clip(name), strings.Join(sortedNames(features), ", "))
		}
		s.levels[name] = requested[name]
	}
	kv, err := kraftVersionLevel(requested, dynamic)
	if err != nil {
		return featureSettings{}, err
	}
	s.levels[featureKRaftVersion] = kv
	for name, levels := range features {
		if _, ok := s.levels[name]; !ok {
			s.levels[name] = defaultLevel(levels, mv)
		}
	}
	for _, name := range sortedNames(s.levels) {
		if err := checkFeatureLevel(name, s.levels[name], mv); err != nil {
			return featureSettings{}, err
		}
	}
	return s, nil
}

// effectiveMetadataVersion is Kafka's calculateEffectiveReleaseVersion.
func effectiveMetadataVersion(release *MetadataVersion, requested map[string]int16) (MetadataVersion, error) {
	mv := DefaultMetadataVersion
	if level, ok := requested[featureMetadataVersion]; ok {
		if release != nil {
			return MetadataVersion{}, fmt.Errorf("clusterid: Use --release-version instead of --feature %s=X to avoid ambiguity.", featureMetadataVersion)
		}
		v, err := metadataVersionByLevel(level)
		if err != nil {
			return MetadataVersion{}, err
		}
		mv = v
	} else if release != nil {
		mv = *release
	}
	if !mv.production() {
		return MetadataVersion{}, fmt.Errorf("clusterid: %s %s is not yet stable.", featureMetadataVersion, mv.Name)
	}
	return mv, nil
}

// kraftVersionLevel is Kafka's effectiveKRaftFeatureLevel: 1 for a dynamic
// quorum (no controller.quorum.voters), 0 for a static one; an explicit
// --feature kraft.version must agree.
func kraftVersionLevel(requested map[string]int16, dynamic bool) (int16, error) {
	level, ok := requested[featureKRaftVersion]
	switch {
	case !ok && dynamic:
		return 1, nil
	case !ok:
		return 0, nil
	case level == 0 && dynamic:
		return 0, fmt.Errorf("clusterid: Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of the flags --standalone, --initial-controllers, or --no-initial-controllers is used. For dynamic controllers support, try removing the --feature flag for kraft.version.")
	case level != 0 && !dynamic:
		return 0, fmt.Errorf("clusterid: Cannot set kraft.version to %d unless controller.quorum.voters is empty and one of the flags --standalone, --initial-controllers, or --no-initial-controllers is used. For dynamic controllers support, try using one of --standalone, --initial-controllers, or --no-initial-controllers and removing controller.quorum.voters.", level)
	}
	return level, nil
}

// checkFeatureLevel is Kafka's Feature.fromFeatureLevel plus
// Feature.validateVersion for one feature.
func checkFeatureLevel(name string, level int16, mv MetadataVersion) error {
	levels := features[name]
	if level < 0 || int(level) >= len(levels) {
		return fmt.Errorf("clusterid: No feature:%s with feature level %d", name, level)
	}
	if need := levels[level].needsMV; need > mv.Level {
		return fmt.Errorf("clusterid: %s could not be set to %d because it depends on %s level %d", name, level, featureMetadataVersion, need)
	}
	return nil
}

// records returns the FeatureLevelRecords Kafka's BootstrapMetadata.fromVersions
// writes: metadata.version first, then the other features by name with a
// level above 0 (kraft.version lives in the KRaftVersion control record).
func (s featureSettings) records() [][]byte {
	recs := [][]byte{featureLevelRecord(featureMetadataVersion, s.mv.Level)}
	for _, n := range sortedNames(s.levels) {
		if n != featureKRaftVersion && s.levels[n] > 0 {
			recs = append(recs, featureLevelRecord(n, s.levels[n]))
		}
	}
	return recs
}

// describe is the line Kafka's format prints before formatting:
// BootstrapMetadata.toString.
func (s featureSettings) describe() string {
	var b strings.Builder
	b.WriteString("Bootstrap metadata: BootstrapMetadata(records=[")
	item := func(name string, level int16) {
		fmt.Fprintf(&b, "ApiMessageAndVersion(FeatureLevelRecord(name='%s', featureLevel=%d) at version 0)", name, level)
	}
	item(featureMetadataVersion, s.mv.Level)
	for _, n := range sortedNames(s.levels) {
		if n != featureKRaftVersion && s.levels[n] > 0 {
			b.WriteString(", ")
			item(n, s.levels[n])
		}
	}
	fmt.Fprintf(&b, "], metadataVersionLevel=%d, source=format command)", s.mv.Level)
	return b.String()
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// featureLevelRecord encodes FeatureLevelRecord v0, its only version, as a
// metadata log record value. name is a feature this package knows, so the
// encoding cannot fail.
func featureLevelRecord(name string, level int16) []byte {
	b, err := metadata.Append(nil, &metadata.FeatureLevelRecord{Name: name, FeatureLevel: level}, 0)
	if err != nil {
		panic(fmt.Sprintf("clusterid: FeatureLevelRecord %s=%d: %v", name, level, err))
	}
	return b
}

// FeatureRange is a feature's supported level range, as a Kafka controller
// advertises it in ControllerRegistration.
type FeatureRange struct {
	Name     string
	Min, Max int16
}

// SupportedFeatures is what a Kafka 4.4 controller without
// unstable.feature.versions.enable registers (QuorumFeatures.defaultSupportedFeatureMap):
// metadata.version from 3.3-IV3 to the latest production level, and each
// production feature from its first level (0) to its latest production one,
// sorted by name.
func SupportedFeatures() []FeatureRange {
	out := []FeatureRange{{featureMetadataVersion, metadataVersions[0].Level, DefaultMetadataVersion.Level}}
	for _, name := range sortedNames(features) {
		if last := int16(len(features[name]) - 1); last > 0 {
			out = append(out, FeatureRange{name, 0, last})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
