package controller_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
)

// The apis kraftd does not implement are refused by the active controller
// with UNSUPPORTED_VERSION and a message, in every place Kafka's answer
// carries a code; token requests that reached it get
// DELEGATION_TOKEN_AUTH_DISABLED naming the requester; a standby answers
// them all NOT_CONTROLLER.
func TestActiveRefusals(t *testing.T) {
	c, lead := activeCluster(t)
	reassign := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	rt.Topic = "t"
	for _, p := range []int32{0, 1} {
		rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
		rp.Partition, rp.Replicas = p, []int32{1}
		rt.Partitions = append(rt.Partitions, rp)
	}
	reassign.Topics = append(reassign.Topics, rt)
	r := serveCommitted(t, c, lead, reassign).(*kmsg.AlterPartitionAssignmentsResponse)
	if r.ErrorCode != kerr.UnsupportedVersion.Code || deref(r.ErrorMessage) != "kraftd does not implement partition reassignment." ||
		len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 2 || r.Topics[0].Partitions[1].ErrorCode != kerr.UnsupportedVersion.Code ||
		deref(r.Topics[0].Partitions[1].ErrorMessage) != deref(r.ErrorMessage) {
		t.Errorf("AlterPartitionReassignments: %+v", r)
	}

	create := kmsg.NewPtrCreateDelegationTokenRequest()
	create.Version = 3
	var a answer
	req := request(create, &a)
	req.Principal = "User:alice"
	c.Serve(lead, req)
	c.Do("stabilize")
	tok, _ := a.resp.(*kmsg.CreateDelegationTokenResponse)
	if a.n != 1 || tok == nil || tok.ErrorCode != kerr.DelegationTokenAuthDisabled.Code || tok.PrincipalName != "alice" ||
		tok.TokenRequesterPrincipalName != "alice" || tok.PrincipalType != "User" || tok.IssueTimestamp != 0 {
		t.Errorf("CreateDelegationToken: %+v", a)
	}
	renew := kmsg.NewPtrRenewDelegationTokenRequest()
	if r := serveCommitted(t, c, lead, renew).(*kmsg.RenewDelegationTokenResponse); r.ErrorCode != kerr.DelegationTokenAuthDisabled.Code {
		t.Errorf("RenewDelegationToken: %+v", r)
	}

	other := lead%3 + 1
	for _, req := range []kmsg.Request{reassign, create, renew} {
		var a answer
		c.Serve(other, request(req, &a))
		if a.n != 1 || a.code != kerr.NotController.Code {
			t.Errorf("standby answered %s with %+v", kmsg.NameForKey(req.Key()), a)
		}
	}
}

// UnregisterController: the active controller itself, an id never
// registered, and a registered controller removed from every node's image
// once the record commits.
func TestActiveUnregisterController(t *testing.T) {
	c, lead := activeCluster(t)
	unregister := func(id int32) answer {
		req := kmsg.NewPtrUnregisterControllerRequest()
		req.ControllerID = id
		var a answer
		c.Serve(lead, request(req, &a))
		c.Do("stabilize")
		c.Do("stabilize")
		return a
	}
	if a := unregister(lead); a.code != kerr.InvalidRequest.Code || a.msg != "Controller cannot unregister itself while it is active." {
		t.Errorf("itself: %+v", a)
	}
	if a := unregister(7); a.code != kerr.ControllerIDNotRegistered.Code || a.msg != "Controller ID 7 is not currently registered." {
		t.Errorf("unregistered: %+v", a)
	}
	reg := kmsg.NewPtrControllerRegistrationRequest()
	reg.ControllerID, reg.IncarnationID = 7, [16]byte{7}
	l := kmsg.NewControllerRegistrationRequestListener()
	l.Name, l.Host, l.Port = "CONTROLLER", "localhost", 9093
	reg.Listeners = append(reg.Listeners, l)
	serveCommitted(t, c, lead, reg)
	if _, ok := c.App(lead).Image().Controller(7); !ok {
		t.Fatal("controller 7 did not register")
	}
	if a := unregister(7); a.n != 1 || a.resp == nil {
		t.Fatalf("registered: %+v", a)
	}
	for id := int32(1); id <= 3; id++ {
		if _, ok := c.App(id).Image().Controller(7); ok {
			t.Errorf("node %d still lists controller 7", id)
		}
	}
}

