package replication

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/configs"
	"github.com/kraftd/kraftd/controller/internal/jvmorder"
	"github.com/kraftd/kraftd/controller/partitionchange"
	"github.com/kraftd/kraftd/controller/placement"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// MaxPartitionsPerRequest bounds the partitions one CreateTopics or
// CreatePartitions request may create (Kafka's MAX_RECORDS_PER_USER_OP).
const MaxPartitionsPerRequest = 10000

// ClusterMetadataTopic is the raft log's own topic, which no one may create.
const ClusterMetadataTopic = "__cluster_metadata"

// CreateTopics answers a CreateTopics request (api 19) as Kafka 4.4.0's
// controller does: ControllerApis takes out names given twice and the
// metadata topic, then ReplicationControlManager.createTopics validates and
// creates the rest. describable says which topics the principal may see the
// configs of (nil: all); authorization to create is the caller's, which
// answers refused topics itself and leaves them out of req.
//
// The result is atomic. With ValidateOnly it has no records and the same
// answer.
func CreateTopics(op Op, req *kmsg.CreateTopicsRequest, describable func(string) bool) Result[*kmsg.CreateTopicsResponse] {
	resp := kmsg.NewPtrCreateTopicsResponse()
	resp.Version = req.Version

	// ControllerApis: names given twice are refused (each once, in the
	// order of a HashSet<String>), and so is the metadata topic.
	seen := map[string]bool{}
	dup := map[string]bool{}
	dupOrder := jvmorder.NewHashMap[string]()
	for _, t := range req.Topics {
		if dup[t.Topic] {
			continue
		}
		if seen[t.Topic] {
			dup[t.Topic] = true
			dupOrder.Put(t.Topic, jvmorder.StringHash(t.Topic))
		}
		seen[t.Topic] = true
	}
	var topics []kmsg.CreateTopicsRequestTopic
	for _, t := range req.Topics {
		if !dup[t.Topic] && t.Topic != ClusterMetadataTopic {
			topics = append(topics, t)
		}
	}

	// A request for too many partitions fails whole: every topic of the
	// original request answers the error.
	if err := checkTotalPartitions(topics, op.Settings.DefaultNumPartitions); err != nil {
		return Result[*kmsg.CreateTopicsResponse]{Atomic: true, Response: createTopicsFailed(req, err)}
	}

	recs, results := createTopics(op, topics, describable)
	if len(recs) > MaxRecordsPerRequest {
		return Result[*kmsg.CreateTopicsResponse]{Atomic: true, Response: createTopicsFailed(req, errBatchTooLarge)}
	}
	resp.Topics = results
	for _, name := range dupOrder.Keys() {
		r := newTopicResult()
		r.Topic = name
		r.ErrorCode = kerr.InvalidRequest.Code
		r.ErrorMessage = strp("Duplicate topic name.")
		resp.Topics = append(resp.Topics, r)
	}
	if seen[ClusterMetadataTopic] && !dup[ClusterMetadataTopic] {
		r := newTopicResult()
		r.Topic = ClusterMetadataTopic
		r.ErrorCode = kerr.InvalidRequest.Code
		r.ErrorMessage = strp("Creation of internal topic " + ClusterMetadataTopic + " is prohibited.")
		resp.Topics = append(resp.Topics, r)
	}
	if req.ValidateOnly {
		recs = nil
	}
	return Result[*kmsg.CreateTopicsResponse]{Records: recs, Atomic: true, Response: resp}
}

// createTopicsFailed is the answer to a request that failed whole: every
// topic of the request with the error.
func createTopicsFailed(req *kmsg.CreateTopicsRequest, err *Error) *kmsg.CreateTopicsResponse {
	resp := kmsg.NewPtrCreateTopicsResponse()
	resp.Version = req.Version
	for _, t := range req.Topics {
		r := newTopicResult()
		r.Topic = t.Topic
		r.ErrorCode = err.Code
		r.ErrorMessage = strp(err.Message)
		resp.Topics = append(resp.Topics, r)
	}
	return resp
}

