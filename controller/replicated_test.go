package controller_test

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/controllertest"
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
