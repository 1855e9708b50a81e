package metadata_test

import (
	"testing"

	"github.com/kraftd/kraftd/protocol/metadata"
)

// Spot checks of the level table against the spec's section 1.4; the
// interop test compares every level with Kafka 4.4.0's MetadataVersion.
func TestLevelTable(t *testing.T) {
	for _, c := range []struct {
		key     int16
		level   metadata.Level
		version int16 // -1: not written
	}{
		{metadata.RegisterBrokerRecordAPIKey, 7, 1}, {metadata.RegisterBrokerRecordAPIKey, 8, 2},
		{metadata.RegisterBrokerRecordAPIKey, 16, 2}, {metadata.RegisterBrokerRecordAPIKey, 17, 3},
		{metadata.RegisterBrokerRecordAPIKey, 29, 3}, {metadata.RegisterBrokerRecordAPIKey, 30, 4},
		{metadata.RegisterBrokerRecordAPIKey, 34, 4},
		{metadata.PartitionRecordAPIKey, 16, 0}, {metadata.PartitionRecordAPIKey, 17, 1}, {metadata.PartitionRecordAPIKey, 23, 2},
		{metadata.PartitionChangeRecordAPIKey, 7, 0}, {metadata.PartitionChangeRecordAPIKey, 22, 1}, {metadata.PartitionChangeRecordAPIKey, 33, 2},
		{metadata.BrokerRegistrationChangeRecordAPIKey, 7, 1}, {metadata.BrokerRegistrationChangeRecordAPIKey, 17, 2},
		{metadata.BrokerRegistrationChangeRecordAPIKey, 30, 3},
		{metadata.UserScramCredentialRecordAPIKey, 10, -1}, {metadata.UserScramCredentialRecordAPIKey, 11, 0},
		{metadata.BeginTransactionRecordAPIKey, 12, -1}, {metadata.BeginTransactionRecordAPIKey, 13, 0},
		{metadata.DelegationTokenRecordAPIKey, 13, -1}, {metadata.DelegationTokenRecordAPIKey, 14, 0},
		{metadata.RegisterControllerRecordAPIKey, 14, -1}, {metadata.RegisterControllerRecordAPIKey, 15, 0},
		{metadata.ClearElrRecordAPIKey, 22, -1}, {metadata.ClearElrRecordAPIKey, 23, 0},
		{metadata.UnregisterControllerRecordAPIKey, 32, -1}, {metadata.UnregisterControllerRecordAPIKey, 33, 0},
		{metadata.FeatureLevelRecordAPIKey, 7, 0}, {metadata.NoOpRecordAPIKey, 33, 0},
		{metadata.FenceBrokerRecordAPIKey, 7, -1}, {metadata.UnfenceBrokerRecordAPIKey, 33, -1},
		{metadata.ZkMigrationStateRecordAPIKey, 20, -1},
		{metadata.TopicRecordAPIKey, 6, -1}, {metadata.TopicRecordAPIKey, 35, -1},
	} {
		v, ok := c.level.RecordVersion(c.key)
		if ok != (c.version >= 0) || (ok && v != c.version) {
			rec, _ := metadata.New(c.key)
			t.Errorf("%s at level %d: v%d %v, want v%d", rec.TypeName(), c.level, v, ok, c.version)
		}
	}
	// Every type's version is one it has.
	for l := metadata.MinLevel; l <= metadata.LatestLevel; l++ {
		for _, k := range metadata.APIKeys() {
			rec, _ := metadata.New(k)
			lo, hi := rec.ValidVersions()
			if v, ok := l.RecordVersion(k); ok && (v < lo || v > hi) {
				t.Errorf("%s at level %d: v%d", rec.TypeName(), l, v)
			}
		}
	}
	for _, c := range []struct {
		gate  metadata.Gate
		level metadata.Level
		want  bool
	}{
		{metadata.GateScram, 10, false}, {metadata.GateScram, 11, true},
		{metadata.GateNoLeaderEpochBumpOnIsrShrink, 11, false}, {metadata.GateNoLeaderEpochBumpOnIsrShrink, 12, true},
		{metadata.GateCidrAcl, 31, false}, {metadata.GateCidrAcl, 32, true},
		{metadata.GateControllerUnregistration, 34, true}, {metadata.GateMigration, 35, false},
	} {
		if got := c.level.Has(c.gate); got != c.want {
			t.Errorf("gate %d at level %d: %v", c.gate, c.level, got)
		}
	}
}
