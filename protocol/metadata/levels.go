package metadata

// Level is a metadata.version feature level (Kafka's
// MetadataVersion.featureLevel(); clusterid names them, 7 is "3.3-IV3").
type Level int16

const (
	// MinLevel is 3.3-IV3, the lowest metadata.version Kafka 4.4.0 runs at.
	MinLevel Level = 7
	// LatestProductionLevel is 4.4-IV2, Kafka 4.4.0's latestProduction().
	LatestProductionLevel Level = 33
	// LatestLevel is 4.5-IV0, Kafka 4.4.0's latestTesting(): not for production.
	LatestLevel Level = 34
)

// Gate is one of Kafka 4.4.0's MetadataVersion predicates.
type Gate int

const (
	gateBase Gate = iota // what 3.3-IV3 already has

	GateMigration                    // isMigrationSupported
	GateScram                        // isScramSupported
	GateNoLeaderEpochBumpOnIsrShrink // !isLeaderEpochBumpRequiredOnIsrShrink: an ISR shrink keeps the leader epoch
	GateMetadataTransactions         // isMetadataTransactionSupported
	GateDelegationTokens             // isDelegationTokenSupported
	GateControllerRegistration       // isControllerRegistrationSupported
	GateDirectoryAssignment          // isDirectoryAssignmentSupported
	GateElr                          // isElrSupported
	GateCordonedLogDirs              // isCordonedLogDirsSupported
	GateCidrAcl                      // isCidrAclSupported
	GateControllerUnregistration     // isControllerUnregistrationSupported
)

// levelTable is Kafka 4.4.0's MetadataVersion as far as metadata records go,
// the one place kraftd decides which record versions a metadata.version
// writes: from which level each gate holds, and the record types it lets the
// controller write from then on, at which version (a later row raises an
// earlier row's version). A type in no row at or below a level is not written
// at that level: the legacy FenceBrokerRecord, UnfenceBrokerRecord and
// ZkMigrationStateRecord never are by Kafka 4.4.0 (it still replays them).
//
// BrokerRegistrationChangeRecord's entry is the highest version allowed:
// Kafka writes it at the lowest version carrying what changed (0 to fence or
// unfence, 1 for a controlled shutdown, 2 for offline log dirs, 3 for
// cordoned ones: the BrokerRegistrationChange constants).
var levelTable = [...]struct {
	gate     Gate
	from     Level
	versions map[int16]int16 // record type -> version written from this level
}{
	{gateBase, MinLevel, map[int16]int16{
		RegisterBrokerRecordAPIKey: 1, UnregisterBrokerRecordAPIKey: 0, TopicRecordAPIKey: 0,
		PartitionRecordAPIKey: 0, ConfigRecordAPIKey: 0, PartitionChangeRecordAPIKey: 0,
		RemoveTopicRecordAPIKey: 0, FeatureLevelRecordAPIKey: 0, ClientQuotaRecordAPIKey: 0,
		ProducerIdsRecordAPIKey: 0, BrokerRegistrationChangeRecordAPIKey: 1,
		AccessControlEntryRecordAPIKey: 0, RemoveAccessControlEntryRecordAPIKey: 0, NoOpRecordAPIKey: 0,
	}},
	{GateMigration, 8, map[int16]int16{RegisterBrokerRecordAPIKey: 2}},
	{GateScram, 11, map[int16]int16{UserScramCredentialRecordAPIKey: 0, RemoveUserScramCredentialRecordAPIKey: 0}},
	{GateNoLeaderEpochBumpOnIsrShrink, 12, nil},
	{GateMetadataTransactions, 13, map[int16]int16{
		BeginTransactionRecordAPIKey: 0, EndTransactionRecordAPIKey: 0, AbortTransactionRecordAPIKey: 0,
	}},
	{GateDelegationTokens, 14, map[int16]int16{DelegationTokenRecordAPIKey: 0, RemoveDelegationTokenRecordAPIKey: 0}},
	{GateControllerRegistration, 15, map[int16]int16{RegisterControllerRecordAPIKey: 0}},
	{GateDirectoryAssignment, 17, map[int16]int16{
		RegisterBrokerRecordAPIKey: 3, PartitionRecordAPIKey: 1, PartitionChangeRecordAPIKey: 1,
		BrokerRegistrationChangeRecordAPIKey: 2,
	}},
	// ClearElrRecord also needs the eligible.leader.replicas.version feature.
	{GateElr, 23, map[int16]int16{PartitionRecordAPIKey: 2, PartitionChangeRecordAPIKey: 2, ClearElrRecordAPIKey: 0}},
	{GateCordonedLogDirs, 30, map[int16]int16{RegisterBrokerRecordAPIKey: 4, BrokerRegistrationChangeRecordAPIKey: 3}},
	{GateCidrAcl, 32, nil},
	{GateControllerUnregistration, 33, map[int16]int16{UnregisterControllerRecordAPIKey: 0}},
}

// Known reports whether Kafka 4.4.0 defines l.
func (l Level) Known() bool { return MinLevel <= l && l <= LatestLevel }

// Has reports whether gate g holds at l.
func (l Level) Has(g Gate) bool {
	for _, row := range levelTable {
		if row.gate == g {
			return l.Known() && l >= row.from
		}
	}
	return false
}

// RecordVersion is the version of the record type apiKey Kafka 4.4.0 writes
// at l (for BrokerRegistrationChangeRecord, the highest it may write), or
// false if it does not write the type at l.
func (l Level) RecordVersion(apiKey int16) (int16, bool) {
	version, ok := int16(0), false
	if !l.Known() {
		return 0, false
	}
	for _, row := range levelTable {
		if v, in := row.versions[apiKey]; in && l >= row.from {
			version, ok = v, true
		}
	}
	return version, ok
}

// The versions Kafka 4.4.0 writes BrokerRegistrationChangeRecord at, by what
// the record is for (ReplicationControlManager picks them, not the level;
// the level only caps them, RecordVersion).
const (
	BrokerRegistrationChangeFencing            int16 = 0 // Fenced: -1 unfence, 1 fence
	BrokerRegistrationChangeControlledShutdown int16 = 1 // InControlledShutdown
	BrokerRegistrationChangeOfflineLogDirs     int16 = 2 // LogDirs: the dirs still online
	BrokerRegistrationChangeCordonedLogDirs    int16 = 3 // CordonedLogDirs
)