// checkTotalPartitions is validateTotalNumberOfPartitions: -1 counts as the
// default, other non-positive counts as nothing, manual assignments by
// their number.
func checkTotalPartitions(topics []kmsg.CreateTopicsRequestTopic, defaultNum int32) *Error {
	var total int64
	for _, t := range topics {
		switch {
		case len(t.ReplicaAssignment) > 0:
			total += int64(len(t.ReplicaAssignment))
		case t.NumPartitions == -1:
			total += int64(defaultNum)
		case t.NumPartitions > 0:
			total += int64(t.NumPartitions)
		}
	}
	if total > MaxPartitionsPerRequest {
		return &Error{Code: kerr.PolicyViolation.Code, Message: "Excessively large number of partitions per request."}
	}
	return nil
}

// createTopics is ReplicationControlManager.createTopics over the topics
// left after ControllerApis' checks (no name twice).
func createTopics(op Op, topics []kmsg.CreateTopicsRequestTopic, describable func(string) bool) ([]Record, []kmsg.CreateTopicsResponseTopic) {
	im := op.Image
	errs := map[string]*Error{}
	// Names: Topic.validate, then the '.' and '_' collision (which wins).
	for _, t := range topics {
		if err := configs.ValidateTopicName(t.Topic); err != nil {
			errs[t.Topic] = &Error{Code: err.Err.Code, Message: err.Message}
		}
		if strings.ContainsAny(t.Topic, "._") {
			for other := range im.CollidingTopics(t.Topic) {
				errs[t.Topic] = &Error{Code: kerr.InvalidTopicException.Code,
					Message: "Topic '" + t.Topic + "' collides with existing topic: " + other}
				break
			}
		}
	}
	for _, t := range topics {
		if _, ok := im.TopicByName(t.Topic); ok {
			errs[t.Topic] = &Error{Code: kerr.TopicAlreadyExists.Code, Message: "Topic '" + t.Topic + "' already exists."}
		}
	}
	// Null config values are refused before any topic is created.
	for _, t := range topics {
		if errs[t.Topic] != nil {
			continue
		}
		var nulls []string
		for _, c := range t.Configs {
			if c.Value == nil {
				nulls = append(nulls, c.Name)
			}
		}
		if len(nulls) > 0 {
			errs[t.Topic] = &Error{Code: kerr.InvalidConfig.Code,
				Message: "Null value not supported for topic configs: " + strings.Join(nulls, ",")}
		}
	}

	var recs []Record
	ok := map[string]kmsg.CreateTopicsResponseTopic{}
	for _, t := range topics {
		if errs[t.Topic] != nil {
			continue
		}
		r, res, err := createTopic(op, t, describable == nil || describable(t.Topic))
		if err != nil {
			errs[t.Topic] = err
			continue
		}
		recs = append(recs, r...)
		ok[t.Topic] = res
	}

	out := make([]kmsg.CreateTopicsResponseTopic, 0, len(topics))
	for _, t := range topics {
		if err := errs[t.Topic]; err != nil {
			r := newTopicResult()
			r.Topic = t.Topic
			r.ErrorCode = err.Code
			r.ErrorMessage = strp(err.Message)
			out = append(out, r)
			continue
		}
		out = append(out, ok[t.Topic])
	}
	return recs, out
}

// newPartition is a partition to create: its replicas, their directories
// and its ISR (the active replicas, in replica order; the first leads).
type newPartition struct {
	replicas []int32
	dirs     []uuid.UUID
	isr      []int32
}

func activeReplicas(im *image.Image, replicas []int32) []int32 {
	var isr []int32
	for _, r := range replicas {
		if partitionchange.IsActive(im, r) {
			isr = append(isr, r)
		}
	}
	return isr
}

