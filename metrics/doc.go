// Package metrics exposes a running node to operators: Prometheus metrics,
// liveness and readiness, on an HTTP listener of its own.
//
// Kafka's raft-metrics (KafkaRaftMetrics, the kafka.server:type=raft-metrics
// MBean) are exported under the names the Prometheus JMX exporter gives
// them, kafka_server_raft_metrics_<attribute with - as _>, with Kafka's
// meanings: avg, max and rate over Kafka's default window of two 30 s
// samples, computed as Kafka's SampledStat does. current-state, a string in
// JMX, becomes one series per state labelled state, 1 for the current one.
// kraftd's own metrics, named kraftd_*, add histograms, per-api request
// counts and latency, traffic, log and replication gauges, and the Go
// runtime and process collectors.
//
// The raft package knows nothing of this one: gauges are read at scrape
// time from the View the node's loop publishes (an atomic pointer, nothing
// on the hot path), and events arrive through raft.Observer as counter and
// histogram updates (atomics).
package metrics
