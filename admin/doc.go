// Package admin is a small Kafka admin client for a KRaft controller
// quorum, shared by the describe-quorum command, the benchmark and the
// tests. It speaks to kraftd and to Kafka's controllers alike.
//
// DescribeQuorum is kafka-metadata-quorum's describe: DescribeCluster to a
// bootstrap controller for the cluster id and the leader, then
// DescribeQuorum to the leader, retried until ctx ends. DescribeQuorumAt
// asks one node, which answers only when it leads. Request sends any one
// request with a short-lived franz-go client (versions negotiated with
// ApiVersions first).
//
//	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
//	defer cancel()
//	q, err := admin.DescribeQuorum(ctx, []string{"127.0.0.1:9093"})
//	// q.ClusterID, q.Partition.LeaderID, q.Partition.CurrentVoters, ...
//
// Printing kafka-metadata-quorum's text stays in cmd/controller.
package admin
