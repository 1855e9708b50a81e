package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// controllerApiRequest builds a request of a controller api that names two of each item
// (topics, partitions, resources, ACLs, users) so that per-item answers can be compared.
// Field values are valid ones, so that Kafka gets past its request validation to the point
// where a controller that is not active fails.
func controllerApiRequest(key int16, clusterID string) kmsg.Request {
	s := func(v string) *string { return &v }
	topicID := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	switch key {
	case int16(kmsg.CreateTopics):
		r := kmsg.NewPtrCreateTopicsRequest()
		for _, name := range []string{"t1", "t2"} {
			t := kmsg.NewCreateTopicsRequestTopic()
			t.Topic, t.NumPartitions, t.ReplicationFactor = name, 1, 1
			r.Topics = append(r.Topics, t)
		}
		r.TimeoutMillis = 5000
		return r
	case int16(kmsg.DeleteTopics):
		r := kmsg.NewPtrDeleteTopicsRequest()
		r.TopicNames = []string{"t1", "t2"}
		for _, name := range r.TopicNames {
			t := kmsg.NewDeleteTopicsRequestTopic()
			t.Topic = s(name)
			r.Topics = append(r.Topics, t)
		}
		r.TimeoutMillis = 5000
		return r
	case int16(kmsg.CreatePartitions):
		r := kmsg.NewPtrCreatePartitionsRequest()
		for _, name := range []string{"t1", "t2"} {
			t := kmsg.NewCreatePartitionsRequestTopic()
			t.Topic, t.Count = name, 3
			r.Topics = append(r.Topics, t)
		}
		r.TimeoutMillis = 5000
		return r
	case int16(kmsg.ElectLeaders):
		r := kmsg.NewPtrElectLeadersRequest()
		t := kmsg.NewElectLeadersRequestTopic()
		t.Topic, t.Partitions = "t1", []int32{0, 1}
		r.Topics = append(r.Topics, t)
		r.TimeoutMillis = 5000
		return r
	case int16(kmsg.AlterPartitionAssignments):
		r := kmsg.NewPtrAlterPartitionAssignmentsRequest()
		t := kmsg.NewAlterPartitionAssignmentsRequestTopic()
		t.Topic = "t1"
		for _, p := range []int32{0, 1} {
			tp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
			tp.Partition, tp.Replicas = p, []int32{1}
			t.Partitions = append(t.Partitions, tp)
		}
		r.Topics = append(r.Topics, t)
		r.TimeoutMillis = 5000
		return r
	case int16(kmsg.ListPartitionReassignments):
		r := kmsg.NewPtrListPartitionReassignmentsRequest()
		t := kmsg.NewListPartitionReassignmentsRequestTopic()
		t.Topic, t.Partitions = "t1", []int32{0, 1}
		r.Topics = append(r.Topics, t)
		r.TimeoutMillis = 5000
		return r
	}
	if r := configOrAclRequest(key); r != nil {
		return r
	}
	if r := userRequest(key); r != nil {
		return r
	}
	return channelRequest(key, clusterID, topicID)
}

