package storage

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/protocol/metadata"
)

// featureSettings is what format resolved from --release-version, --feature
// and the quorum flags: the metadata.version and every feature's level.
type featureSettings struct {
	mv     features.MetadataVersion
	levels map[string]int16 // every production feature, kraft.version included
}

// resolveFeatures applies Kafka 4.4's Formatter rules, in its order and with
// its messages: metadata.version from --feature metadata.version=N or the
// release version (not both), then the requested features (known names
// only), kraft.version from the quorum kind, defaults for the rest, and each
// level checked against the levels and dependencies Kafka knows.
func resolveFeatures(release *features.MetadataVersion, requested map[string]int16, dynamic bool) (featureSettings, error) {
	mv, err := effectiveMetadataVersion(release, requested)
	if err != nil {
		return featureSettings{}, err
	}
	s := featureSettings{mv: mv, levels: map[string]int16{}}
	for _, name := range slices.Sorted(maps.Keys(requested)) {
		if name == features.MetadataVersionName {
			continue
		}
		if !features.Known(name) {
			return featureSettings{}, fmt.Errorf("storage: Unsupported feature: %s. Supported features are: %s", clip(name), strings.Join(features.Names(), ", "))
		}
		s.levels[name] = requested[name]
	}
	kv, err := kraftVersionLevel(requested, dynamic)
	if err != nil {
		return featureSettings{}, err
	}
	s.levels[features.KRaftVersionName] = kv
	for _, name := range features.Names() {
		if _, ok := s.levels[name]; !ok {
			s.levels[name] = features.DefaultLevel(name, mv)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.levels)) {
		if err := features.CheckLevel(name, s.levels[name], mv); err != nil {
			return featureSettings{}, err
		}
	}
	return s, nil
}

// effectiveMetadataVersion is Kafka's calculateEffectiveReleaseVersion.
func effectiveMetadataVersion(release *features.MetadataVersion, requested map[string]int16) (features.MetadataVersion, error) {
	mv := features.LatestProduction
	if level, ok := requested[features.MetadataVersionName]; ok {
		if release != nil {
			return features.MetadataVersion{}, fmt.Errorf("storage: Use --release-version instead of --feature %s=X to avoid ambiguity.", features.MetadataVersionName)
		}
		v, err := features.MetadataVersionByLevel(level)
		if err != nil {
			return features.MetadataVersion{}, err
		}
		mv = v
	} else if release != nil {
		mv = *release
	}
	if !mv.Production() {
		return features.MetadataVersion{}, fmt.Errorf("storage: %s %s is not yet stable.", features.MetadataVersionName, mv.Name)
	}
	return mv, nil
}

// kraftVersionLevel is Kafka's effectiveKRaftFeatureLevel: 1 for a dynamic
// quorum (no controller.quorum.voters), 0 for a static one; an explicit
// --feature kraft.version must agree.
func kraftVersionLevel(requested map[string]int16, dynamic bool) (int16, error) {
	level, ok := requested[features.KRaftVersionName]
	switch {
	case !ok && dynamic:
		return 1, nil
	case !ok:
		return 0, nil
	case level == 0 && dynamic:
		return 0, fmt.Errorf("storage: Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of the flags --standalone, --initial-controllers, or --no-initial-controllers is used. For dynamic controllers support, try removing the --feature flag for kraft.version.")
	case level != 0 && !dynamic:
		return 0, fmt.Errorf("storage: Cannot set kraft.version to %d unless controller.quorum.voters is empty and one of the flags --standalone, --initial-controllers, or --no-initial-controllers is used. For dynamic controllers support, try using one of --standalone, --initial-controllers, or --no-initial-controllers and removing controller.quorum.voters.", level)
	}
	return level, nil
}

// records returns the FeatureLevelRecords Kafka's BootstrapMetadata.fromVersions
// writes: metadata.version first, then the other features by name with a
// level above 0 (kraft.version lives in the KRaftVersion control record).
func (s featureSettings) records() [][]byte {
	recs := [][]byte{featureLevelRecord(features.MetadataVersionName, s.mv.Level)}
	for _, n := range slices.Sorted(maps.Keys(s.levels)) {
		if n != features.KRaftVersionName && s.levels[n] > 0 {
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
	item(features.MetadataVersionName, s.mv.Level)
	for _, n := range slices.Sorted(maps.Keys(s.levels)) {
		if n != features.KRaftVersionName && s.levels[n] > 0 {
			b.WriteString(", ")
			item(n, s.levels[n])
		}
	}
	fmt.Fprintf(&b, "], metadataVersionLevel=%d, source=format command)", s.mv.Level)
	return b.String()
}

// featureLevelRecord encodes FeatureLevelRecord v0, its only version, as a
// metadata log record value. name is a feature this package knows, so the
// encoding cannot fail.
func featureLevelRecord(name string, level int16) []byte {
	b, err := metadata.Append(nil, &metadata.FeatureLevelRecord{Name: name, FeatureLevel: level}, 0)
	if err != nil {
		panic(fmt.Sprintf("storage: FeatureLevelRecord %s=%d: %v", name, level, err))
	}
	return b
}
