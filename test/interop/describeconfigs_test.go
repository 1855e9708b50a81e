package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/controller/configs"
	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// describeStatic are static properties both controllers get: log settings the
// topic keys fall back on, and a key Kafka does not know.
var describeStatic = kafkatest.Props{
	"log.roll.hours": "100", "compression.type": "lz4", "log.cleaner.min.cleanable.ratio": "0.3",
	"log.cleaner.threads": "1", "custom.static": "abc",
}

// TestDescribeConfigsMatchKafka: an active kraftd controller and an active Kafka
// 4.4.0 controller, both node 1 with the same static properties, get the same broker
// registered and unfenced, the same topic created and the same topic, cluster and
// node configurations altered; then DescribeConfigs at every version, with and without
// synonyms and documentation, for the topic (every key, and some), an unknown topic,
// bad topic names, the cluster and this node's BROKER resources (this node's limited to
// keys whose value does not depend on the process: its full list is Kafka's whole
// KafkaConfig), other and bad broker ids, BROKER_LOGGER, CLIENT_METRICS and GROUP
// without a name, and a resource of an unknown type. The answers must be equal, field
// for field and in order.
func TestDescribeConfigsMatchKafka(t *testing.T) {
	t.Parallel()
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	kprops := kafkatest.Props{config.ActiveControllerKey: "true"}
	for k, v := range describeStatic {
		kprops[k] = v
	}
	k := kafkatest.StartKraftd(t, kafkatest.KraftdConfig{NodeID: 1, Props: kprops})
	j := env.StartController(t, kafkatest.ControllerConfig{NodeID: 1, Props: describeStatic})
	for _, side := range []struct{ name, addr string }{{"kraftd", k.Addr}, {"kafka", j.Addr}} {
		if err := waitActiveRegistered(side.addr, 90*time.Second); err != nil {
			k.DumpLog(40)
			t.Fatalf("%s: %v", side.name, err)
		}
	}
	sides := []*describeSide{{name: "kraftd", conn: dialNode(t, k.Addr), clusterID: k.ClusterID},
		{name: "kafka", conn: dialNode(t, j.Addr), clusterID: j.ClusterID}}
	for _, s := range sides {
		s.t = t
		s.unfenceBroker(101)
		s.createTopic("dc1", 101)
		s.alter(
			alterRes(2, "dc1", "retention.ms", "1000", "cleanup.policy", "compact, delete", "min.cleanable.dirty.ratio", "0.25",
				"segment.bytes", " 2000000", "preallocate", "TRUE"),
			alterRes(4, "", "log.retention.ms", "5000", "compression.type", "gzip", "custom.dynamic", "x",
				"log.cleaner.threads", "2", "log.retention.hours", "10", "log.cleaner.min.cleanable.ratio", "0.4"),
			alterRes(4, "1", "log.flush.interval.ms", "777", "log.cleaner.threads", "3", "message.max.bytes", "2000000"),
			alterRes(4, "101", "log.cleaner.threads", "4"),
		)
	}
	// A JVM controller applies committed dynamic configs to its own
	// configuration asynchronously: wait until both show them.
	for _, s := range sides {
		s.waitApplied()
	}
	compareOwnNode(t, sides)
	compareConfigsTool(t, env, k.Addr, j.Addr)
	for _, c := range describeCases() {
		for v := int16(1); v <= 4; v++ {
			name := fmt.Sprintf("%s v%d", c.name, v)
			var answers [2]string
			for i, s := range sides {
				req := c.req()
				req.Version = v
				answers[i] = s.describe(req)
			}
			if answers[0] != answers[1] {
				t.Errorf("%s: answers differ: %s", name, firstDifference(answers[1], answers[0]))
			} else {
				t.Logf("%s: %.300s", name, answers[0])
			}
		}
	}
}

type describeSide struct {
	t         *testing.T
	name      string
	conn      net.Conn
	clusterID string
	corr      int32
}

func (s *describeSide) send(req kmsg.Request) kmsg.Response {
	s.t.Helper()
	s.corr++
	_, resp := exchange(s.t, s.conn, s.corr, req, req.GetVersion())
	return resp
}

