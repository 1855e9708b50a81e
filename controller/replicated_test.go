package controller_test

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller"
	"github.com/kraftd/kraftd/controller/cluster"
	"github.com/kraftd/kraftd/controller/controllertest"
	"github.com/kraftd/kraftd/image"
)

// serveCommitted serves req on node id and lets the quorum commit what it
// appended; the answer must come only then.
func serveCommitted(t *testing.T, c *controllertest.Cluster, id int32, req kmsg.Request) kmsg.Response {
	t.Helper()
	var a answer
	c.Serve(id, request(req, &a))
	c.Do("stabilize")
	c.Do("stabilize")
	if a.n != 1 || a.resp == nil {
		t.Fatalf("%s answered %+v", kmsg.NameForKey(req.Key()), a)
	}
	return a.resp
}

// threeBrokers registers brokers 1-3 and unfences them; it returns their
// epochs.
func threeBrokers(t *testing.T, c *controllertest.Cluster, lead int32) map[int32]int64 {
	t.Helper()
	epochs := map[int32]int64{}
	for id := int32(1); id <= 3; id++ {
		resp := serveCommitted(t, c, lead, registration(id)).(*kmsg.BrokerRegistrationResponse)
		if resp.ErrorCode != 0 {
			t.Fatalf("registering broker %d: %+v", id, resp)
		}
		epochs[id] = resp.BrokerEpoch
	}
	for id := int32(1); id <= 3; id++ {
		hb := kmsg.NewPtrBrokerHeartbeatRequest()
		hb.Version = 1
		hb.BrokerID, hb.BrokerEpoch = id, epochs[id]
		hb.CurrentMetadataOffset = c.App(lead).Image().Provenance().Offset
		r := serveCommitted(t, c, lead, hb).(*kmsg.BrokerHeartbeatResponse)
		if r.ErrorCode != 0 || r.IsFenced {
			t.Fatalf("heartbeat of broker %d: %+v", id, r)
		}
	}
	return epochs
}

func createTopic(name string, partitions int32, rf int16) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	req.TimeoutMillis = 30000
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, partitions, rf
	req.Topics = append(req.Topics, t)
	return req
}

// CreateTopics is answered once its records commit, with the topic in
// every node's image; AlterPartition from the partition leader shrinks
// the ISR; DeleteTopics removes the topic.
func TestActiveTopicLifecycle(t *testing.T) {
	c, lead := activeCluster(t)
	epochs := threeBrokers(t, c, lead)

	var a answer
	c.Serve(lead, request(createTopic("events", 2, 3), &a))
	if a.n != 0 {
		t.Fatalf("CreateTopics answered before its records committed: %+v", a)
	}
	c.Do("stabilize")
	c.Do("stabilize")
	ct, ok := a.resp.(*kmsg.CreateTopicsResponse)
	if a.n != 1 || !ok || len(ct.Topics) != 1 || ct.Topics[0].ErrorCode != 0 || ct.Topics[0].NumPartitions != 2 || ct.Topics[0].ReplicationFactor != 3 {
		t.Fatalf("CreateTopics answered %+v", a)
	}
	for id := int32(1); id <= 3; id++ {
		top, ok := c.App(id).Image().TopicByName("events")
		if !ok || top.ID() != ct.Topics[0].TopicID || top.PartitionCount() != 2 {
			t.Fatalf("node %d: topic in the image %v %v", id, top, ok)
		}
	}
	again := serveCommitted(t, c, lead, createTopic("events", 1, 1)).(*kmsg.CreateTopicsResponse)
	if again.Topics[0].ErrorCode != kerr.TopicAlreadyExists.Code {
		t.Fatalf("creating it again: %+v", again.Topics[0])
	}

	lr := kmsg.NewPtrListPartitionReassignmentsRequest()
	if r := serveCommitted(t, c, lead, lr).(*kmsg.ListPartitionReassignmentsResponse); r.ErrorCode != 0 || len(r.Topics) != 0 {
		t.Fatalf("ListPartitionReassignments answered %+v", r)
	}

	top, _ := c.App(lead).Image().TopicByName("events")
	p, _ := top.Partition(0)
	leader := p.Leader()
	var isr []int32
	for _, r := range p.ISR() {
		if r == leader || len(isr) == 0 {
			isr = append(isr, r)
		}
	}
	if !slices.Contains(isr, leader) {
		isr = append(isr, leader)
	}
	ap := kmsg.NewPtrAlterPartitionRequest()
	ap.Version = 3
	ap.BrokerID, ap.BrokerEpoch = leader, epochs[leader]
	apt := kmsg.NewAlterPartitionRequestTopic()
	apt.TopicID = top.ID()
	app := kmsg.NewAlterPartitionRequestTopicPartition()
	app.Partition, app.LeaderEpoch, app.PartitionEpoch = 0, p.LeaderEpoch(), p.PartitionEpoch()
	for _, b := range isr {
		s := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
		s.BrokerID, s.BrokerEpoch = b, epochs[b]
		app.NewEpochISR = append(app.NewEpochISR, s)
	}
	apt.Partitions = append(apt.Partitions, app)
	ap.Topics = append(ap.Topics, apt)
	apr := serveCommitted(t, c, lead, ap).(*kmsg.AlterPartitionResponse)
	if apr.ErrorCode != 0 || len(apr.Topics) != 1 || apr.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("AlterPartition answered %+v", apr)
	}
	top, _ = c.App(lead).Image().TopicByName("events")
	if p, _ := top.Partition(0); !slices.Equal(p.ISR(), isr) {
		t.Fatalf("ISR after AlterPartition %v, want %v", p.ISR(), isr)
	}

	del := kmsg.NewPtrDeleteTopicsRequest()
	del.Version = 6
	dt := kmsg.NewDeleteTopicsRequestTopic()
	name := "events"
	dt.Topic = &name
	del.Topics = append(del.Topics, dt)
	dr := serveCommitted(t, c, lead, del).(*kmsg.DeleteTopicsResponse)
	if len(dr.Topics) != 1 || dr.Topics[0].ErrorCode != 0 {
		t.Fatalf("DeleteTopics answered %+v", dr)
	}
	for id := int32(1); id <= 3; id++ {
		if _, ok := c.App(id).Image().TopicByName("events"); ok {
			t.Fatalf("node %d still has the deleted topic", id)
		}
	}
}