func configOrAclRequest(key int16) kmsg.Request {
	resources := []struct {
		typ  kmsg.ConfigResourceType
		name string
	}{{kmsg.ConfigResourceTypeTopic, "t1"}, {kmsg.ConfigResourceTypeTopic, "t2"}}
	switch key {
	case int16(kmsg.DescribeConfigs):
		r := kmsg.NewPtrDescribeConfigsRequest()
		for _, res := range resources {
			rr := kmsg.NewDescribeConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = res.typ, res.name
			r.Resources = append(r.Resources, rr)
		}
		return r
	case int16(kmsg.AlterConfigs):
		r := kmsg.NewPtrAlterConfigsRequest()
		for _, res := range resources {
			rr := kmsg.NewAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = res.typ, res.name
			c := kmsg.NewAlterConfigsRequestResourceConfig()
			v := "1000"
			c.Name, c.Value = "retention.ms", &v
			rr.Configs = append(rr.Configs, c)
			r.Resources = append(r.Resources, rr)
		}
		return r
	case int16(kmsg.IncrementalAlterConfigs):
		r := kmsg.NewPtrIncrementalAlterConfigsRequest()
		for _, res := range resources {
			rr := kmsg.NewIncrementalAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = res.typ, res.name
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			v := "1000"
			c.Name, c.Op, c.Value = "retention.ms", kmsg.IncrementalAlterConfigOpSet, &v
			rr.Configs = append(rr.Configs, c)
			r.Resources = append(r.Resources, rr)
		}
		return r
	case int16(kmsg.DescribeACLs):
		r := kmsg.NewPtrDescribeACLsRequest()
		r.ResourceType, r.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
		r.Operation, r.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		return r
	case int16(kmsg.CreateACLs):
		r := kmsg.NewPtrCreateACLsRequest()
		for _, p := range []string{"User:alice", "User:bob"} {
			c := kmsg.NewCreateACLsRequestCreation()
			c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeTopic, "t1", kmsg.ACLResourcePatternTypeLiteral
			c.Principal, c.Host, c.Operation, c.PermissionType = p, "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
			r.Creations = append(r.Creations, c)
		}
		return r
	case int16(kmsg.DeleteACLs):
		r := kmsg.NewPtrDeleteACLsRequest()
		for _, p := range []string{"User:alice", "User:bob"} {
			f := kmsg.NewDeleteACLsRequestFilter()
			name, host, principal := "t1", "*", p
			f.ResourceType, f.ResourceName, f.ResourcePatternType = kmsg.ACLResourceTypeTopic, &name, kmsg.ACLResourcePatternTypeLiteral
			f.Principal, f.Host, f.Operation, f.PermissionType = &principal, &host, kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
			r.Filters = append(r.Filters, f)
		}
		return r
	}
	return nil
}

func userRequest(key int16) kmsg.Request {
	switch key {
	case int16(kmsg.AlterClientQuotas):
		r := kmsg.NewPtrAlterClientQuotasRequest()
		for _, u := range []string{"alice", "bob"} {
			e := kmsg.NewAlterClientQuotasRequestEntry()
			ent := kmsg.NewAlterClientQuotasRequestEntryEntity()
			ent.Type, ent.Name = "user", &u
			op := kmsg.NewAlterClientQuotasRequestEntryOp()
			op.Key, op.Value = "producer_byte_rate", 1024
			e.Entity, e.Ops = append(e.Entity, ent), append(e.Ops, op)
			r.Entries = append(r.Entries, e)
		}
		return r
	case int16(kmsg.DescribeUserSCRAMCredentials):
		r := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
		for _, u := range []string{"alice", "bob"} {
			ru := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
			ru.Name = u
			r.Users = append(r.Users, ru)
		}
		return r
	case int16(kmsg.AlterUserSCRAMCredentials):
		r := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
		d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
		d.Name, d.Mechanism = "bob", 1
		u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		u.Name, u.Mechanism, u.Iterations = "alice", 1, 8192
		u.Salt, u.SaltedPassword = bytes.Repeat([]byte{7}, 16), bytes.Repeat([]byte{9}, 32)
		r.Deletions, r.Upsertions = append(r.Deletions, d), append(r.Upsertions, u)
		return r
	case int16(kmsg.CreateDelegationToken):
		r := kmsg.NewPtrCreateDelegationTokenRequest()
		r.MaxLifetimeMillis = -1
		return r
	case int16(kmsg.RenewDelegationToken):
		r := kmsg.NewPtrRenewDelegationTokenRequest()
		r.HMAC, r.RenewTimeMillis = []byte{1, 2, 3}, 1000
		return r
	case int16(kmsg.ExpireDelegationToken):
		r := kmsg.NewPtrExpireDelegationTokenRequest()
		r.HMAC, r.ExpiryPeriodMillis = []byte{1, 2, 3}, 1000
		return r
	case int16(kmsg.DescribeDelegationToken):
		return kmsg.NewPtrDescribeDelegationTokenRequest()
	}
	return nil
}

