package replication

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/placement"
)

// CreatePartitions answers a CreatePartitions request (api 37) as
// ControllerApis and ReplicationControlManager.createPartitions do, the
// caller having checked authorization: names given twice are refused first
// (in HashSet order), the other topics are handled in the order of Kafka's
// HashSet of their names (which is also the order placement draws in), each
// answering its own error. The records are atomic; none with ValidateOnly.
func CreatePartitions(op Op, req *kmsg.CreatePartitionsRequest) Result[*kmsg.CreatePartitionsResponse] {
	resp := kmsg.NewPtrCreatePartitionsResponse()
	resp.Version = req.Version
	add := func(name string, code int16, msg *string) {
		r := kmsg.NewCreatePartitionsResponseTopic()
		r.Topic, r.ErrorCode, r.ErrorMessage = name, code, msg
		resp.Topics = append(resp.Topics, r)
	}
	names, dups := newStringSet(), newStringSet()
	first := map[string]kmsg.CreatePartitionsRequestTopic{}
	for _, t := range req.Topics {
		if names.has(t.Topic) {
			dups.add(t.Topic)
			continue
		}
		names.add(t.Topic)
		first[t.Topic] = t
	}
	for _, n := range dups.keys() {
		add(n, kerr.InvalidRequest.Code, strp("Duplicate topic name."))
		names.remove(n)
	}
	var topics []kmsg.CreatePartitionsRequestTopic
	for _, n := range names.keys() {
		topics = append(topics, first[n])
	}

	// Too many new partitions fail the whole request: every topic of the
	// request answers the error.
	var total int64
	for _, t := range topics {
		if tp, ok := op.Image.TopicByName(t.Topic); ok && t.Count >= 0 {
			if extra := int64(t.Count) - int64(tp.PartitionCount()); extra > 0 {
				total += extra
			}
		}
		if total > MaxPartitionsPerRequest {
			resp.Topics = resp.Topics[:0]
			msg := strp("Excessively large number of additional partitions per request.")
			for _, t := range req.Topics {
				add(t.Topic, kerr.PolicyViolation.Code, msg)
			}
			return Result[*kmsg.CreatePartitionsResponse]{Atomic: true, Response: resp}
		}
	}

	var recs []Record
	for _, t := range topics {
		r, err := createPartitions(op, t)
		// A topic that fails part way through placement keeps the
		// partitions it made before (Kafka 4.4.0 writes them too).
		recs = append(recs, r...)
		if err != nil {
			var msg *string
			if err.Message != "" {
				msg = strp(err.Message)
			}
			add(t.Topic, err.Code, msg)
			continue
		}
		add(t.Topic, 0, nil)
	}
	if req.ValidateOnly {
		recs = nil
	}
	return Result[*kmsg.CreatePartitionsResponse]{Records: recs, Atomic: true, Response: resp}
}

// createPartitions adds one topic's partitions: Kafka's checks, then the
// given assignments (validated as CreateTopics validates them) or
// placement at the topic's replication factor. An Error with an empty
// message is answered with a null one. With an error, the records returned
// are those Kafka writes anyway: the placed partitions before the first
// one without an active replica.
func createPartitions(op Op, t kmsg.CreatePartitionsRequestTopic) ([]Record, *Error) {
	im := op.Image
	tp, ok := im.TopicByName(t.Topic)
	if !ok {
		return nil, &Error{Code: kerr.UnknownTopicOrPartition.Code}
	}
	have := int32(tp.PartitionCount())
	switch {
	case t.Count == have:
		return nil, &Error{kerr.InvalidPartitions.Code, sprintf("Topic already has %d partition(s).", have)}
	case t.Count < have:
		return nil, &Error{kerr.InvalidPartitions.Code,
			sprintf("The topic %s currently has %d partition(s); %d would not be an increase.", t.Topic, have, t.Count)}
	}
	additional := t.Count - have
	if t.Assignment != nil && len(t.Assignment) != int(additional) {
		return nil, invalidAssignment("Attempted to add %d additional partition(s), but only %d assignment(s) were specified.", additional, len(t.Assignment))
	}
	p0, ok := tp.Partition(0)
	if !ok {
		return nil, &Error{kerr.UnknownServerError.Code, "Invalid state: topic " + t.Topic + " appears to have no partitions."}
	}
	if len(p0.Replicas()) > 32767 {
		return nil, &Error{kerr.UnknownServerError.Code,
			sprintf("Invalid replication factor %d: expected a number equal to less than 32767", len(p0.Replicas()))}
	}
	rf := int16(len(p0.Replicas()))

	var parts []newPartition
	if t.Assignment != nil {
		for i, a := range t.Assignment {
			if err := validateManualAssignment(im, a.Replicas, int(rf)); err != nil {
				return nil, err
			}
			isr := activeReplicas(im, a.Replicas)
			if len(isr) == 0 {
				return nil, invalidAssignment("All brokers specified in the manual partition assignment for partition %d are fenced or in controlled shutdown.", have+int32(i))
			}
			parts = append(parts, newPartition{slices.Clone(a.Replicas), placement.DefaultDirs(im, a.Replicas), isr})
		}
	} else {
		lists, err := placement.Place(placement.Spec{StartPartition: have, NumPartitions: additional, NumReplicas: rf},
			placement.UsableBrokers(im, op.ShuttingDown), op.Random)
		if err != nil {
			pe := err.(*placement.Error)
			return nil, &Error{pe.Code, pe.Message} // the placer's message, unprefixed
		}
		for _, r := range lists {
			parts = append(parts, newPartition{r, placement.DefaultDirs(im, r), activeReplicas(im, r)})
		}
	}
	mv, _ := im.MetadataVersion()
	var recs []Record
	for i, p := range parts {
		if len(p.isr) == 0 {
			// Kafka has appended the partitions before this one to the
			// request's records by now, and they are written although the
			// topic answers an error.
			return recs, &Error{kerr.InvalidReplicationFactor.Code, placement.NoActiveReplicasMessage(rf)}
		}
		recs = append(recs, partitionRecord(mv, tp.ID(), have+int32(i), p))
	}
	return recs, nil
}
