// Package workload is Kafka's TestRaftServer workload for
// test-kraft-server-start, run as a node.Application: while its node leads
// it appends records of --record-size bytes at --throughput records/s, an
// open loop as TestRaftServer's (or, unthrottled, as fast as the quorum
// commits with at most --max-in-flight records uncommitted), measures commit latency from each
// record's offered time to its commit on the leader (no coordinated
// omission: a record that waited for an append tick or a slow flush is
// charged for it), and prints stats lines (text or --stats-json, fields in
// Stats) and a final summary. Every node, observers included, writes an
// empty snapshot each metadata.log.max.record.bytes.between.snapshots
// committed bytes, as a Kafka controller does.
//
// Records hold an 8-byte sequence number, the node id and the epoch, then
// zeros, like TestRaftServer's payload.
package workload