// channelRequest builds the requests brokers and controllers send to the active
// controller, from a broker 4 (or controller 5) that is not part of the quorum.
func channelRequest(key int16, clusterID string, topicID [16]byte) kmsg.Request {
	switch key {
	case int16(kmsg.AlterPartition):
		r := kmsg.NewPtrAlterPartitionRequest()
		r.BrokerID, r.BrokerEpoch = 4, 1
		t := kmsg.NewAlterPartitionRequestTopic()
		t.TopicID = topicID
		p := kmsg.NewAlterPartitionRequestTopicPartition()
		p.NewISR = []int32{4}
		isr := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
		isr.BrokerID, isr.BrokerEpoch = 4, 1
		p.NewEpochISR = append(p.NewEpochISR, isr)
		t.Partitions = append(t.Partitions, p)
		r.Topics = append(r.Topics, t)
		return r
	case int16(kmsg.Envelope):
		return envelopeRequest()
	case int16(kmsg.BrokerRegistration):
		r := kmsg.NewPtrBrokerRegistrationRequest()
		r.BrokerID, r.ClusterID, r.IncarnationID = 4, clusterID, topicID
		l := kmsg.NewBrokerRegistrationRequestListener()
		l.Name, l.Host, l.Port = "PLAINTEXT", "127.0.0.1", 9092
		r.Listeners = append(r.Listeners, l)
		f := kmsg.NewBrokerRegistrationRequestFeature()
		f.Name, f.MinSupportedVersion, f.MaxSupportedVersion = "metadata.version", 7, 29
		r.Features = append(r.Features, f)
		r.LogDirs = [][16]byte{topicID}
		return r
	case int16(kmsg.BrokerHeartbeat):
		r := kmsg.NewPtrBrokerHeartbeatRequest()
		r.BrokerID, r.BrokerEpoch = 4, 1
		return r
	case int16(kmsg.UnregisterBroker):
		r := kmsg.NewPtrUnregisterBrokerRequest()
		r.BrokerID = 4
		return r
	case int16(kmsg.AllocateProducerIDs):
		r := kmsg.NewPtrAllocateProducerIDsRequest()
		r.BrokerID, r.BrokerEpoch = 4, 1
		return r
	case int16(kmsg.AssignReplicasToDirs):
		r := kmsg.NewPtrAssignReplicasToDirsRequest()
		r.BrokerID, r.BrokerEpoch = 4, 1
		return r
	case int16(kmsg.UnregisterController):
		r := kmsg.NewPtrUnregisterControllerRequest()
		r.ControllerID = 5
		return r
	}
	return nil
}

// envelopeRequest wraps a CreateTopics request as a forwarding broker does: the inner
// request's header and body, the principal serialized by Kafka's default principal
// builder (a version-prefixed DefaultPrincipalData) and the client's address.
func envelopeRequest() *kmsg.EnvelopeRequest {
	inner := controllerApiRequest(int16(kmsg.CreateTopics), "")
	inner.SetVersion(7)
	client := "adminclient-1"
	r := kmsg.NewPtrEnvelopeRequest()
	r.RequestData = protocol.AppendRequest(nil, 99, &client, inner)[4:]
	p := kmsg.NewDefaultPrincipalData()
	p.Type, p.Name = "User", "ANONYMOUS"
	r.RequestPrincipal = p.AppendTo(nil) // kmsg writes the version prefix itself
	r.ClientHostAddress = []byte{127, 0, 0, 1}
	return r
}

// jvmAnswersItself are the controller apis a Kafka 4.4.0 controller that is not active
// still answers from its own image, with the code it gives controllerApiRequest's
// requests in this quorum (no topics). A kraftd that is not the active controller
// answers these with NOT_CONTROLLER (in the same places), which sends the client on to
// the active controller.
var jvmAnswersItself = map[kmsg.Key]struct {
	code int16
	why  string
}{
	kmsg.DeleteTopics:               {kerr.UnknownTopicOrPartition.Code, "topic ids are looked up in the controller's committed image first"},
	kmsg.ListPartitionReassignments: {0, "a read served from the controller's own image"},
}

// answeredAlike are the controller apis every controller answers alike whatever its
// state, kraftd as the JVM (plaintext, no authorizer, no token secret): the ACL apis
// SECURITY_DISABLED, token requests DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, and
// UNKNOWN_SERVER_ERROR for the apis a controller lists but handles nowhere.
var answeredAlike = map[kmsg.Key]bool{
	kmsg.DescribeACLs: true, kmsg.CreateACLs: true, kmsg.DeleteACLs: true,
	kmsg.CreateDelegationToken: true, kmsg.RenewDelegationToken: true, kmsg.ExpireDelegationToken: true,
	kmsg.DescribeDelegationToken: true, kmsg.DescribeUserSCRAMCredentials: true,
	// Every controller describes configs from its own image.
	kmsg.DescribeConfigs: true,
}