// createTopic is ReplicationControlManager.createTopic for one topic whose
// name passed: its configs, then its partitions, manual or placed.
func createTopic(op Op, t kmsg.CreateTopicsRequestTopic, describable bool) ([]Record, kmsg.CreateTopicsResponseTopic, *Error) {
	im := op.Image
	var res kmsg.CreateTopicsResponseTopic
	cfgOps := make([]configs.Op, 0, len(t.Configs))
	creation := map[string]string{}
	for _, c := range t.Configs {
		cfgOps = append(cfgOps, configs.Op{Name: c.Name, Op: configs.OpSet, Value: c.Value})
		if c.Value != nil { // refused below, with every such name
			creation[c.Name] = *c.Value
		}
	}
	mv, _ := im.MetadataVersion()
	elr := im.ELREnabled()
	cfgRecs, cerr := configs.CreateTopicRecords(t.Topic, cfgOps, configs.Context{
		Server:                     configs.ServerLogConfigFromStatic(op.Settings.Static),
		ELR:                        elr,
		CordonedLogDirsUnsupported: !mv.Has(metadata.GateCordonedLogDirs),
	})
	if cerr != nil {
		return nil, res, &Error{Code: cerr.Err.Code, Message: cerr.Message}
	}

	var parts []newPartition
	if len(t.ReplicaAssignment) > 0 {
		if t.ReplicationFactor != -1 {
			return nil, res, &Error{Code: kerr.InvalidRequest.Code,
				Message: "A manual partition assignment was specified, but replication factor was not set to -1."}
		}
		if t.NumPartitions != -1 {
			return nil, res, &Error{Code: kerr.InvalidRequest.Code,
				Message: "A manual partition assignment was specified, but numPartitions was not set to -1."}
		}
		byIndex := map[int32]newPartition{}
		rf := -1
		for _, a := range t.ReplicaAssignment {
			if _, dup := byIndex[a.Partition]; dup {
				return nil, res, invalidAssignment("Found multiple manual partition assignments for partition %d", a.Partition)
			}
			if err := validateManualAssignment(im, a.Replicas, rf); err != nil {
				return nil, res, err
			}
			rf = len(a.Replicas)
			isr := activeReplicas(im, a.Replicas)
			if len(isr) == 0 {
				return nil, res, invalidAssignment("All brokers specified in the manual partition assignment for partition %d are fenced or in controlled shutdown.", a.Partition)
			}
			byIndex[a.Partition] = newPartition{slices.Clone(a.Replicas), placement.DefaultDirs(im, a.Replicas), isr}
		}
		for i := range int32(len(byIndex)) {
			p, ok := byIndex[i]
			if !ok {
				return nil, res, invalidAssignment("partitions should be a consecutive 0-based integer sequence")
			}
			parts = append(parts, p)
		}
	} else if t.ReplicationFactor < -1 || t.ReplicationFactor == 0 {
		return nil, res, &Error{Code: kerr.InvalidReplicationFactor.Code,
			Message: "Replication factor must be larger than 0, or -1 to use the default value."}
	} else if t.NumPartitions < -1 || t.NumPartitions == 0 {
		return nil, res, &Error{Code: kerr.InvalidPartitions.Code,
			Message: "Number of partitions was set to an invalid non-positive value."}
	} else {
		n, rf := t.NumPartitions, t.ReplicationFactor
		if n == -1 {
			n = op.Settings.DefaultNumPartitions
		}
		if rf == -1 {
			rf = op.Settings.DefaultReplicationFactor
		}
		var err *Error
		if parts, err = place(op, 0, n, rf); err != nil {
			return nil, res, err
		}
	}

	id := newTopicID(op.NewUUID)
	res = newTopicResult()
	res.Topic = t.Topic
	res.TopicID = id
	if describable {
		l := configs.TopicLayers(im, op.Settings.Static, op.Settings.NodeID, t.Topic)
		l.Topic = creation
		res.Configs = configs.CreateTopicsConfigs(l)
		res.NumPartitions = int32(len(parts))
		res.ReplicationFactor = int16(len(parts[0].replicas))
	} else {
		res.ConfigErrorCode = kerr.TopicAuthorizationFailed.Code
	}

	recs := []Record{{&metadata.TopicRecord{Name: t.Topic, TopicId: id}, 0}}
	for i := range cfgRecs {
		recs = append(recs, Record{&cfgRecs[i], 0})
	}
	for _, c := range configs.ClearElrRecords(cfgRecs, elr) {
		recs = append(recs, Record{&c, 0})
	}
	for i, p := range parts {
		recs = append(recs, partitionRecord(mv, id, int32(i), p))
	}
	return recs, res, nil
}

