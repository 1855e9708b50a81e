package topics

import "testing"

// TestWellKnown: the names, the test topic's id and the dir layout are
// Kafka's.
func TestWellKnown(t *testing.T) {
	if RaftPerformanceTestID.String() != "AAAAAAAAAAAAAAAAAAAAAg" || RaftPerformanceTestID.Reserved() {
		t.Errorf("test topic id %s", RaftPerformanceTestID)
	}
	if got := PartitionDir("/x", ClusterMetadata); got != "/x/__cluster_metadata-0" {
		t.Errorf("metadata dir %s", got)
	}
	if got := PartitionDir("/x/", RaftPerformanceTest); got != "/x/__raft_performance_test-0" {
		t.Errorf("test dir %s", got)
	}
}
