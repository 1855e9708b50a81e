// Package kafkatest runs Apache Kafka 4.4.0's released jars from Go tests: the storage tool,
// a KRaft controller (kafka.Kafka with process.roles=controller), kafka.tools.TestRaftServer,
// the log dump tool and kafka-metadata-quorum. Kafka is the judge of kraftd's wire and disk
// compatibility, so interop tests start real JVMs next to kraftd code and compare.
//
// The jars come from `make interop-deps` (interop/pom.xml, copied into interop/lib). When
// java or the jars are missing, Require skips the test with a message naming that command,
// unless KRAFTD_INTEROP=required (CI), where a missing judge is a failure.
//
// Every process started here is bound to a test: it listens on 127.0.0.1 random ports, its
// output goes to a file that is dumped when the test fails, and t.Cleanup stops it by pid
// (SIGTERM, then SIGKILL after a grace period). The machine running the suite may have two
// cores, so JVMs get a small heap and the serial collector, and tool runs use the C1
// compiler only (they exit within a second or two, so start-up dominates).
package kafkatest