// place puts n new partitions of rf replicas, the first numbered start,
// on the usable brokers; every partition must have an active replica.
func place(op Op, start, n int32, rf int16) ([]newPartition, *Error) {
	im := op.Image
	lists, err := placement.Place(placement.Spec{StartPartition: start, NumPartitions: n, NumReplicas: rf},
		placement.UsableBrokers(im, op.ShuttingDown), op.Random)
	if err != nil {
		pe := err.(*placement.Error)
		return nil, &Error{Code: pe.Code, Message: placement.CreateTopicsMessage(rf, pe)}
	}
	parts := make([]newPartition, 0, len(lists))
	for _, r := range lists {
		isr := activeReplicas(im, r)
		if len(isr) == 0 {
			return nil, &Error{Code: kerr.InvalidReplicationFactor.Code, Message: placement.NoActiveReplicasMessage(rf)}
		}
		parts = append(parts, newPartition{r, placement.DefaultDirs(im, r), isr})
	}
	return parts, nil
}

// partitionRecord is a new partition's PartitionRecord at the
// metadata.version's version (PartitionRegistration.toRecord): epochs 0,
// no reassignment, no ELR, directories when the version has them.
func partitionRecord(mv metadata.Level, topic uuid.UUID, index int32, p newPartition) Record {
	r := metadata.NewPartitionRecord()
	r.PartitionId = index
	r.TopicId = topic
	r.Replicas = p.replicas
	r.Isr = p.isr
	r.RemovingReplicas = []int32{}
	r.AddingReplicas = []int32{}
	r.Leader = p.isr[0]
	r.LeaderEpoch = 0
	r.PartitionEpoch = 0
	if mv.Has(metadata.GateDirectoryAssignment) {
		r.Directories = make([][16]byte, len(p.dirs))
		for i, d := range p.dirs {
			r.Directories[i] = d
		}
	}
	v, _ := mv.RecordVersion(r.APIKey())
	return Record{r, v}
}

func invalidAssignment(format string, args ...any) *Error {
	return &Error{Code: kerr.InvalidReplicaAssignment.Code, Message: sprintf(format, args...)}
}

// validateManualAssignment is validateManualPartitionAssignment: a
// non-empty list of registered brokers with a directory that is not
// cordoned, none twice (checked in id order), as many as the partitions
// before (rf, or -1 for the first).
func validateManualAssignment(im *image.Image, replicas []int32, rf int) *Error {
	if len(replicas) == 0 {
		return invalidAssignment("The manual partition assignment includes an empty replica list.")
	}
	sorted := slices.Sorted(slices.Values(replicas))
	for i, id := range sorted {
		b, ok := im.Broker(id)
		if !ok {
			return invalidAssignment("The manual partition assignment includes broker %d, but no such broker is registered.", id)
		}
		if !placement.HasUncordonedDir(b) {
			return invalidAssignment("The manual partition assignment includes broker %d, but all its log directories are cordoned.", id)
		}
		if i > 0 && sorted[i-1] == id {
			return invalidAssignment("The manual partition assignment includes the broker %d more than once.", id)
		}
	}
	if rf >= 0 && len(sorted) != rf {
		return invalidAssignment("The manual partition assignment includes a partition with %d replica(s), but this is not consistent with previous partitions, which have %d replica(s).", len(sorted), rf)
	}
	return nil
}

// newTopicResult is a CreatableTopicResult as Kafka starts one: no
// partitions or replication factor (-1) and an empty, not null, Configs.
func newTopicResult() kmsg.CreateTopicsResponseTopic {
	r := kmsg.NewCreateTopicsResponseTopic()
	r.Configs = []kmsg.CreateTopicsResponseTopicConfig{}
	return r
}
