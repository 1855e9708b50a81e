package replication

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/placement"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

func createReq(names ...string) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	for _, n := range names {
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = n, 2, -1
		req.Topics = append(req.Topics, t)
	}
	return req
}

type topicAnswer struct {
	name string
	code int16
	msg  string
}

func createAnswers(resp *kmsg.CreateTopicsResponse) []topicAnswer {
	var out []topicAnswer
	for _, t := range resp.Topics {
		m := ""
		if t.ErrorMessage != nil {
			m = *t.ErrorMessage
		}
		out = append(out, topicAnswer{t.Topic, t.ErrorCode, m})
	}
	return out
}

// Names given twice and the metadata topic are refused by the API layer,
// after the topics the controller answers.
func TestCreateTopicsDuplicatesAndMetadataTopic(t *testing.T) {
	c := newCluster(t, true)
	c.broker(1, 10, false)
	res := CreateTopics(c.op(), createReq("a", "a", "__cluster_metadata", "b", "a"), nil)
	want := []topicAnswer{
		{"b", 0, ""},
		{"a", kerr.InvalidRequest.Code, "Duplicate topic name."},
		{"__cluster_metadata", kerr.InvalidRequest.Code, "Creation of internal topic __cluster_metadata is prohibited."},
	}
	if got := createAnswers(res.Response); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if !res.Atomic || len(res.Records) != 3 {
		t.Fatalf("records %d atomic %v", len(res.Records), res.Atomic)
	}
}

// The records of a created topic: its id from the injected source (past
// the reserved ids and those printing with a leading '-'), its configs
// after the TopicRecord, partitions led by their first active replica with
// the active replicas in sync, in their brokers' directories.
func TestCreateTopicsRecords(t *testing.T) {
	c := newCluster(t, true)
	c.broker(1, 10, true) // fenced: a replica, never in the ISR
	c.broker(2, 10, false)
	op := c.op()
	draws := []uuid.UUID{{}, {15: 1}, {0xfb}, {0x12, 15: 7}}
	op.NewUUID = func() uuid.UUID { u := draws[0]; draws = draws[1:]; return u }
	req := createReq("t")
	req.Topics[0].NumPartitions, req.Topics[0].ReplicationFactor = 1, 2
	req.Topics[0].Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "min.insync.replicas", Value: strp("2")}}
	res := CreateTopics(op, req, nil)
	if r := res.Response.Topics[0]; r.ErrorCode != 0 || r.TopicID != [16]byte{0x12, 15: 7} || r.NumPartitions != 1 || r.ReplicationFactor != 2 || len(r.Configs) == 0 {
		t.Fatalf("answer %+v", r)
	}
	if len(res.Records) != 4 {
		t.Fatalf("%d records", len(res.Records))
	}
	if _, ok := res.Records[1].Record.(*metadata.ConfigRecord); !ok {
		t.Fatalf("second record %T", res.Records[1].Record)
	}
	if _, ok := res.Records[2].Record.(*metadata.ClearElrRecord); !ok {
		t.Fatalf("third record %T", res.Records[2].Record)
	}
	p := res.Records[3].Record.(*metadata.PartitionRecord)
	if !reflect.DeepEqual(p.Isr, []int32{2}) || p.Leader != 2 || len(p.Replicas) != 2 || res.Records[3].Version != 2 {
		t.Fatalf("partition %+v", p)
	}
	for i, r := range p.Replicas {
		if p.Directories[i] != dir(r) {
			t.Fatalf("directories %v for %v", p.Directories, p.Replicas)
		}
	}
	// validateOnly: the same answer, no records.
	req.ValidateOnly = true
	if res := CreateTopics(c.op(), req, nil); len(res.Records) != 0 || res.Response.Topics[0].ErrorCode != 0 {
		t.Fatalf("validateOnly: %+v", res)
	}
}

// Over 10,000 partitions in a request fail it whole.
func TestCreateTopicsTooManyPartitions(t *testing.T) {
	c := newCluster(t, false)
	c.broker(1, 10, false)
	req := createReq("a", "b")
	req.Topics[0].NumPartitions, req.Topics[1].NumPartitions = 5000, 5001
	res := CreateTopics(c.op(), req, nil)
	for _, a := range createAnswers(res.Response) {
		if a.code != kerr.PolicyViolation.Code || a.msg != "Excessively large number of partitions per request." {
			t.Fatalf("%+v", a)
		}
	}
	if len(res.Records) != 0 {
		t.Fatal("records written")
	}
}