// A standby answers the topic apis NOT_CONTROLLER.
func TestStandbyNotControllerForTopics(t *testing.T) {
	c, lead := activeCluster(t)
	other := lead%3 + 1
	var a answer
	c.Serve(other, request(createTopic("events", 1, 1), &a))
	if a.n != 1 || a.code != kerr.NotController.Code {
		t.Fatalf("standby answered %+v", a)
	}
}

// IncrementalAlterConfigs sets a topic's config once its record commits;
// a missing topic is refused alone, after validation.
func TestActiveIncrementalAlterConfigs(t *testing.T) {
	c, lead := activeCluster(t)
	threeBrokers(t, c, lead)
	if r := serveCommitted(t, c, lead, createTopic("events", 1, 3)).(*kmsg.CreateTopicsResponse); r.Topics[0].ErrorCode != 0 {
		t.Fatalf("CreateTopics: %+v", r.Topics[0])
	}
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.Version = 1
	for _, name := range []string{"events", "missing"} {
		res := kmsg.NewIncrementalAlterConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, name
		cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		v := "60000"
		cfg.Name, cfg.Op, cfg.Value = "retention.ms", kmsg.IncrementalAlterConfigOpSet, &v
		res.Configs = append(res.Configs, cfg)
		req.Resources = append(req.Resources, res)
	}
	resp := serveCommitted(t, c, lead, req).(*kmsg.IncrementalAlterConfigsResponse)
	if len(resp.Resources) != 2 || resp.Resources[0].ErrorCode != 0 || resp.Resources[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("IncrementalAlterConfigs answered %+v", resp.Resources)
	}
	for id := int32(1); id <= 3; id++ {
		if v, ok := c.App(id).Image().Config(2, "events", "retention.ms"); !ok || v != "60000" {
			t.Fatalf("node %d: retention.ms %q %v", id, v, ok)
		}
	}
}

// CreatePartitions grows a topic and AllocateProducerIds hands a broker a
// block, each answered on commit.
func TestActivePartitionsAndProducerIDs(t *testing.T) {
	c, lead := activeCluster(t)
	epochs := threeBrokers(t, c, lead)
	serveCommitted(t, c, lead, createTopic("events", 1, 2))
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.Version = 3
	cpt := kmsg.NewCreatePartitionsRequestTopic()
	cpt.Topic, cpt.Count = "events", 3
	cp.Topics = append(cp.Topics, cpt)
	if r := serveCommitted(t, c, lead, cp).(*kmsg.CreatePartitionsResponse); len(r.Topics) != 1 || r.Topics[0].ErrorCode != 0 {
		t.Fatalf("CreatePartitions answered %+v", r)
	}
	if top, _ := c.App(lead).Image().TopicByName("events"); top.PartitionCount() != 3 {
		t.Fatalf("partitions after CreatePartitions: %d", top.PartitionCount())
	}

	before := max(c.App(lead).Image().NextProducerID(), 0)
	pid := kmsg.NewPtrAllocateProducerIDsRequest()
	pid.BrokerID, pid.BrokerEpoch = 2, epochs[2]
	r := serveCommitted(t, c, lead, pid).(*kmsg.AllocateProducerIDsResponse)
	if r.ErrorCode != 0 || r.ProducerIDStart != before || r.ProducerIDLen <= 0 {
		t.Fatalf("AllocateProducerIds answered %+v (next id was %d)", r, before)
	}
	for id := int32(1); id <= 3; id++ {
		if got := c.App(id).Image().NextProducerID(); got != before+int64(r.ProducerIDLen) {
			t.Fatalf("node %d: next producer id %d, want %d", id, got, before+int64(r.ProducerIDLen))
		}
	}
}