// unfenceBroker registers broker id and heartbeats it until it is unfenced
// (reporting every record as applied).
func (s *describeSide) unfenceBroker(id int32) {
	s.t.Helper()
	r := kmsg.NewPtrBrokerRegistrationRequest()
	r.Version = 4
	r.BrokerID, r.ClusterID, r.IncarnationID = id, s.clusterID, [16]byte{0: 0x77, 1: byte(id)}
	ln := kmsg.NewBrokerRegistrationRequestListener()
	ln.Name, ln.Host, ln.Port = "PLAINTEXT", "localhost", uint16(19000+id)
	r.Listeners = []kmsg.BrokerRegistrationRequestListener{ln}
	for _, fr := range features.Supported() {
		f := kmsg.NewBrokerRegistrationRequestFeature()
		f.Name, f.MinSupportedVersion, f.MaxSupportedVersion = fr.Name, fr.Min, fr.Max
		r.Features = append(r.Features, f)
	}
	r.LogDirs = [][16]byte{{0: 0x55, 1: byte(id), 15: 1}}
	r.PreviousBrokerEpoch = -1
	reg := s.send(r).(*kmsg.BrokerRegistrationResponse)
	if reg.ErrorCode != 0 {
		s.t.Fatalf("%s: registration: %d", s.name, reg.ErrorCode)
	}
	for range 50 {
		hb := kmsg.NewPtrBrokerHeartbeatRequest()
		hb.Version = 1
		hb.BrokerID, hb.BrokerEpoch, hb.CurrentMetadataOffset = id, reg.BrokerEpoch, math.MaxInt32
		resp := s.send(hb).(*kmsg.BrokerHeartbeatResponse)
		if resp.ErrorCode == 0 && !resp.IsFenced {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("%s: broker %d stays fenced", s.name, id)
}

func (s *describeSide) createTopic(name string, broker int32) {
	s.t.Helper()
	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.Version, ct.TimeoutMillis = 7, 30000
	tp := kmsg.NewCreateTopicsRequestTopic()
	tp.Topic, tp.NumPartitions, tp.ReplicationFactor = name, -1, -1
	a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	a.Replicas = []int32{broker}
	tp.ReplicaAssignment = append(tp.ReplicaAssignment, a)
	ct.Topics = append(ct.Topics, tp)
	if resp := s.send(ct).(*kmsg.CreateTopicsResponse); resp.Topics[0].ErrorCode != 0 {
		s.t.Fatalf("%s: create topic: %d %v", s.name, resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage)
	}
}

func alterRes(typ int8, name string, kv ...string) kmsg.IncrementalAlterConfigsRequestResource {
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceType(typ), name
	for i := 0; i < len(kv); i += 2 {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = kv[i], &kv[i+1]
		r.Configs = append(r.Configs, c)
	}
	return r
}

func (s *describeSide) alter(res ...kmsg.IncrementalAlterConfigsRequestResource) {
	s.t.Helper()
	r := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r.Version = 1
	r.Resources = res
	resp := s.send(r).(*kmsg.IncrementalAlterConfigsResponse)
	for _, rr := range resp.Resources {
		if rr.ErrorCode != 0 {
			s.t.Fatalf("%s: alter %d %q: %d %v", s.name, rr.ResourceType, rr.ResourceName, rr.ErrorCode, rr.ErrorMessage)
		}
	}
}

// describe sends req and gives the answer as JSON, connection closed as such.
func (s *describeSide) describe(req *kmsg.DescribeConfigsRequest) string {
	s.t.Helper()
	s.corr++
	var resp kmsg.Response
	s.conn, resp = exchangeOrClosed(s.t, s.conn, s.conn.RemoteAddr().String(), s.corr, req)
	if resp == nil {
		return "closed the connection"
	}
	b, err := json.Marshal(resp)
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

type describeCase struct {
	name string
	req  func() *kmsg.DescribeConfigsRequest
}

type dres struct {
	typ   int8
	name  string
	names []string
}

func dcReq(synonyms, docs bool, rs ...dres) func() *kmsg.DescribeConfigsRequest {
	return func() *kmsg.DescribeConfigsRequest {
		r := kmsg.NewPtrDescribeConfigsRequest()
		r.IncludeSynonyms, r.IncludeDocumentation = synonyms, docs
		for _, x := range rs {
			rr := kmsg.NewDescribeConfigsRequestResource()
			rr.ResourceType, rr.ResourceName, rr.ConfigNames = kmsg.ConfigResourceType(x.typ), x.name, slices.Clone(x.names)
			r.Resources = append(r.Resources, rr)
		}
		return r
	}
}

// ownKeys are keys of the node's BROKER resource whose values do not depend on
// the process (no port, path or id of the run).
var ownKeys = []string{"log.flush.interval.ms", "log.cleaner.threads", "message.max.bytes", "log.retention.ms",
	"log.retention.hours", "compression.type", "custom.static", "custom.dynamic", "log.roll.hours", "log.roll.ms",
	"log.cleaner.min.cleanable.ratio", "node.id", "broker.id", "ssl.keystore.password", "leader.replication.throttled.rate"}

func describeCases() []describeCase {
	var cs []describeCase
	for _, opt := range []struct {
		name           string
		synonyms, docs bool
	}{{"plain", false, false}, {"synonyms", true, false}, {"synonyms and documentation", true, true}} {
		cs = append(cs,
			describeCase{"topic, " + opt.name, dcReq(opt.synonyms, opt.docs, dres{2, "dc1", nil})},
			describeCase{"topic keys, " + opt.name, dcReq(opt.synonyms, opt.docs,
				dres{2, "dc1", []string{"retention.ms", "segment.ms", "nope", "cleanup.policy"}}, dres{2, "dc1", []string{}})},
			describeCase{"cluster, " + opt.name, dcReq(opt.synonyms, opt.docs, dres{4, "", nil})},
			describeCase{"own node, " + opt.name, dcReq(opt.synonyms, opt.docs, dres{4, "1", ownKeys})},
		)
	}
	cs = append(cs,
		describeCase{"missing and bad topics", dcReq(false, false, dres{2, "missing", nil}, dres{2, "", nil},
			dres{2, "bad/name", nil}, dres{2, strings.Repeat("x", 250), nil}, dres{2, "..", nil})},
		describeCase{"other and bad brokers", dcReq(true, false, dres{4, "2", nil}, dres{4, "x", nil}, dres{4, "-1", nil},
			dres{4, " 1", nil}, dres{4, "+1", []string{"node.id"}})},
		describeCase{"loggers", dcReq(false, false, dres{8, "", nil}, dres{8, "2", nil}, dres{8, "x", nil})},
		describeCase{"metrics and groups without a name", dcReq(false, false, dres{16, "", nil}, dres{32, "", nil})},
		describeCase{"unknown type", dcReq(false, false, dres{2, "dc1", nil}, dres{99, "x", nil})},
		describeCase{"nothing", dcReq(false, false)},
	)
	return cs
}

// waitApplied waits until the topic's compression.type shows the cluster
// record's gzip.
func (s *describeSide) waitApplied() {
	s.t.Helper()
	for range 300 {
		req := dcReq(false, false, dres{2, "dc1", []string{"compression.type"}})()
		req.Version = 4
		if strings.Contains(s.describe(req), `"Value":"gzip"`) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("%s: the cluster's compression.type is not applied", s.name)
}

// firstDifference names the first resource or config entry where two JSON
// answers differ.
func firstDifference(kafka, kraftd string) string {
	var j, k kmsg.DescribeConfigsResponse
	if json.Unmarshal([]byte(kafka), &j) != nil || json.Unmarshal([]byte(kraftd), &k) != nil {
		return fmt.Sprintf("\nkafka:  %s\nkraftd: %s", kafka, kraftd)
	}
	if len(j.Resources) != len(k.Resources) {
		return fmt.Sprintf("%d resources, kraftd %d:\nkafka:  %s\nkraftd: %s", len(j.Resources), len(k.Resources), kafka, kraftd)
	}
	for i := range j.Resources {
		jr, kr := j.Resources[i], k.Resources[i]
		jc, kc := jr.Configs, kr.Configs
		jr.Configs, kr.Configs = nil, nil
		if a, b := mustJSON(jr), mustJSON(kr); a != b {
			return fmt.Sprintf("resource %d:\nkafka:  %s\nkraftd: %s", i, a, b)
		}
		jn, kn := configNames(jc), configNames(kc)
		if jn != kn {
			return fmt.Sprintf("resource %d %q, keys:\nkafka:  %s\nkraftd: %s", i, jr.ResourceName, jn, kn)
		}
		for n := range jc {
			if a, b := mustJSON(jc[n]), mustJSON(kc[n]); a != b {
				return fmt.Sprintf("resource %d %q:\nkafka:  %s\nkraftd: %s", i, jr.ResourceName, a, b)
			}
		}
	}
	return "elsewhere"
}

func configNames(cs []kmsg.DescribeConfigsResponseResourceConfig) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return strings.Join(out, " ")
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// compareOwnNode describes the node's whole BROKER resource on both sides:
// every key Kafka's KafkaConfig has, in the same order, equal wherever
// neither side takes the value from its static properties (the harnesses
// give each process its own ports, paths and tuning).
func compareOwnNode(t *testing.T, sides []*describeSide) {
	t.Helper()
	var got [2][]kmsg.DescribeConfigsResponseResourceConfig
	for i, s := range sides {
		req := dcReq(true, true, dres{4, "1", nil})()
		req.Version = 4
		resp := s.send(req).(*kmsg.DescribeConfigsResponse)
		if len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 {
			t.Fatalf("%s: own node: %+v", s.name, resp)
		}
		got[i] = resp.Resources[0].Configs
	}
	kraftd, kafka := map[string]kmsg.DescribeConfigsResponseResourceConfig{}, map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	var korder, jorder []string
	for _, c := range got[0] {
		kraftd[c.Name] = c
		korder = append(korder, c.Name)
	}
	for _, c := range got[1] {
		kafka[c.Name] = c
		jorder = append(jorder, c.Name)
	}
	static := func(c kmsg.DescribeConfigsResponseResourceConfig, ok bool) bool {
		return ok && c.Source == kmsg.ConfigSourceStaticBrokerConfig
	}
	compared, skipped := 0, []string{}
	for name, j := range kafka {
		k, ok := kraftd[name]
		if static(j, true) || static(k, ok) {
			skipped = append(skipped, name)
			continue
		}
		if !ok {
			t.Errorf("own node: kraftd lacks %s (kafka: %s)", name, mustJSON(j))
			continue
		}
		compared++
		if a, b := mustJSON(j), mustJSON(k); a != b {
			t.Errorf("own node, %s:\nkafka:  %s\nkraftd: %s", name, a, b)
		}
	}
	for name, k := range kraftd {
		if _, ok := kafka[name]; !ok && !static(k, true) {
			t.Errorf("own node: kraftd has %s, kafka does not", name)
		}
	}
	keep := func(order []string, other map[string]kmsg.DescribeConfigsResponseResourceConfig) []string {
		var out []string
		for _, n := range order {
			if _, ok := other[n]; ok && !slices.Contains(skipped, n) {
				out = append(out, n)
			}
		}
		return out
	}
	if a, b := strings.Join(keep(jorder, kraftd), " "), strings.Join(keep(korder, kafka), " "); a != b {
		t.Errorf("own node: keys in another order:\nkafka:  %s\nkraftd: %s", a, b)
	}
	slices.Sort(skipped)
	t.Logf("own node: %d keys equal, %d static on either side not compared: %s", compared, len(skipped), strings.Join(skipped, " "))
}

// compareConfigsTool runs kafka-configs --bootstrap-controller against the
// kraftd-only quorum and the JVM one: the topic with --all and this node's
// dynamic configs and the cluster's print alike.
func compareConfigsTool(t *testing.T, env *kafkatest.Env, kraftdAddr, jvmAddr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, args := range [][]string{
		// Without --all the tool lists topics first, which no controller
		// serves (UnsupportedEndpointTypeException from the admin client).
		{"--describe", "--entity-type", "topics", "--entity-name", "dc1", "--all"},
		{"--describe", "--entity-type", "brokers", "--entity-name", "1"},
		{"--describe", "--entity-type", "brokers", "--entity-default"},
	} {
		var outs [2]string
		for i, addr := range []string{kraftdAddr, jvmAddr} {
			out, err := env.RunTool(ctx, classConfigs, append([]string{"--bootstrap-controller", addr}, args...)...)
			if err != nil {
				t.Fatalf("kafka-configs %v via %s: %v", args, addr, err)
			}
			outs[i] = out
		}
		if outs[0] != outs[1] {
			t.Errorf("kafka-configs %v:\nkafka:\n%s\nkraftd:\n%s", args, outs[1], outs[0])
		} else {
			t.Logf("kafka-configs %v: %s", args, firstLine(outs[0]))
		}
	}
	for _, want := range []string{"retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000"} {
		out, _ := env.RunTool(ctx, classConfigs, "--bootstrap-controller", kraftdAddr, "--describe", "--entity-type", "topics", "--entity-name", "dc1", "--all")
		if !strings.Contains(out, want) {
			t.Errorf("kafka-configs on kraftd: no %q in\n%s", want, out)
		}
	}
}

// TestDescribeKeysMatchKafka: the broker and topic key table kraftd's
// DescribeConfigs draws on is what Kafka 4.4.0's jar gives.
func TestDescribeKeysMatchKafka(t *testing.T) {
	t.Parallel()
	kafkatest.Require(t)
	out, _ := runJava(t, "KafkaConfigDocs", nil)
	if !bytes.Equal(bytes.TrimSpace(out), bytes.TrimSpace(configs.DescribeKeysJSON())) {
		t.Errorf("controller/configs/describekeys.json differs from the jar's keys; regenerate it with testdata/KafkaConfigDocs.java")
	}
}
