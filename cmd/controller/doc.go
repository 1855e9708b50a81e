// Command controller is kraftd's binary: a KRaft controller node that speaks
// Apache Kafka's raft protocol and keeps Kafka's on-disk formats.
//
// Commands:
//
//	controller random-uuid
//	controller format --config FILE --cluster-id ID [--ignore-formatted]
//	controller info --config FILE
//	controller start --config FILE
//	controller test-kraft-server-start --config FILE --replica-directory-id ID [--throughput N] [--record-size S] [--max-in-flight N] [--stats-json]
//	controller describe-quorum --bootstrap-controller HOST:PORT (--status | --replication)
//
// Configuration is a Kafka properties file (config.go, properties.go);
// --override key=value replaces single keys.
//
// Concurrency: the network server's connection goroutines and the peer
// client's goroutines talk to the raft driver only through the run loop's
// bounded inbound channel (node.go). The run loop is the one goroutine that
// calls the driver, the log and the workload; it selects over inbound
// messages, a timer set to the driver's next poll deadline, a workload tick
// and the shutdown signal.
package main