// TestControllerApisNotActive sends every controller api, at every version kraftd
// advertises, to a kraftd voter and to a JVM controller that is not active in the same
// quorum (two Kafka 4.4.0 controllers and kraftd). kraftd advertises the JVM's ranges and
// answers with the JVM's bytes (the message aside when kraftd leads: the JVM then names
// kraftd, kraftd names no one): NOT_CONTROLLER, or the answer every controller gives
// alike (answeredAlike), except for the apis a JVM answers from its own image
// (jvmAnswersItself). Then Kafka's admin tools bootstrapped to kraftd work as when
// bootstrapped to the JVM controller.
func TestControllerApisNotActive(t *testing.T) {
	t.Parallel()
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	K, J := kafkatest.SideKraftd, kafkatest.SideKafka
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{J, J, K}, Controllers: true})
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	leader, epoch, err := q.WaitLeader(0, 90*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	jvm, kraftd := q.Node(1), q.Node(3)
	if leader == 1 {
		jvm = q.Node(2)
	}
	// A JVM controller still loading its metadata answers differently (or not at all).
	if err := jvm.Proc.WaitLog("The loader finished catching up", 60*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("node %d leads epoch %d; asking JVM follower %d and kraftd %d", leader, epoch, jvm.ID, kraftd.ID)
	jc, kc := dialNode(t, jvm.Addr), dialNode(t, kraftd.Addr)
	compareApiVersions(t, jc, kc)
	corr := int32(10)
	for _, key := range controllerKeys() {
		rng, _ := node.Apis().Versions(key)
		for v := rng.Min; v <= rng.Max; v++ {
			req := controllerApiRequest(key, q.ClusterID(jvm.ID))
			req.SetVersion(v)
			corr++
			jframe, jresp := exchange(t, jc, corr, req, v)
			kframe, kresp := exchange(t, kc, corr, req, v)
			name := fmt.Sprintf("%s v%d", kmsg.NameForKey(key), v)
			t.Logf("%s: JVM %s %s; kraftd %s %s", name, errorCodes(jresp), messages(jresp), errorCodes(kresp), messages(kresp))
			if !answeredAlike[kmsg.Key(key)] {
				checkKraftdMessages(t, name, kresp, leader, kraftd.ID)
			}
			if own, ok := jvmAnswersItself[kmsg.Key(key)]; ok {
				checkAnsweredItself(t, name, own.code, jresp, kresp)
				continue
			}
			if got, want := errorCodes(kresp), errorCodes(jresp); got != want {
				t.Errorf("%s: kraftd answers %s, the JVM %s", name, got, want)
			}
			if (leader != kraftd.ID && !bytes.Equal(jframe, kframe)) || !sameAnswer(jresp, kresp) {
				t.Errorf("%s: answers differ:\nkafka:  %x\nkraftd: %x", name, jframe, kframe)
			}
		}
	}
	checkAdminToolsViaKraftd(t, env, jvm.Addr, kraftd.Addr, leader)
}

// compareApiVersions: kraftd lists the same apis with the same ranges as the JVM.
func compareApiVersions(t *testing.T, jc, kc net.Conn) {
	t.Helper()
	_, jav := exchange(t, jc, 1, apiVersionsRequest(4), 4)
	_, kav := exchange(t, kc, 1, apiVersionsRequest(4), 4)
	jkeys, kkeys := jav.(*kmsg.ApiVersionsResponse).ApiKeys, kav.(*kmsg.ApiVersionsResponse).ApiKeys
	if describeApis(jkeys) != describeApis(kkeys) {
		t.Errorf("ApiVersions differ:\nkafka:  %s\nkraftd: %s", describeApis(jkeys), describeApis(kkeys))
	}
}

// checkKraftdMessages: every message kraftd sends names the raft leader as the active
// controller, or no one when kraftd leads (some types carry the generic text instead).
func checkKraftdMessages(t *testing.T, name string, resp kmsg.Response, leader, self int32) {
	t.Helper()
	want := fmt.Sprintf("The active controller appears to be node %d.", leader)
	if leader == self {
		want = "No controller appears to be active."
	}
	errorFields(resp, func(path string, f reflect.Value) {
		if f.Kind() == reflect.Pointer && !f.IsNil() {
			if m := f.Elem().String(); m != want && m != kerr.NotController.Description {
				t.Errorf("%s: kraftd's %s is %q, want %q", name, path, m, want)
			}
		}
	})
}

// checkAnsweredItself: the JVM gives the expected code in every error field; kraftd
// NOT_CONTROLLER in every one, per item where the JVM answers per item.
func checkAnsweredItself(t *testing.T, name string, code int16, jresp, kresp kmsg.Response) {
	t.Helper()
	var jpaths, kpaths []string
	errorFields(jresp, func(path string, f reflect.Value) {
		if f.Kind() == reflect.Int16 {
			jpaths = append(jpaths, path)
			if int16(f.Int()) != code {
				t.Errorf("%s: the JVM answers %s, expected %s in every field (Kafka changed?)", name, errorCodes(jresp), errName(code))
			}
		}
	})
	errorFields(kresp, func(path string, f reflect.Value) {
		if f.Kind() == reflect.Int16 {
			kpaths = append(kpaths, path)
			if int16(f.Int()) != kerr.NotController.Code {
				t.Errorf("%s: kraftd answers %s, want NOT_CONTROLLER throughout", name, errorCodes(kresp))
			}
		}
	})
	// A read the JVM served lists what it found, not the items asked for.
	if code != 0 && strings.Join(jpaths, " ") != strings.Join(kpaths, " ") {
		t.Errorf("%s: error fields differ: JVM %v, kraftd %v", name, jpaths, kpaths)
	}
}

// checkAdminToolsViaKraftd runs kafka-configs and kafka-features with
// --bootstrap-controller on kraftd and on the JVM follower: both find the active
// controller through DescribeCluster and print the same.
func checkAdminToolsViaKraftd(t *testing.T, env *kafkatest.Env, jvmAddr, kraftdAddr string, leader int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, args := range [][]string{
		{classConfigs, "--describe", "--entity-type", "brokers", "--entity-name", strconv.Itoa(int(leader)), "--all"},
		{classFeatures, "describe"},
	} {
		run := func(addr string) string {
			out, err := env.RunTool(ctx, args[0], append([]string{"--bootstrap-controller", addr}, args[1:]...)...)
			var te *kafkatest.ToolError
			switch {
			case err == nil:
				return out
			case errors.As(err, &te) && strings.Contains(te.Stdout+te.Stderr, "NotControllerException"):
				// kraftd leads: both bootstraps name it as the active controller.
				return "NOT_CONTROLLER"
			}
			t.Fatalf("%s via %s: %v", args, addr, err)
			return ""
		}
		jout, kout := run(jvmAddr), run(kraftdAddr)
		if jout != kout {
			t.Errorf("%s: via the JVM follower:\n%s\nvia kraftd:\n%s", args, jout, kout)
		}
		t.Logf("%s (leader %d) via either: %s", args, leader, firstLine(kout))
	}
}

// classConfigs is kafka-configs.
const classConfigs = "org.apache.kafka.tools.ConfigCommand"

// TestAdminToolsAgainstKraftdLeader: Kafka's admin tools bootstrapped to a kraftd that
// leads its quorum are sent to kraftd as the active controller (DescribeCluster names
// the raft leader): a metadata api then fails with NOT_CONTROLLER, as from a controller
// that is not active, not with an api kraftd does not list; DescribeConfigs, which a
// controller answers itself, succeeds.
func TestAdminToolsAgainstKraftdLeader(t *testing.T) {
	t.Parallel()
	env := kafkatest.Require(t)
	k := kafkatest.StartKraftd(t, kafkatest.KraftdConfig{NodeID: 1})
	if _, err := kafkatest.WaitQuorum(k.Addr, "__cluster_metadata", 30*time.Second, func(qi kafkatest.QuorumInfo) bool { return qi.LeaderID == 1 }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The admin client retries an alteration refused with NOT_CONTROLLER (looking for the
	// controller again) until its api timeout, kept short here.
	clientConfig := filepath.Join(t.TempDir(), "admin.properties")
	if err := os.WriteFile(clientConfig, []byte("default.api.timeout.ms=8000\nrequest.timeout.ms=4000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--alter", "--entity-type", "brokers", "--entity-default", "--add-config", "log.cleaner.threads=2"},
			"TimeoutException: Timed out waiting for a node assignment. Call: incrementalAlterConfigs"},
	} {
		args := append([]string{"--bootstrap-controller", k.Addr, "--command-config", clientConfig}, c.args...)
		_, err := env.RunTool(ctx, classConfigs, args...)
		var te *kafkatest.ToolError
		if !errors.As(err, &te) {
			t.Fatalf("kafka-configs %v against a kraftd leader: %v, want a failure", c.args, err)
		}
		out := te.Stdout + te.Stderr
		t.Logf("kafka-configs %v: %s", c.args, exceptionLine(out))
		if !strings.Contains(out, c.want) || strings.Contains(out, "UnsupportedVersion") {
			t.Errorf("kafka-configs %v failed otherwise than with %q:\n%s", c.args, c.want, out)
		}
	}
	// DescribeConfigs is answered by the controller itself, as by Kafka's.
	out, err := env.RunTool(ctx, classConfigs, "--bootstrap-controller", k.Addr, "--command-config", clientConfig,
		"--describe", "--entity-type", "brokers", "--entity-name", "1", "--all")
	if err != nil || !strings.Contains(out, "All configs for broker 1 are:") || !strings.Contains(out, "node.id=1 sensitive=false") {
		t.Errorf("kafka-configs --describe broker 1 --all against a kraftd leader: %v\n%s", err, out)
	}
}

// exceptionLine is the first line of a tool's output naming an exception.
func exceptionLine(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "Exception: ") {
			return strings.TrimSpace(line)
		}
	}
	return firstLine(out)
}

