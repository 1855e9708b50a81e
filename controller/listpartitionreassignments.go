package controller

import (
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/raft"
)

// listPartitionReassignments serves ListPartitionReassignments (api 46;
// kafka-topics --describe asks it) as Kafka's
// ReplicationControlManager.listPartitionReassignments reads the committed
// metadata: the partitions with adding or removing replicas, of every
// topic or of the partitions asked for (unknown topics and partitions
// left out). kraftd starts no reassignment itself, but a log written by a
// Kafka controller may hold some.
func (a *App) listPartitionReassignments(_ time.Time, _ raft.Status, _ node.Writer, r node.ControllerRequest, req *kmsg.ListPartitionReassignmentsRequest) {
	resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	im := a.committed.Image()
	add := func(t *image.Topic, parts []int32) {
		out := kmsg.NewListPartitionReassignmentsResponseTopic()
		out.Topic = t.Name()
		for _, i := range parts {
			p, ok := t.Partition(i)
			if !ok || len(p.AddingReplicas()) == 0 && len(p.RemovingReplicas()) == 0 {
				continue
			}
			o := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
			o.Partition, o.Replicas = i, p.Replicas()
			o.AddingReplicas, o.RemovingReplicas = p.AddingReplicas(), p.RemovingReplicas()
			out.Partitions = append(out.Partitions, o)
		}
		if len(out.Partitions) > 0 {
			resp.Topics = append(resp.Topics, out)
		}
	}
	if req.Topics == nil {
		var all []*image.Topic
		for t := range im.Topics() {
			all = append(all, t)
		}
		slices.SortFunc(all, func(x, y *image.Topic) int { return strings.Compare(x.Name(), y.Name()) })
		for _, t := range all {
			var parts []int32
			for i := range t.Partitions() {
				parts = append(parts, i)
			}
			slices.Sort(parts)
			add(t, parts)
		}
	} else {
		for _, q := range req.Topics {
			if t, ok := im.TopicByName(q.Topic); ok {
				add(t, q.Partitions)
			}
		}
	}
	r.Respond(resp)
}
