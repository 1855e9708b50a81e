// Package admin is a small Kafka admin client for a KRaft controller
// quorum, shared by the quorum commands, the benchmark and the
// tests. It speaks to kraftd and to Kafka's controllers alike.
//
// DescribeQuorum is kafka-metadata-quorum's describe: DescribeCluster to a
// bootstrap controller for the cluster id and the leader, then
// DescribeQuorum to the leader, retried until ctx ends. DescribeQuorumAt
// asks one node, which answers only when it leads. AddRaftVoter,
// RemoveRaftVoter and UnregisterController are add-controller's and
// remove-controller's requests, sent to the active controller (or through a
// broker, Bootstrap.Brokers) and retried on NOT_CONTROLLER. Request sends any one
// request with a short-lived franz-go client (versions negotiated with
// ApiVersions first).
//
//	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
//	defer cancel()
//	q, err := admin.DescribeQuorum(ctx, admin.Bootstrap{Addrs: []string{"127.0.0.1:9093"}})
//	// q.ClusterID, q.Partition.LeaderID, q.Partition.CurrentVoters, ...
//
// Printing kafka-metadata-quorum's text stays in cmd/controller.
package admin
