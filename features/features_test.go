package features

import (
	"fmt"
	"strings"
	"testing"
)

// A Kafka 4.4 controller registers these ranges (the levels of the
// production features and metadata.version 7-33).
func TestSupported(t *testing.T) {
	got := fmt.Sprint(Supported())
	want := "[{eligible.leader.replicas.version 0 1} {group.version 0 1} {kraft.version 0 1} {metadata.version 7 33} {share.version 0 2} {streams.version 0 1} {transaction.version 0 2}]"
	if got != want {
		t.Errorf("Supported() = %s, want %s", got, want)
	}
}

// TestLookupMetadataVersion: a full name or a release (its last level),
// and Kafka's message listing every name otherwise.
func TestLookupMetadataVersion(t *testing.T) {
	for name, want := range map[string]MetadataVersion{
		"3.3-IV3": {"3.3-IV3", 7}, "3.9": {"3.9-IV0", 21}, "4.0": {"4.0-IV3", 25}, "4.4": {"4.4-IV2", 33}, "4.5-IV0": {"4.5-IV0", 34},
	} {
		if got, err := LookupMetadataVersion(name); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", name, got, err, want)
		}
	}
	for _, bad := range []string{"", "3.2", "4", "4.4-IV9", strings.Repeat("x", 1000)} {
		_, err := LookupMetadataVersion(bad)
		if err == nil || !strings.Contains(err.Error(), "Supported metadata.version are: 3.3-IV3, 3.4-IV0,") || len(err.Error()) > 600 {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if mv, err := MetadataVersionByLevel(21); err != nil || mv.Name != "3.9-IV0" {
		t.Errorf("level 21: %v %v", mv, err)
	}
	if _, err := MetadataVersionByLevel(35); err == nil || !strings.Contains(err.Error(), "Valid feature levels are from 7 to 34.") {
		t.Errorf("level 35: %v", err)
	}
	if !LatestProduction.Production() || (MetadataVersion{"4.5-IV0", 34}).Production() {
		t.Error("production ends at 4.4-IV2")
	}
}

// TestDefaultAndCheckLevel: defaults follow the release, dependencies are
// Kafka's.
func TestDefaultAndCheckLevel(t *testing.T) {
	v39, v40 := MetadataVersion{"3.9-IV0", 21}, MetadataVersion{"4.0-IV3", 25}
	if DefaultLevel("transaction.version", v39) != 0 || DefaultLevel("transaction.version", v40) != 2 || DefaultLevel("group.version", v40) != 1 {
		t.Error("default levels")
	}
	if err := CheckLevel("eligible.leader.replicas.version", 1, v39); err == nil || !strings.Contains(err.Error(), "depends on metadata.version level 23") {
		t.Errorf("dependency: %v", err)
	}
	if err := CheckLevel("eligible.leader.replicas.version", 1, v40); err != nil {
		t.Error(err)
	}
	if err := CheckLevel("group.version", 2, LatestProduction); err == nil || !strings.Contains(err.Error(), "No feature:group.version with feature level 2") {
		t.Errorf("level 2: %v", err)
	}
	if fmt.Sprint(Names()) != "[eligible.leader.replicas.version group.version kraft.version share.version streams.version transaction.version]" || Known(MetadataVersionName) {
		t.Errorf("names %v", Names())
	}
}

// The levels whose didMetadataChange is true in Kafka 4.4.0: 7 8 11 13 14 15 17 23 30 32 33.
func TestMetadataChanged(t *testing.T) {
	for _, tc := range []struct {
		a, b int16
		want bool
	}{
		{33, 33, false}, {33, 32, true}, {32, 31, true}, {31, 30, false}, {31, 29, true}, {30, 29, true},
		{29, 24, false}, {24, 29, false}, {29, 23, false}, {23, 22, true}, {22, 17, false}, {10, 9, false},
	} {
		if got := MetadataChanged(tc.a, tc.b); got != tc.want {
			t.Errorf("MetadataChanged(%d, %d) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	if LatestTesting().Level != 34 || MinimumMetadataVersion().Level != 7 {
		t.Errorf("latest testing %v, minimum %v", LatestTesting(), MinimumMetadataVersion())
	}
}
