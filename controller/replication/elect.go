package replication

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/configs"
	"github.com/kraftd/kraftd/controller/partitionchange"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/uuid"
)

// MaxElectionsPerImbalance bounds the elections one run of a periodic
// election task makes (Kafka's MAX_ELECTIONS_PER_IMBALANCE); a run that
// reaches it asks to run again at once.
const MaxElectionsPerImbalance = 1000

// Kafka's messages for these election outcomes (Errors.message()).
const (
	msgElectionNotNeeded       = "Leader election not needed for topic partition."
	msgPreferredNotAvailable   = "The preferred leader was not available."
	msgEligibleLeadersNotAvail = "Eligible topic partition leaders are not available."
)

// ElectLeaders answers an ElectLeaders request (api 43) as
// ReplicationControlManager.electLeaders does: a preferred (0) or unclean
// (1) election for each named partition, or for every partition when
// Topics is null (then partitions that need none are left out). Any other
// election type fails the request (INVALID_REQUEST). The result is not
// atomic.
//
// With Topics null Kafka walks its topics in the order of its
// TimelineHashMap of names and each topic's partitions in that of its
// partition map; kraftd walks topics by id and partitions by index.
func ElectLeaders(op Op, req *kmsg.ElectLeadersRequest) Result[*kmsg.ElectLeadersResponse] {
	resp := kmsg.NewPtrElectLeadersResponse()
	resp.Version = req.Version
	if req.Topics != nil && len(req.Topics) == 0 {
		// QuorumController answers an empty list itself, before the
		// election type is looked at.
		return Result[*kmsg.ElectLeadersResponse]{Response: resp}
	}
	typ := req.ElectionType
	if req.Version == 0 {
		typ = 0
	}
	if typ != 0 && typ != 1 {
		return Result[*kmsg.ElectLeadersResponse]{Response: electLeadersFailed(req, &Error{kerr.InvalidRequest.Code, sprintf("Unknown election type %d", typ)})}
	}
	election := partitionchange.Preferred
	if typ == 1 {
		election = partitionchange.Unclean
	}
	var recs []Record
	answer := func(rt *kmsg.ElectLeadersResponseTopic, p int32, err *Error, all bool) {
		if all && err != nil && err.Code == kerr.ElectionNotNeeded.Code {
			return
		}
		rp := kmsg.NewElectLeadersResponseTopicPartition()
		rp.Partition = p
		if err != nil {
			rp.ErrorCode, rp.ErrorMessage = err.Code, strp(err.Message)
		}
		rt.Partitions = append(rt.Partitions, rp)
	}
	if req.Topics == nil {
		for t := range op.Image.Topics() {
			rt := kmsg.NewElectLeadersResponseTopic()
			rt.Topic = t.Name()
			for p := range t.Partitions() {
				r, err := electLeader(op, t.Name(), p, election)
				recs = append(recs, r...)
				answer(&rt, p, err, true)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return electLeadersResult(req, recs, resp)
	}
	for _, t := range req.Topics {
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			r, err := electLeader(op, t.Topic, p, election)
			recs = append(recs, r...)
			answer(&rt, p, err, false)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return electLeadersResult(req, recs, resp)
}

// electLeadersResult fails the request whole past MaxRecordsPerRequest
// records.
func electLeadersResult(req *kmsg.ElectLeadersRequest, recs []Record, resp *kmsg.ElectLeadersResponse) Result[*kmsg.ElectLeadersResponse] {
	if len(recs) > MaxRecordsPerRequest {
		return Result[*kmsg.ElectLeadersResponse]{Response: electLeadersFailed(req, errBatchTooLarge)}
	}
	return Result[*kmsg.ElectLeadersResponse]{Records: recs, Response: resp}
}

// electLeadersFailed is the answer to a request that failed whole: the
// top-level error, and on every partition named.
func electLeadersFailed(req *kmsg.ElectLeadersRequest, err *Error) *kmsg.ElectLeadersResponse {
	resp := kmsg.NewPtrElectLeadersResponse()
	resp.Version = req.Version
	resp.ErrorCode = err.Code
	for _, t := range req.Topics {
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewElectLeadersResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p, err.Code, strp(err.Message)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// electLeader is ReplicationControlManager.electLeader: one partition's
// preferred or unclean election, its record if one is made.
func electLeader(op Op, topic string, partition int32, election partitionchange.Election) ([]Record, *Error) {
	im := op.Image
	t, ok := im.TopicByName(topic)
	if !ok {
		return nil, &Error{kerr.UnknownTopicOrPartition.Code, "No such topic as " + topic}
	}
	p, ok := t.Partition(partition)
	if !ok {
		return nil, &Error{kerr.UnknownTopicOrPartition.Code, sprintf("No such partition as %s-%d", topic, partition)}
	}
	if election == partitionchange.Preferred && p.HasPreferredLeader() || election == partitionchange.Unclean && p.HasLeader() {
		return nil, &Error{kerr.ElectionNotNeeded.Code, msgElectionNotNeeded}
	}
	rec, err := change(op, t, partition, p, election)
	if err != nil {
		return nil, &Error{kerr.UnknownServerError.Code, err.Error()}
	}
	if rec == nil {
		if election == partitionchange.Preferred {
			return nil, &Error{kerr.PreferredLeaderNotAvailable.Code, msgPreferredNotAvailable}
		}
		return nil, &Error{kerr.EligibleLeadersNotAvailable.Code, msgEligibleLeadersNotAvail}
	}
	return []Record{*rec}, nil
}

// change builds an election on partition p of topic t.
func change(op Op, t *image.Topic, partition int32, p image.Partition, election partitionchange.Election) (*Record, error) {
	cur := partitionchange.FromImage(p)
	rec, version, err := partitionchange.New(cur, changeContext(op, t, partition, cur, nil)).SetElection(election).Build()
	if err != nil || rec == nil {
		return nil, err
	}
	return &Record{rec, version}, nil
}

// BalanceLeaders is the periodic preferred-leader task
// (maybeBalancePartitionLeaders): a preferred election on each partition
// whose leader is not its first replica, at most
// MaxElectionsPerImbalance records; more reports whether the task should
// run again at once. Kafka walks its TimelineHashSet of imbalanced
// partitions; kraftd walks the image's index (by topic ordinal, then
// partition), so when more than the limit are imbalanced the two may pick
// different ones in a run, never a different outcome in the end.
func BalanceLeaders(op Op) (recs []Record, more bool) {
	im := op.Image
	for tp := range im.ImbalancedPartitions() {
		if len(recs) >= MaxElectionsPerImbalance {
			break
		}
		t, p, ok := lookup(im, tp)
		if !ok {
			continue
		}
		if r, err := change(op, t, tp.Partition, p, partitionchange.Preferred); err == nil && r != nil {
			recs = append(recs, *r)
		}
	}
	return recs, len(recs) >= MaxElectionsPerImbalance
}

// ElectUncleanLeaders is the periodic unclean election task
// (maybeElectUncleanLeaders): each leaderless partition of a topic that
// allows unclean election gets an unclean election, at most
// MaxElectionsPerImbalance records; more reports whether to run again.
func ElectUncleanLeaders(op Op) (recs []Record, more bool) {
	im := op.Image
	for tp := range im.LeaderlessPartitions() {
		if len(recs) >= MaxElectionsPerImbalance {
			break
		}
		t, _, ok := lookup(im, tp)
		if !ok {
			continue
		}
		if !configs.UncleanLeaderElection(configs.TopicLayers(im, op.Settings.Static, op.Settings.NodeID, t.Name())) {
			continue
		}
		r, _ := electLeader(op, t.Name(), tp.Partition, partitionchange.Unclean)
		recs = append(recs, r...)
	}
	return recs, len(recs) >= MaxElectionsPerImbalance
}

func lookup(im *image.Image, tp image.TopicPartition) (*image.Topic, image.Partition, bool) {
	t, ok := im.Topic(uuid.UUID(tp.TopicID))
	if !ok {
		return nil, image.Partition{}, false
	}
	p, ok := t.Partition(tp.Partition)
	return t, p, ok
}
