//go:build interoplong

package interop

import "testing"

// The replication comparisons of replication_test.go at ten times the
// size: Kafka 4.4.0's placer and partition change builder against kraftd's.
func TestPlacementAgainstKafkaLong(t *testing.T)             { comparePlacements(t, 30000) }
func TestPartitionChangeAgainstKafkaLong(t *testing.T)       { compareChanges(t, 200000) }
func TestPartitionChangeChainsAgainstKafkaLong(t *testing.T) { compareChains(t, 15000) }