func dialNode(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// errorFields visits every ErrorCode and ErrorMessage field of a response, top level and
// in every item, depth first, with its path.
func errorFields(resp kmsg.Response, visit func(path string, f reflect.Value)) {
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem(), path)
			}
		case reflect.Slice:
			if v.Type().Elem().Kind() == reflect.Struct {
				for i := 0; i < v.Len(); i++ {
					walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
				}
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				name := v.Type().Field(i).Name
				if name == "ErrorCode" || name == "ErrorMessage" {
					visit(path+"."+name, v.Field(i))
					continue
				}
				walk(v.Field(i), path+"."+name)
			}
		}
	}
	walk(reflect.ValueOf(resp), "")
}

// errorCodes lists a response's error codes, top level and per item, in order.
func errorCodes(resp kmsg.Response) string {
	var parts []string
	errorFields(resp, func(path string, f reflect.Value) {
		if f.Kind() == reflect.Int16 {
			parts = append(parts, path+"="+errName(int16(f.Int())))
		}
	})
	return strings.Join(parts, " ")
}

// sameAnswer reports whether two responses are the same bytes once every error message
// present reads the same (Kafka and kraftd may name the active controller differently).
func sameAnswer(a, b kmsg.Response) bool {
	norm := func(r kmsg.Response) []byte {
		// Work on a decoded copy: r stays as received.
		r, err := protocol.ParseResponse(protocol.AppendResponse(nil, 0, r)[4:], r.Key(), r.GetVersion())
		if err != nil {
			panic(err)
		}
		errorFields(r, func(_ string, f reflect.Value) {
			if f.Kind() == reflect.Pointer && !f.IsNil() {
				m := "<message>"
				f.Set(reflect.ValueOf(&m))
			}
		})
		return protocol.AppendResponse(nil, 0, r)
	}
	return bytes.Equal(norm(a), norm(b))
}

// messages lists a response's distinct error messages.
func messages(resp kmsg.Response) string {
	seen := map[string]bool{}
	var out []string
	errorFields(resp, func(_ string, f reflect.Value) {
		if f.Kind() == reflect.Pointer && !f.IsNil() && !seen[f.Elem().String()] {
			seen[f.Elem().String()] = true
			out = append(out, strconv.Quote(f.Elem().String()))
		}
	})
	return strings.Join(out, ", ")
}

func errName(c int16) string {
	if c == 0 {
		return "NONE"
	}
	if e, ok := kerr.ErrorForCode(c).(*kerr.Error); ok {
		return e.Message
	}
	return fmt.Sprint(c)
}
