package faults

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/kraftd/kraftd/admin"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
	"github.com/kraftd/kraftd/topics"
)

// Controller runs (Options.Controllers): every node is a metadata-quorum
// controller on __cluster_metadata, as in a real cluster: kraftd `start`
// (formatted with `kraftd format`) and, for the Options.Kafka nodes,
// Kafka's kafka.Kafka with process.roles=controller (formatted with
// kafka-storage). No workload runs: what commits is the active
// controller's records (NoOpRecords every metadata.max.idle.interval.ms),
// and without a commit journal the checker judges the committed prefix
// every leader reported. Every node answers DescribeQuorum, Kafka's too.

// formatControllers formats every node's data dir with one cluster id.
func (c *Cluster) formatControllers() {
	c.t.Helper()
	env := kafkatest.Require(c.t)
	clusterID := kafkatest.NewUUID()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, id := range c.IDs {
		nd := c.nodes[id]
		var out []byte
		var err error
		if nd.kafka {
			var s string
			s, err = env.StorageFormat(ctx, nd.cfg, clusterID)
			out = []byte(s)
		} else {
			out, err = exec.CommandContext(ctx, c.bin, "format", "--config", nd.cfg, "--cluster-id", clusterID).CombinedOutput()
		}
		if err != nil {
			c.t.Fatalf("format node %d (%s): %v\n%s", id, c.kind(id), err, out)
		}
	}
}

// topic is the replicated partition's topic.
func (c *Cluster) topic() string {
	if c.opts.Controllers {
		return topics.ClusterMetadata
	}
	return perfTopic
}

// controllerProps are the extra properties of a controller run: the active
// controller's idle records come often, so a run commits steadily.
var controllerProps = []string{"metadata.max.idle.interval.ms=200"}

// kafkaServerCommand is Kafka node nd's kafka.Kafka command line.
func (c *Cluster) kafkaServerCommand(nd *Node) *exec.Cmd {
	args := append(append([]string(nil), kafkaJVMFlags...), "-Djdk.net.hosts.file="+nd.hosts, "-cp", c.classpath, "kafka.Kafka", nd.cfg)
	return exec.Command(c.java, args...)
}

// caughtUp reports whether the leader's DescribeQuorum names every running
// voter at a log end offset of at least target.
func (c *Cluster) caughtUp(leader int32, target int64) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	dq, err := admin.DescribeQuorumAt(ctx, fmt.Sprintf("127.0.0.1:%d", c.nodes[leader].Port), topics.ClusterMetadata)
	if err != nil {
		return false
	}
	leo := map[int32]int64{}
	for _, v := range dq.Topics[0].Partitions[0].CurrentVoters {
		leo[v.ReplicaID] = v.LogEndOffset
	}
	for _, id := range c.IDs {
		if c.Running(id) && leo[id] < target {
			return false
		}
	}
	return true
}
