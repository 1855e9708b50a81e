// Package features is Kafka 4.4's table of feature levels: the
// metadata.version levels with their names ("3.9-IV0"), and for each other
// production feature (kraft.version, group.version, ...) its levels, the
// metadata.version that turns each on by default and the metadata.version
// each needs. Kafka keeps it in MetadataVersion and Feature
// (org.apache.kafka.server.common).
//
// It is a leaf (standard library only): format resolves --release-version
// and --feature with it (package storage), a controller registering with
// Kafka's active controller advertises its ranges (Supported), and a
// controller finalizing features or gating record versions on
// metadata.version reads it without the storage tooling. Its errors start
// with "features: ".
package features

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Feature names with a meaning of their own: metadata.version gates record
// versions and lives in a FeatureLevelRecord; kraft.version gates the
// quorum's dynamic voters (KIP-853) and lives in the KRaftVersion control
// record.
const (
	MetadataVersionName = "metadata.version"
	KRaftVersionName    = "kraft.version"
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

// LatestProduction is Kafka 4.4's latest production metadata.version
// (MetadataVersion.LATEST_PRODUCTION), what format writes without a release
// version.
var LatestProduction = MetadataVersion{"4.4-IV2", 33}

// LatestTesting is the highest metadata.version Kafka 4.4 knows
// (MetadataVersion.latestTesting), production or not.
func LatestTesting() MetadataVersion { return metadataVersions[len(metadataVersions)-1] }

// MinimumMetadataVersion is MetadataVersion.MINIMUM_VERSION (3.3-IV3).
func MinimumMetadataVersion() MetadataVersion { return metadataVersions[0] }

// metadataChanges are the metadata.version levels that changed what the
// metadata records hold (MetadataVersion's didMetadataChange, from the
// 4.4.0 jar): a downgrade across one of them may lose information.
var metadataChanges = map[int16]bool{7: true, 8: true, 11: true, 13: true, 14: true, 15: true, 17: true, 23: true, 30: true, 32: true, 33: true}

// MetadataChanged is MetadataVersion.checkIfMetadataChanged: whether a
// level above the lower of a and b, up to the higher, changed the metadata
// (false when they are equal).
func MetadataChanged(a, b int16) bool {
	lo, hi := min(a, b), max(a, b)
	for l := hi; l > lo; l-- {
		if metadataChanges[l] {
			return true
		}
	}
	return false
}

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
		return MetadataVersion{}, fmt.Errorf("features: Unknown metadata.version '%s'. Supported metadata.version are: %s", clip(name), strings.Join(names, ", "))
	}
	return *found, nil
}

// MetadataVersionByLevel is Kafka's MetadataVersion.fromFeatureLevel.
func MetadataVersionByLevel(level int16) (MetadataVersion, error) {
	for _, v := range metadataVersions {
		if v.Level == level {
			return v, nil
		}
	}
	first, last := metadataVersions[0], metadataVersions[len(metadataVersions)-1]
	return MetadataVersion{}, fmt.Errorf("features: No MetadataVersion with feature level %d. Valid feature levels are from %d to %d.", level, first.Level, last.Level)
}

// featureVersion is one level of a feature: the lowest metadata.version that
// turns it on by default, and the metadata.version it needs (0: none).
type featureVersion struct {
	bootstrapMV int16
	needsMV     int16
}

// features are Kafka 4.4's production features; levels[i] is level i.
// (kraft.version's default is not used by format, which derives it from
// the quorum configuration.)
var features = map[string][]featureVersion{
	"eligible.leader.replicas.version": {{7, 0}, {26, 23}},
	"group.version":                    {{7, 0}, {22, 0}},
	KRaftVersionName:                   {{7, 0}, {21, 0}},
	"share.version":                    {{7, 0}, {28, 0}, {31, 0}},
	"streams.version":                  {{7, 0}, {29, 0}},
	"transaction.version":              {{7, 0}, {24, 0}, {24, 0}},
}

// Names returns the production features other than metadata.version,
// sorted.
func Names() []string { return slices.Sorted(maps.Keys(features)) }

// Known reports whether name is a production feature other than
// metadata.version.
func Known(name string) bool {
	_, ok := features[name]
	return ok
}

// DefaultLevel is Kafka's Feature.defaultLevel: the highest level of a known
// feature whose bootstrap metadata.version is at or below mv (0 for an
// unknown feature).
func DefaultLevel(name string, mv MetadataVersion) int16 {
	var l int16
	for i, v := range features[name] {
		if v.bootstrapMV <= mv.Level {
			l = int16(i)
		}
	}
	return l
}

// CheckLevel is Kafka's Feature.fromFeatureLevel plus
// Feature.validateVersion for one feature: level must exist and its
// metadata.version dependency must be met by mv.
func CheckLevel(name string, level int16, mv MetadataVersion) error {
	levels := features[name]
	if level < 0 || int(level) >= len(levels) {
		return fmt.Errorf("features: No feature:%s with feature level %d", name, level)
	}
	if need := levels[level].needsMV; need > mv.Level {
		return fmt.Errorf("features: %s could not be set to %d because it depends on %s level %d", name, level, MetadataVersionName, need)
	}
	return nil
}

// Range is a feature's supported level range, as a Kafka controller
// advertises it in ControllerRegistration.
type Range struct {
	Name     string
	Min, Max int16
}

// Supported is what a Kafka 4.4 controller without
// unstable.feature.versions.enable registers
// (QuorumFeatures.defaultSupportedFeatureMap): metadata.version from 3.3-IV3
// to the latest production level, and each production feature from its
// first level (0) to its latest production one, sorted by name.
func Supported() []Range {
	out := []Range{{MetadataVersionName, metadataVersions[0].Level, LatestProduction.Level}}
	for _, name := range Names() {
		if last := int16(len(features[name]) - 1); last > 0 {
			out = append(out, Range{name, 0, last})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// clip keeps error messages bounded for hostile input.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// Production reports whether Kafka 4.4 lets mv be used without
// unstable.feature.versions.enable.
func (mv MetadataVersion) Production() bool { return mv.Level <= LatestProduction.Level }
