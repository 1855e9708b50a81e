package storage

import (
	"strings"
	"testing"

	"github.com/kraftd/kraftd/features"
)

// The messages are Kafka 4.4's (test/interop/format_dynamic_test.go compares
// them with its storage tool's).
func TestResolveFeatures(t *testing.T) {
	v39 := features.MetadataVersion{Name: "3.9-IV0", Level: 21}
	for _, tc := range []struct {
		release *features.MetadataVersion
		req     map[string]int16
		dynamic bool
		want    string
	}{
		{nil, map[string]int16{"foo.version": 1}, false, "Unsupported feature: foo.version. Supported features are: eligible.leader.replicas.version, group.version, kraft.version"},
		{&v39, map[string]int16{"metadata.version": 21}, false, "Use --release-version instead"},
		{nil, map[string]int16{"metadata.version": 34}, false, "metadata.version 4.5-IV0 is not yet stable."},
		{nil, map[string]int16{"metadata.version": 3}, false, "No MetadataVersion with feature level 3. Valid feature levels are from 7 to 34."},
		{nil, map[string]int16{"kraft.version": 0}, true, "Cannot set kraft.version to 0 if"},
		{nil, map[string]int16{"kraft.version": 1}, false, "Cannot set kraft.version to 1 unless"},
		{nil, map[string]int16{"group.version": 2}, false, "No feature:group.version with feature level 2"},
		{&v39, map[string]int16{"eligible.leader.replicas.version": 1}, false, "depends on metadata.version level 23"},
	} {
		if _, err := resolveFeatures(tc.release, tc.req, tc.dynamic); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v dynamic=%v: %v, want %q", tc.release, tc.req, tc.dynamic, err, tc.want)
		}
	}
	s, err := resolveFeatures(nil, nil, true)
	if err != nil || s.mv != features.LatestProduction || s.levels["kraft.version"] != 1 || s.levels["share.version"] != 2 || len(s.records()) != 6 {
		t.Fatalf("defaults: %+v %v", s, err)
	}
	// A release implies the features it turns on, never kraft.version.
	s, err = resolveFeatures(&features.MetadataVersion{Name: "4.0-IV3", Level: 25}, nil, false)
	if err != nil || s.levels["kraft.version"] != 0 || s.levels["transaction.version"] != 2 || s.levels["group.version"] != 1 || s.levels["eligible.leader.replicas.version"] != 0 {
		t.Fatalf("4.0-IV3: %+v %v", s, err)
	}
}
