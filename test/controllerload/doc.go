// Package controllerload puts a controller quorum under a cluster's load over the wire,
// whatever runs it: kraftd, or Apache Kafka 4.4.0's controllers. Only the controllers'
// addresses are needed (and, for what the wire does not tell, a controller's log dir and
// process id).
//
//   - Finder finds the active controller as a broker does: DescribeCluster to the
//     controllers (ControllerId is the raft leader on both), trusted until a request there
//     answers NOT_CONTROLLER or its connection breaks. It also polls the metadata log's
//     high watermark (DescribeQuorum), the offset the simulated brokers report as applied.
//   - Fleet is N simulated brokers: each registers (BrokerRegistration with an incarnation
//     id, one log directory, one fake listener, optionally a rack, and every feature the
//     controller supports), then heartbeats every broker.heartbeat.interval.ms after each
//     answer, reporting the polled high watermark, so it is unfenced; a failed request is
//     retried after a backoff from 50 ms doubling up to the interval, at the controller
//     found again; STALE_BROKER_EPOCH registers again. Each broker has a connection of its
//     own, as a Kafka broker has: both Kafka and kraftd answer one request per connection
//     at a time (Kafka mutes a channel until its response is sent; kraftd's reader reads
//     nothing more until it has answered), and heartbeats do not care which connection
//     they come on, but brokers sharing one would wait for each other.
//   - Load offers admin requests (CreateTopics, DeleteTopics) straight to the active
//     controller as `--bootstrap-controller` admin tools do: an open loop at a rate
//     (latency from each request's due time) or a closed loop, over several connections.
//   - Sampler reads a process's CPU time and RSS from /proc.
//   - LogFollower replays a controller's metadata log from its files while it runs.
//
// The scenarios that use it, against kraftd and Kafka side by side, are
// test/interop/bench_controller*_test.go (`make bench-controller`).
package controllerload
