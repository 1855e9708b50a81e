package replication

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/configs"
	"github.com/kraftd/kraftd/controller/partitionchange"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// AssignReplicasToDirs records which log directory holds each of a broker's
// replicas (api 73), as ReplicationControlManager.handleAssignReplicasToDirs
// does: below metadata.version 3.7-IV2 the request fails whole
// (UNSUPPORTED_VERSION), and so does a stale broker epoch; per partition an
// unknown topic (UNKNOWN_TOPIC_ID), partition (UNKNOWN_TOPIC_OR_PARTITION)
// or one the broker does not replicate (NOT_LEADER_OR_FOLLOWER); otherwise
// a PartitionChangeRecord moving the replica, if it moves. Replicas
// assigned to a directory the broker does not have online then leave their
// ISRs, with a new leader where they led, as for an offline directory. Not
// atomic.
func AssignReplicasToDirs(op Op, req *kmsg.AssignReplicasToDirsRequest) Result[*kmsg.AssignReplicasToDirsResponse] {
	im := op.Image
	resp := kmsg.NewPtrAssignReplicasToDirsResponse()
	resp.Version = req.Version
	mv, _ := im.MetadataVersion()
	if !mv.Has(metadata.GateDirectoryAssignment) {
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		return Result[*kmsg.AssignReplicasToDirsResponse]{Response: resp}
	}
	if err := CheckBrokerEpoch(im, req.BrokerID, req.BrokerEpoch); err != nil {
		resp.ErrorCode = err.Code
		return Result[*kmsg.AssignReplicasToDirsResponse]{Response: resp}
	}
	broker, _ := im.Broker(req.BrokerID)
	var recs []Record
	offline := newSet(tpHash)
	for _, d := range req.Directories {
		dirOffline := !partitionchange.DirOnline(broker, d.ID)
		rd := kmsg.NewAssignReplicasToDirsResponseDirectory()
		rd.ID = d.ID
		for _, td := range d.Topics {
			rt := kmsg.NewAssignReplicasToDirsResponseDirectoryTopic()
			rt.TopicID = td.TopicID
			t, known := im.Topic(td.TopicID)
			for _, pd := range td.Partitions {
				rp := kmsg.NewAssignReplicasToDirsResponseDirectoryTopicPartition()
				rp.Partition = pd.Partition
				p, ok := image.Partition{}, false
				if known {
					p, ok = t.Partition(pd.Partition)
				}
				switch {
				case !known:
					rp.ErrorCode = kerr.UnknownTopicID.Code
				case !ok:
					rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				case !slices.Contains(p.Replicas(), req.BrokerID):
					rp.ErrorCode = kerr.NotLeaderForPartition.Code // NOT_LEADER_OR_FOLLOWER
				default:
					cur := partitionchange.FromImage(p)
					rec, version, err := partitionchange.New(cur, changeContext(op, t, pd.Partition, cur, nil)).
						SetDirectory(req.BrokerID, d.ID).Build()
					if err != nil {
						rp.ErrorCode = kerr.UnknownServerError.Code
						break
					}
					if rec != nil {
						recs = append(recs, Record{rec, version})
					}
					if dirOffline {
						offline.add(image.TopicPartition{TopicID: t.ID(), Partition: pd.Partition})
					}
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			rd.Topics = append(rd.Topics, rt)
		}
		resp.Directories = append(resp.Directories, rd)
	}
	// The elections see the partitions as they were before this request's
	// records, as Kafka's do.
	for _, tp := range offline.keys() {
		t, p, ok := lookup(im, tp)
		if !ok {
			continue
		}
		if r := removeBroker(op, t, tp.Partition, p, req.BrokerID); r != nil {
			recs = append(recs, *r)
		}
	}
	return Result[*kmsg.AssignReplicasToDirsResponse]{Records: recs, Response: resp}
}

// changeContext is the builder's context for partition index of topic t.
// acceptable, when not nil, replaces "the broker is active" in the
// acceptor.
func changeContext(op Op, t *image.Topic, index int32, cur partitionchange.Partition, acceptable func(int32) bool) partitionchange.Context {
	im := op.Image
	mv, _ := im.MetadataVersion()
	if acceptable == nil {
		acceptable = func(id int32) bool { return partitionchange.IsActive(im, id) }
	}
	return partitionchange.Context{
		TopicID:         t.ID(),
		PartitionID:     index,
		MetadataVersion: mv,
		MinISR:          topicMinISR(t, configs.TopicLayers(im, op.Settings.Static, op.Settings.NodeID, t.Name())),
		ELR:             im.ELREnabled(),
		Acceptable:      partitionchange.Acceptor(im, cur, acceptable),
		DefaultDir:      defaultDir(im),
	}
}

// removeBroker takes broker out of a partition's ISR and leadership
// (generateLeaderAndIsrUpdates with a broker to remove), an unclean
// election where the topic allows it.
func removeBroker(op Op, t *image.Topic, index int32, p image.Partition, broker int32) *Record {
	im := op.Image
	cur := partitionchange.FromImage(p)
	b := partitionchange.New(cur, changeContext(op, t, index, cur, func(id int32) bool {
		return id != broker && partitionchange.IsActive(im, id)
	}))
	if configs.UncleanLeaderElection(configs.TopicLayers(im, op.Settings.Static, op.Settings.NodeID, t.Name())) {
		b.SetElection(partitionchange.Unclean)
	}
	b.SetTargetISR(slices.DeleteFunc(slices.Clone(p.ISR()), func(id int32) bool { return id == broker }))
	rec, version, err := b.Build()
	if err != nil || rec == nil {
		return nil
	}
	return &Record{rec, version}
}

// tpHash is TopicIdPartition.hashCode (a Java record: 31 times the id's
// hash plus the partition).
func tpHash(tp image.TopicPartition) int32 {
	return 31*uuidHash(uuid.UUID(tp.TopicID)) + tp.Partition
}
