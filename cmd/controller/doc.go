// Command controller is kraftd's binary: a KRaft controller node that speaks
// Apache Kafka's raft protocol and keeps Kafka's on-disk formats.
//
// Commands:
//
//	controller random-uuid
//	controller format --config FILE --cluster-id ID [--ignore-formatted]
//	controller info --config FILE
//	controller start [--config FILE]   (and/or KAFKA_* environment variables, CLUSTER_ID)
//	controller test-kraft-server-start --config FILE --replica-directory-id ID [--throughput N] [--record-size S] [--max-in-flight N] [--stats-format text|json|kafka|csv]
//	controller describe-quorum --bootstrap-controller HOST:PORT (--status | --replication) [--human-readable]
//	controller add-controller --bootstrap-controller HOST:PORT --command-config NEW_CONTROLLER_PROPS [--dry-run]
//	controller remove-controller --bootstrap-controller HOST:PORT -i ID -d DIRECTORY_ID [--dry-run] [--unregister]
//	controller metadata <view> (--dir DIR [--offset N] | --snapshot FILE) [--json] [--records] [--memory]
//	controller version
//
// metadata reads a metadata log dir (newest snapshot, then the segments) or
// one snapshot file into the metadata image (package image) and prints a
// view of it, in the spirit of kafka-metadata-shell: summary, brokers,
// controllers, topics, partitions, configs, features, producer-ids, quotas,
// scram (names and mechanisms only), acls, or records (the image as the
// records a snapshot holds). docs/operating.md describes the views.
//
// The three quorum commands are kafka-metadata-quorum's describe,
// add-controller and remove-controller, subcommand first, with its flags
// (--bootstrap-server instead of --bootstrap-controller goes through a
// broker), checks, output, error text and exit status; --timeout bounds them
// (60 s, the admin client's default.api.timeout.ms).
//
// scripts/test-kraft-server-start.sh is the thin wrapper with the flags of
// Kafka's raft/bin/test-kraft-server-start.sh.
//
// Configuration is a Kafka properties file (package config) with
// Kafka's defaults; --override key=value replaces single keys. start also
// reads KAFKA_* environment variables over the file as the apache/kafka
// image does (KAFKA_NODE_ID -> node.id; env_start.go), and with CLUSTER_ID
// formats empty log dirs on its first start. A node with
// process.roles=controller must be in controller.quorum.voters; a node with
// process.roles=broker is an observer (it follows the log, never votes).
//
// test-kraft-server-start is Kafka's TestRaftServer: partition
// __raft_performance_test-0, topic id AAAAAAAAAAAAAAAAAAAAAg, and on an
// unformatted dir the cluster id AAAAAAAAAAAAAAAAAAAAAA, so it can share a
// quorum with Kafka's TestRaftServer. While it leads it appends records at
// --throughput and measures commit latency from each record's offered time
// to its commit (package workload); every node snapshots its (empty) state
// every metadata.log.max.record.bytes.between.snapshots committed bytes.
// start runs on __cluster_metadata-0 of a formatted dir and appends nothing
// itself.
//
// The package is flags, commands and output formatting only: the node runs
// in package node (network, raft driver, log, run loop), the quorum commands'
// requests are package admin's, and the configuration is package config.
// The first SIGINT or SIGTERM starts a node's graceful shutdown (a leader
// resigns and hands over) bounded by --shutdown-timeout; a second one exits
// at once.
package main
