// Package interop holds kraftd's interoperability tests against Apache Kafka 4.4.0's
// released jars (see test/interop/pom.xml and `make interop-deps`): real Kafka controllers and
// tools exchange frames and files with kraftd's codecs and are the judge of compatibility.
// The helpers that run Kafka live in test/interop/kafkatest; this package has only tests.
//
// Most of a mixed-quorum test's time is spent waiting (election and fetch timeouts, JVM
// start-up on one thread), so the longest of them (TestDynamicMixedQuorum,
// TestMixedRaftQuorum, TestMixedControllerQuorum, TestQuorumCLIWithKafka,
// TestFormatRefusalsMatchKafka, TestDynamicChangesJVMFirst, TestSecureMixedQuorum,
// TestControllerApisNotActive, TestAdminToolsAgainstKraftdLeader, TestMixedControllerDeferral,
// TestMixedRaftMetrics, the snapshot transfers, TestImageEnvironmentAsKafka, TestKafkaController,
// TestControllerStorageCommandsWithKafka, TestKraftdFormattedDirUsedByKafka) run in parallel
// with each other (at most GOMAXPROCS at a time) after the rest; their deadlines allow for
// it. Tests that judge timing or throughput, or that a JVM's pause under load could fail
// (TestMixedClusterIDMismatch wants two JVMs to keep one epoch), stay sequential.
// Scenarios too long for make test carry the interoplong build tag and a name ending in
// Long (make interop-long); they run in parallel too, except the controller-less window
// measurements (TestControllerlessWindow*Long), which judge timing.
package interop