// The periodic preferred leader election moves leadership back to the
// preferred replica once it is unfenced again; ElectLeaders then finds
// nothing to do.
func TestActivePeriodicPreferredElection(t *testing.T) {
	c := controllertest.New(t, controller.Options{MaxBytesBetweenSnapshots: 1 << 20, Active: &controller.ActiveOptions{
		Cluster:                      cluster.Settings{ClusterID: "test-cluster", SessionTimeout: 9 * time.Second},
		MaxIdleInterval:              controller.DefaultMaxIdleInterval,
		AutoLeaderRebalance:          true,
		LeaderImbalanceCheckInterval: 30 * time.Second,
		Seed:                         7,
	}})
	c.Do("add-nodes", "3")
	c.Do("stabilize")
	c.Do("tick", "1", "2s")
	for range 3 {
		c.Do("stabilize")
	}
	lead := c.Leader()
	epochs := threeBrokers(t, c, lead)
	serveCommitted(t, c, lead, createTopic("events", 1, 3))
	partition := func() image.Partition {
		top, _ := c.App(lead).Image().TopicByName("events")
		p, _ := top.Partition(0)
		return p
	}
	preferred := partition().Replicas()[0]
	heartbeat := func(id int32) {
		hb := kmsg.NewPtrBrokerHeartbeatRequest()
		hb.Version = 1
		hb.BrokerID, hb.BrokerEpoch = id, epochs[id]
		hb.CurrentMetadataOffset = c.App(lead).Image().Provenance().Offset
		var a answer
		r := request(hb, &a)
		r.Arrived = c.Env.Now(lead)
		c.Serve(lead, r)
	}
	others := func() {
		for id := int32(1); id <= 3; id++ {
			if id != preferred {
				heartbeat(id)
			}
		}
	}
	node := controllertest.Ids(lead)[0]
	// The preferred leader's session expires: it is fenced and loses the lead.
	for range 12 {
		others()
		c.Do("tick", node, "1s")
		c.Do("stabilize")
	}
	if l := partition().Leader(); l == preferred || l < 0 {
		t.Fatalf("leader %d after the preferred replica %d was fenced", l, preferred)
	}
	heartbeat(preferred)
	c.Do("stabilize")
	c.Do("stabilize")
	if b, _ := c.App(lead).Image().Broker(preferred); b == nil || b.Fenced {
		t.Fatalf("broker %d still fenced", preferred)
	}
	// The leader takes it back into the ISR, as a broker does once it caught up.
	alterISR(t, c, lead, epochs, "events", append(partition().ISR(), preferred))
	if p := partition(); p.Leader() == preferred || !slices.Contains(p.ISR(), preferred) {
		t.Fatalf("after the ISR change: leader %d ISR %v", p.Leader(), p.ISR())
	}
	for range 20 {
		for id := int32(1); id <= 3; id++ {
			heartbeat(id)
		}
		c.Do("tick", node, "1s")
		c.Do("stabilize")
	}
	if l := partition().Leader(); l != preferred {
		t.Fatalf("leader %d 20 s after the preferred replica %d came back (check every 30 s from activation)", l, preferred)
	}
	el := kmsg.NewPtrElectLeadersRequest()
	el.Version, el.ElectionType = 2, 0
	et := kmsg.NewElectLeadersRequestTopic()
	et.Topic, et.Partitions = "events", []int32{0}
	el.Topics = append(el.Topics, et)
	er := serveCommitted(t, c, lead, el).(*kmsg.ElectLeadersResponse)
	if len(er.Topics) != 1 || len(er.Topics[0].Partitions) != 1 || er.Topics[0].Partitions[0].ErrorCode != kerr.ElectionNotNeeded.Code {
		t.Fatalf("ElectLeaders of a partition led by its preferred replica answered %+v", er)
	}
}

// alterISR sends the partition leader's AlterPartition setting partition
// 0's ISR to isr.
func alterISR(t *testing.T, c *controllertest.Cluster, lead int32, epochs map[int32]int64, topic string, isr []int32) {
	t.Helper()
	top, _ := c.App(lead).Image().TopicByName(topic)
	p, _ := top.Partition(0)
	ap := kmsg.NewPtrAlterPartitionRequest()
	ap.Version = 3
	ap.BrokerID, ap.BrokerEpoch = p.Leader(), epochs[p.Leader()]
	apt := kmsg.NewAlterPartitionRequestTopic()
	apt.TopicID = top.ID()
	app := kmsg.NewAlterPartitionRequestTopicPartition()
	app.Partition, app.LeaderEpoch, app.PartitionEpoch = 0, p.LeaderEpoch(), p.PartitionEpoch()
	for _, b := range isr {
		s := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
		s.BrokerID, s.BrokerEpoch = b, epochs[b]
		app.NewEpochISR = append(app.NewEpochISR, s)
	}
	apt.Partitions = append(apt.Partitions, app)
	ap.Topics = append(ap.Topics, apt)
	r := serveCommitted(t, c, lead, ap).(*kmsg.AlterPartitionResponse)
	if r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("AlterPartition to ISR %v answered %+v", isr, r)
	}
}
