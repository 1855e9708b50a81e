package rafttest

import (
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/topics"
)

// handleDescribeQuorum prints a node's DescribeQuorum v2 answer: replica
// keys with directory ids, end offsets, and the voters' listeners.
//
// Example:
//
//	describe-quorum 1
//	----
//	1 DescribeQuorum err=0 leader=1 epoch=1 hw=4
//	  voter 1/dir1 end=4
//	  voter 2/dir2 end=4
//	  voter 3/dir3 end=4
//	  observer 4/dir4 end=4
//	  node 1 CONTROLLER 127.0.0.1:9001
//	  ...
func (e *InteractionEnv) handleDescribeQuorum(t *testing.T, d *datadriven.TestData) {
	n := e.upNode(t, d, e.firstID(t, d))
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.Version = 2
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = topics.ClusterMetadata
	rt.Partitions = append(rt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	resp := n.drv.DescribeQuorum(n.now, req)
	for _, tp := range resp.Topics {
		for _, p := range tp.Partitions {
			e.printf("%d DescribeQuorum err=%s leader=%s epoch=%d hw=%d", n.id, errName(p.ErrorCode), idName(p.LeaderID), p.LeaderEpoch, p.HighWatermark)
			for _, r := range p.CurrentVoters {
				e.effect("voter %d%s end=%d", r.ReplicaID, dirName(r.ReplicaDirectoryID), r.LogEndOffset)
			}
			for _, r := range p.Observers {
				e.effect("observer %d%s end=%d", r.ReplicaID, dirName(r.ReplicaDirectoryID), r.LogEndOffset)
			}
		}
	}
	for _, nd := range resp.Nodes {
		for _, l := range nd.Listeners {
			e.effect("node %d %s %s:%d", nd.NodeID, l.Name, l.Host, l.Port)
		}
	}
}
