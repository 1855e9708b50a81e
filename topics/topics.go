// Package topics names the partitions kraftd replicates and where they
// live: Kafka's __cluster_metadata, whose topic id is uuid.MetadataTopicID
// (the id every node knows without being told), and TestRaftServer's
// __raft_performance_test, each a single partition 0 in <log dir>/<topic>-0.
// It is a leaf (uuid only), so the raft core, the metadata log, the storage
// tooling and the admin client spell them once.
package topics

import (
	"path/filepath"

	"github.com/kraftd/kraftd/uuid"
)

const (
	// ClusterMetadata is Kafka's metadata topic
	// (Topic.CLUSTER_METADATA_TOPIC_NAME), the partition of a controller
	// quorum.
	ClusterMetadata = "__cluster_metadata"
	// RaftPerformanceTest is the partition of Kafka's TestRaftServer
	// (test-kraft-server-start).
	RaftPerformanceTest = "__raft_performance_test"
)

// RaftPerformanceTestID is TestRaftServer's topic id, Uuid(0, 2).
var RaftPerformanceTestID = uuid.UUID{15: 2}

// PartitionDir returns the dir of a topic's partition 0 in logDir, as Kafka
// names it: <logDir>/<topic>-0.
func PartitionDir(logDir, topic string) string { return filepath.Join(logDir, topic+"-0") }
