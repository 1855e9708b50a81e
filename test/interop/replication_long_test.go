//go:build interoplong

package interop

import "testing"

// The replication comparisons of replication_test.go at ten times the
// size: Kafka 4.4.0's placer and partition change builder against kraftd's.
func TestPlacementAgainstKafkaLong(t *testing.T)             { comparePlacements(t, 30000) }
func TestPartitionChangeAgainstKafkaLong(t *testing.T)       { compareChanges(t, 200000) }
func TestPartitionChangeChainsAgainstKafkaLong(t *testing.T) { compareChains(t, 15000) }

// The controller operations of replication_ops_test.go at ten times the
// size: Kafka 4.4.0's ReplicationControlManager against
// controller/replication.
func TestCreateTopicsAgainstKafkaLong(t *testing.T) { compareRandom(t, randomCreateCase, 19, 15000) }
func TestAlterPartitionAgainstKafkaLong(t *testing.T) {
	compareRandom(t, randomAlterPartitionCase, 56, 20000)
}
func TestCreatePartitionsAgainstKafkaLong(t *testing.T) {
	compareRandom(t, randomCreatePartitionsCase, 37, 15000)
}
func TestDeleteTopicsAgainstKafkaLong(t *testing.T) {
	compareRandom(t, randomDeleteTopicsCase, 20, 15000)
}
func TestElectLeadersAgainstKafkaLong(t *testing.T) {
	compareRandom(t, randomElectLeadersCase, 43, 15000)
}
func TestAssignReplicasToDirsAgainstKafkaLong(t *testing.T) {
	compareRandom(t, randomAssignReplicasToDirsCase, 73, 15000)
}
func TestPeriodicElectionsAgainstKafkaLong(t *testing.T) { compareRandom(t, randomTaskCase, 44, 15000) }
func TestReplicationChainsAgainstKafkaLong(t *testing.T) { compareChainsRandom(t, 4000) }