func TestCreateTopicsManualAssignment(t *testing.T) {
	c := newCluster(t, false)
	c.broker(1, 10, false)
	c.broker(2, 10, true)
	cases := []struct {
		assign [][]int32
		code   int16
		msg    string
	}{
		{[][]int32{{1, 2}, {2, 1}}, 0, ""},
		{[][]int32{{1, 1}}, kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes the broker 1 more than once."},
		{[][]int32{{1, 7}}, kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes broker 7, but no such broker is registered."},
		{[][]int32{{1}, {1, 2}}, kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes a partition with 2 replica(s), but this is not consistent with previous partitions, which have 1 replica(s)."},
		{[][]int32{{2}}, kerr.InvalidReplicaAssignment.Code, "All brokers specified in the manual partition assignment for partition 0 are fenced or in controlled shutdown."},
		{[][]int32{{}}, kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes an empty replica list."},
	}
	for _, tc := range cases {
		req := createReq("m")
		req.Topics[0].NumPartitions = -1
		for i, a := range tc.assign {
			req.Topics[0].ReplicaAssignment = append(req.Topics[0].ReplicaAssignment, kmsg.CreateTopicsRequestTopicReplicaAssignment{Partition: int32(i), Replicas: a})
		}
		got := createAnswers(CreateTopics(c.op(), req, nil).Response)[0]
		if got.code != tc.code || got.msg != tc.msg {
			t.Errorf("%v: got %+v", tc.assign, got)
		}
	}
}

func TestTopicIDDraws(t *testing.T) {
	draws := []uuid.UUID{{}, {15: 1}, {0xf8}, {0xf7, 1}}
	got := newTopicID(func() uuid.UUID { u := draws[0]; draws = draws[1:]; return u })
	if got != (uuid.UUID{0xf7, 1}) {
		t.Fatalf("got %v", got)
	}
}

func alterReq(version int16, broker int32, epoch int64, topic uuid.UUID, p kmsg.AlterPartitionRequestTopicPartition) *kmsg.AlterPartitionRequest {
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version, req.BrokerID, req.BrokerEpoch = version, broker, epoch
	req.Topics = []kmsg.AlterPartitionRequestTopic{{TopicID: topic, Partitions: []kmsg.AlterPartitionRequestTopicPartition{p}}}
	return req
}

// The leader shrinks its ISR: one PartitionChangeRecord, and the answer
// is the state after it.
func TestAlterPartition(t *testing.T) {
	c := newCluster(t, false)
	for id := int32(1); id <= 3; id++ {
		c.broker(id, 10, id == 3)
	}
	tid := uuid.UUID{7}
	c.topic("t", tid, part(1, 4, 6, []int32{1, 2, 3}, []int32{1, 2, 3}))
	ok := kmsg.AlterPartitionRequestTopicPartition{Partition: 0, LeaderEpoch: 4, PartitionEpoch: 6, NewISR: []int32{1, 2}}
	res := AlterPartition(c.op(), alterReq(2, 1, 10, tid, ok))
	p := res.Response.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.LeaderID != 1 || p.LeaderEpoch != 4 || p.PartitionEpoch != 7 || !reflect.DeepEqual(p.ISR, []int32{1, 2}) || len(res.Records) != 1 {
		t.Fatalf("answer %+v, %d records", p, len(res.Records))
	}

	checks := []struct {
		name   string
		broker int32
		epoch  int64
		mod    func(*kmsg.AlterPartitionRequestTopicPartition)
		code   int16
	}{
		{"stale broker epoch", 1, 9, nil, kerr.StaleBrokerEpoch.Code},
		{"unknown partition", 1, 10, func(p *kmsg.AlterPartitionRequestTopicPartition) { p.Partition = 5 }, kerr.UnknownTopicOrPartition.Code},
		{"newer leader epoch", 1, 10, func(p *kmsg.AlterPartitionRequestTopicPartition) { p.LeaderEpoch = 5 }, kerr.NotController.Code},
		{"older leader epoch", 1, 10, func(p *kmsg.AlterPartitionRequestTopicPartition) { p.LeaderEpoch = 3 }, kerr.FencedLeaderEpoch.Code},
		{"not the leader", 2, 10, nil, kerr.InvalidRequest.Code},
		{"older partition epoch", 1, 10, func(p *kmsg.AlterPartitionRequestTopicPartition) { p.PartitionEpoch = 5 }, kerr.InvalidUpdateVersion.Code},
		{"leader left out", 1, 10, func(p *kmsg.AlterPartitionRequestTopicPartition) { p.NewISR = []int32{2} }, kerr.InvalidRequest.Code},
		{"fenced replica", 1, 10, func(p *kmsg.AlterPartitionRequestTopicPartition) { p.NewISR = []int32{1, 3} }, kerr.IneligibleReplica.Code},
		{"recovering with two", 1, 10, func(p *kmsg.AlterPartitionRequestTopicPartition) { p.LeaderRecoveryState = 1 }, kerr.InvalidRequest.Code},
	}
	for _, tc := range checks {
		p := ok
		if tc.mod != nil {
			tc.mod(&p)
		}
		res := AlterPartition(c.op(), alterReq(2, tc.broker, tc.epoch, tid, p))
		code := res.Response.ErrorCode
		if code == 0 {
			code = res.Response.Topics[0].Partitions[0].ErrorCode
		}
		if code != tc.code || len(res.Records) != 0 {
			t.Errorf("%s: code %d, %d records", tc.name, code, len(res.Records))
		}
	}
	if res := AlterPartition(c.op(), alterReq(2, 1, 10, uuid.UUID{9}, ok)); res.Response.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("unknown topic id: %+v", res.Response)
	}
	// v3 broker epochs: -1 skips the check, a wrong one is ineligible.
	v3 := ok
	v3.NewISR = nil
	v3.NewEpochISR = []kmsg.AlterPartitionRequestTopicPartitionNewEpochISR{{BrokerID: 1, BrokerEpoch: -1}, {BrokerID: 2, BrokerEpoch: 8}}
	if res := AlterPartition(c.op(), alterReq(3, 1, 10, tid, v3)); res.Response.Topics[0].Partitions[0].ErrorCode != kerr.IneligibleReplica.Code {
		t.Fatalf("v3: %+v", res.Response)
	}
}

func TestAllocateProducerIDs(t *testing.T) {
	c := newCluster(t, false)
	c.broker(1, 10, false)
	res := AllocateProducerIDs(c.op(), &kmsg.AllocateProducerIDsRequest{BrokerID: 1, BrokerEpoch: 10})
	if res.Response.ProducerIDStart != 0 || res.Response.ProducerIDLen != 1000 || res.Records[0].Record.(*metadata.ProducerIdsRecord).NextProducerId != 1000 {
		t.Fatalf("first block: %+v", res)
	}
	c.add(res.Records[0].Record)
	if res := AllocateProducerIDs(c.op(), &kmsg.AllocateProducerIDsRequest{BrokerID: 1, BrokerEpoch: 10}); res.Response.ProducerIDStart != 1000 {
		t.Fatalf("second block: %+v", res.Response)
	}
	if res := AllocateProducerIDs(c.op(), &kmsg.AllocateProducerIDsRequest{BrokerID: 1, BrokerEpoch: 11}); res.Response.ErrorCode != kerr.StaleBrokerEpoch.Code || res.Records != nil {
		t.Fatalf("stale: %+v", res)
	}
	c.add(&metadata.ProducerIdsRecord{BrokerId: 1, BrokerEpoch: 10, NextProducerId: 9223372036854774808})
	if res := AllocateProducerIDs(c.op(), &kmsg.AllocateProducerIDsRequest{BrokerID: 1, BrokerEpoch: 10}); res.Response.ErrorCode != kerr.UnknownServerError.Code {
		t.Fatalf("exhausted: %+v", res.Response)
	}
}

func TestDeleteTopics(t *testing.T) {
	c := newCluster(t, false)
	c.broker(1, 10, false)
	a, b := uuid.UUID{0xa}, uuid.UUID{0xb}
	c.topic("a", a, part(1, 0, 0, []int32{1}, []int32{1}))
	c.topic("b", b, part(1, 0, 0, []int32{1}, []int32{1}))
	im := c.b.Image()
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 6
	topic := func(name *string, id uuid.UUID) kmsg.DeleteTopicsRequestTopic {
		return kmsg.DeleteTopicsRequestTopic{Topic: name, TopicID: id}
	}
	req.Topics = []kmsg.DeleteTopicsRequestTopic{
		topic(strp("a"), uuid.UUID{}), topic(nil, a), // a by name and by id
		topic(nil, b),
		topic(strp("x"), uuid.UUID{}), topic(nil, uuid.UUID{0xc}),
		topic(nil, uuid.UUID{}), topic(strp("bb"), b),
		topic(strp("d"), uuid.UUID{}), topic(strp("d"), uuid.UUID{}),
	}
	res := DeleteTopics(c.op(), im, req, nil)
	got := map[string]string{}
	for _, r := range res.Response.Topics {
		name := "<null>"
		if r.Topic != nil {
			name = *r.Topic
		}
		msg := ""
		if r.ErrorMessage != nil {
			msg = *r.ErrorMessage
		}
		got[name+"/"+uuid.UUID(r.TopicID).String()] = fmt.Sprintf("%d: %s", r.ErrorCode, msg)
	}
	want := map[string]string{
		"a/" + a.String():                   "42: The provided topic name maps to an ID that was already supplied.",
		"bb/" + b.String():                  "42: You may not specify both topic name and topic id.",
		"b/" + b.String():                   "0: ",
		"x/" + uuid.UUID{}.String():         "3: " + msgUnknownTopicOrPartition,
		"<null>/" + uuid.UUID{0xc}.String(): "100: " + msgUnknownTopicID,
		"<null>/" + uuid.UUID{}.String():    "42: Neither topic name nor id were specified.",
		"d/" + uuid.UUID{}.String():         "42: Duplicate topic name.",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
	// b by id alone is deleted (the name-and-id entry is refused apart).
	if len(res.Records) != 1 || res.Records[0].Record.(*metadata.RemoveTopicRecord).TopicId != b {
		t.Fatalf("records %+v", res.Records)
	}

	off := c.op()
	off.Settings.DeleteTopicEnable = false
	req.Version = 2
	req.TopicNames = []string{"a"}
	if r := DeleteTopics(off, im, req, nil); r.Response.Topics[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("disabled v2: %+v", r.Response)
	}
	req.Version = 3
	if r := DeleteTopics(off, im, req, nil); r.Response.Topics[0].ErrorCode != kerr.TopicDeletionDisabled.Code {
		t.Fatalf("disabled v3: %+v", r.Response)
	}
}

// A HashSet keeps its table when keys leave: the order Java 17 prints.
func TestJavaSetOrder(t *testing.T) {
	s := newStringSet()
	names := func(n int) string { return "topic-" + itoa(n) }
	for i := range 14 {
		s.add(names(i))
	}
	for i := range 10 {
		s.remove(names(i))
	}
	s.add("topic-3")
	s.add("zz")
	if got := strings.Join(s.keys(), ","); got != "zz,topic-10,topic-3,topic-11,topic-12,topic-13" {
		t.Fatalf("got %s", got)
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// The periodic tasks: a preferred election where the first replica is
// back, an unclean one where the topic allows it.
func TestPeriodicElections(t *testing.T) {
	c := newCluster(t, false)
	c.broker(1, 10, false)
	c.broker(2, 10, false)
	c.broker(3, 10, true)
	imb, ll := uuid.UUID{1}, uuid.UUID{2}
	c.topic("imbalanced", imb, part(2, 3, 3, []int32{1, 2}, []int32{1, 2}))
	c.topic("leaderless", ll, part(-1, 3, 3, []int32{3, 2}, []int32{3}))
	recs, more := BalanceLeaders(c.op())
	if more || len(recs) != 1 || recs[0].Record.(*metadata.PartitionChangeRecord).Leader != 1 {
		t.Fatalf("balance: %+v", recs)
	}
	if recs, _ := ElectUncleanLeaders(c.op()); len(recs) != 0 {
		t.Fatalf("unclean without the config: %+v", recs)
	}
	c.add(&metadata.ConfigRecord{ResourceType: 2, ResourceName: "leaderless", Name: "unclean.leader.election.enable", Value: strp("true")})
	recs, _ = ElectUncleanLeaders(c.op())
	if len(recs) != 1 {
		t.Fatalf("unclean: %+v", recs)
	}
	if r := recs[0].Record.(*metadata.PartitionChangeRecord); r.Leader != 2 || r.LeaderRecoveryState != 1 {
		t.Fatalf("unclean record %+v", r)
	}
}

func TestElectLeadersUnknownType(t *testing.T) {
	c := newCluster(t, false)
	req := kmsg.NewPtrElectLeadersRequest()
	req.Version, req.ElectionType = 1, 5
	req.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: "t", Partitions: []int32{0, 1}}}
	res := ElectLeaders(c.op(), req)
	if res.Response.ErrorCode != kerr.InvalidRequest.Code || *res.Response.Topics[0].Partitions[1].ErrorMessage != "Unknown election type 5" {
		t.Fatalf("%+v", res.Response)
	}
}

// A replica moves to one of the broker's directories: one record. Moved
// to a directory the broker does not have online, the replica also leaves
// the ISR and the leadership.
func TestAssignReplicasToDirs(t *testing.T) {
	c := newCluster(t, false)
	c.broker(1, 10, false)
	c.broker(2, 10, false)
	tid := uuid.UUID{7}
	c.topic("t", tid, part(1, 0, 0, []int32{1, 2}, []int32{1, 2}))
	req := func(d uuid.UUID, parts ...int32) *kmsg.AssignReplicasToDirsRequest {
		r := kmsg.NewPtrAssignReplicasToDirsRequest()
		r.BrokerID, r.BrokerEpoch = 1, 10
		topic := kmsg.AssignReplicasToDirsRequestDirectoryTopic{TopicID: tid}
		for _, p := range parts {
			topic.Partitions = append(topic.Partitions, kmsg.AssignReplicasToDirsRequestDirectoryTopicPartition{Partition: p})
		}
		r.Directories = []kmsg.AssignReplicasToDirsRequestDirectory{{ID: d, Topics: []kmsg.AssignReplicasToDirsRequestDirectoryTopic{topic}}}
		return r
	}
	// Already there: nothing to write.
	if res := AssignReplicasToDirs(c.op(), req(dir(1), 0)); len(res.Records) != 0 || res.Response.Directories[0].Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("same dir: %+v", res)
	}
	res := AssignReplicasToDirs(c.op(), req(uuid.UUID{0xe}, 0, 3))
	codes := []int16{res.Response.Directories[0].Topics[0].Partitions[0].ErrorCode, res.Response.Directories[0].Topics[0].Partitions[1].ErrorCode}
	if !reflect.DeepEqual(codes, []int16{0, kerr.UnknownTopicOrPartition.Code}) || len(res.Records) != 2 {
		t.Fatalf("offline dir: codes %v, %d records", codes, len(res.Records))
	}
	moved := res.Records[0].Record.(*metadata.PartitionChangeRecord)
	left := res.Records[1].Record.(*metadata.PartitionChangeRecord)
	if moved.Directories[0] != (uuid.UUID{0xe}) || left.Leader != 2 || !reflect.DeepEqual(left.Isr, []int32{2}) {
		t.Fatalf("records %+v %+v", moved, left)
	}
	stale := req(dir(1), 0)
	stale.BrokerEpoch = 9
	if res := AssignReplicasToDirs(c.op(), stale); res.Response.ErrorCode != kerr.StaleBrokerEpoch.Code {
		t.Fatalf("stale: %+v", res.Response)
	}
}

// A topic the principal may not describe answers without its configs.
func TestCreateTopicsNotDescribable(t *testing.T) {
	c := newCluster(t, false)
	c.broker(1, 10, false)
	r := CreateTopics(c.op(), createReq("hidden"), func(string) bool { return false }).Response.Topics[0]
	if r.ErrorCode != 0 || r.ConfigErrorCode != kerr.TopicAuthorizationFailed.Code || r.NumPartitions != -1 || len(r.Configs) != 0 {
		t.Fatalf("%+v", r)
	}
}

// Placed partitions before the first without an active replica are
// written although the topic answers an error, as Kafka 4.4.0 does. Here
// broker 2's registration says it is shutting down while the heartbeat
// tracker does not yet, so the placer uses it and it cannot be in an ISR.
func TestCreatePartitionsKeepsPartitionsBeforeAFailure(t *testing.T) {
	c := newCluster(t, false)
	c.broker(1, 10, false)
	r := metadata.NewRegisterBrokerRecord()
	r.BrokerId, r.BrokerEpoch, r.IncarnationId, r.Fenced, r.InControlledShutdown = 2, 10, uuid.UUID{1, 2}, false, true
	r.EndPoints = []metadata.RegisterBrokerRecordBrokerEndpoint{{Name: "PLAINTEXT", Host: "h", Port: 9002}}
	r.LogDirs = [][16]byte{dir(2)}
	c.add(r)
	tid := uuid.UUID{5}
	c.topic("t", tid, part(1, 0, 0, []int32{1}, []int32{1}))
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "t", Count: 12}}
	op := c.op()
	op.Random = placement.NewJavaRandom(987654321) // broker 1 leads the first new partition
	op.ShuttingDown = func(*image.Broker) bool { return false }
	res := CreatePartitions(op, req)
	if a := res.Response.Topics[0]; a.ErrorCode != kerr.InvalidReplicationFactor.Code || len(res.Records) == 0 || len(res.Records) >= 11 {
		t.Fatalf("answer %+v (%s) with %d records", a, *a.ErrorMessage, len(res.Records))
	}
	for i, rec := range res.Records {
		if p := rec.Record.(*metadata.PartitionRecord); p.PartitionId != int32(1+i) || p.Leader != 1 {
			t.Fatalf("record %d: %+v", i, p)
		}
	}
}