// A resource named twice in IncrementalAlterConfigs or AlterConfigs is
// answered once INVALID_REQUEST "Duplicate resource." and left unaltered,
// an unknown resource type UNSUPPORTED_VERSION, both ahead of the others;
// the other resources are altered.
func TestActiveConfigsDuplicateResource(t *testing.T) {
	c, lead := activeCluster(t)
	threeBrokers(t, c, lead)
	serveCommitted(t, c, lead, createTopic("a", 1, 1))
	serveCommitted(t, c, lead, createTopic("b", 1, 1))
	inc := kmsg.NewPtrIncrementalAlterConfigsRequest()
	for _, rs := range []struct {
		typ  kmsg.ConfigResourceType
		name string
	}{{kmsg.ConfigResourceTypeTopic, "a"}, {kmsg.ConfigResourceTypeTopic, "b"}, {kmsg.ConfigResourceTypeTopic, "a"}, {99, "x"}} {
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = rs.typ, rs.name
		cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		v := "60000"
		cfg.Name, cfg.Op, cfg.Value = "retention.ms", kmsg.IncrementalAlterConfigOpSet, &v
		r.Configs = append(r.Configs, cfg)
		inc.Resources = append(inc.Resources, r)
	}
	resp := serveCommitted(t, c, lead, inc).(*kmsg.IncrementalAlterConfigsResponse)
	var got []string
	for _, r := range resp.Resources {
		got = append(got, fmt.Sprintf("%s:%d:%s", r.ResourceName, r.ErrorCode, deref(r.ErrorMessage)))
	}
	want := []string{"a:42:Duplicate resource.", "x:35:Unknown resource type 99.", "b:0:<nil>"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("IncrementalAlterConfigs answered %q, want %q", got, want)
	}
	im := c.App(lead).Image()
	if _, ok := im.Config(2, "a", "retention.ms"); ok {
		t.Error("the duplicated topic was altered")
	}
	if v, ok := im.Config(2, "b", "retention.ms"); !ok || v != "60000" {
		t.Errorf("topic b: retention.ms %q %v", v, ok)
	}

	legacy := kmsg.NewPtrAlterConfigsRequest()
	for _, name := range []string{"b", "b", "b"} {
		r := kmsg.NewAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, name
		legacy.Resources = append(legacy.Resources, r)
	}
	lr := serveCommitted(t, c, lead, legacy).(*kmsg.AlterConfigsResponse)
	if len(lr.Resources) != 1 || lr.Resources[0].ErrorCode != kerr.InvalidRequest.Code || deref(lr.Resources[0].ErrorMessage) != "Duplicate resource." {
		t.Errorf("AlterConfigs answered %+v", lr.Resources)
	}
	if _, ok := c.App(lead).Image().Config(2, "b", "retention.ms"); !ok {
		t.Error("a duplicated AlterConfigs resource replaced the topic's configuration")
	}
}

// The active controller answers every controller api the node hands it
// (all of protocol.ControllerApis but those every node answers itself and
// Envelope, which the node unwraps) with something other than
// NOT_CONTROLLER or the catch-all refusal of an api it does not handle.
func TestActiveAnswersEveryControllerApi(t *testing.T) {
	c, lead := activeCluster(t)
	nodeAnswered := map[kmsg.Key]bool{kmsg.DescribeACLs: true, kmsg.CreateACLs: true, kmsg.DeleteACLs: true,
		kmsg.DescribeDelegationToken: true, kmsg.DescribeUserSCRAMCredentials: true, kmsg.Envelope: true,
		kmsg.DescribeConfigs: true} // App.DescribeConfigs, off the loop
	keys := []kmsg.Key{kmsg.UpdateFeatures, kmsg.ControllerRegistration}
	for _, a := range protocol.ControllerApis() {
		if !nodeAnswered[a.Key] {
			keys = append(keys, a.Key)
		}
	}
	for _, key := range keys {
		req := kmsg.RequestForKey(int16(key))
		req.SetVersion(req.MaxVersion())
		var a answer
		c.Serve(lead, request(req, &a))
		for range 3 {
			c.Do("stabilize")
		}
		if a.n != 1 || a.code == kerr.NotController.Code || strings.HasPrefix(a.msg, "The controller does not serve") {
			t.Errorf("%s: answered %+v", key.Name(), a)
		}
	}
}
