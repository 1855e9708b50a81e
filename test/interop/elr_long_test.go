//go:build interoplong

package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/admin"
	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// The two topics of the ELR judge, both on replicas 101, 102, 103 (broker 104 holds
// none: it survives every step and answers the describes) with min.insync.replicas=2;
// elrUnclean also allows unclean leader election.
const (
	elrTopic   = "elr"
	elrUnclean = "elr-unclean"
)

// elrState is one partition's state as a broker's DescribeTopicPartitions shows it.
type elrState struct {
	Leader, Epoch int32
	ISR, ELR, LKE []int32
}

func (s elrState) String() string {
	return fmt.Sprintf("leader %d epoch %d isr %v elr %v lastKnownElr %v", s.Leader, s.Epoch, s.ISR, s.ELR, s.LKE)
}

// elrStep is the state of both topics once a step of the scenario has taken effect.
type elrStep struct {
	Name   string
	States map[string]elrState
}

// elrRun is what one run observed: the states after each step and, per topic, the
// PartitionRecord and PartitionChangeRecords of the metadata log in order, normalized
// (topic id dropped, directory ids named by first appearance).
type elrRun struct {
	Steps   []elrStep
	Records map[string][]string
}

// TestELRLifecycleLong judges kraftd's ELR handling (KIP-966, on in a fresh 4.4 format)
// against Kafka's own controller: the same scenario runs with three Kafka 4.4.0
// controllers, then with three kraftd controllers (the active side on), each with four
// Kafka 4.4.0 brokers. Two topics on replicas 101,102,103 with min.insync.replicas=2
// (one also with unclean.leader.election.enable=true) get acks=all records; then 103 and
// 102 are killed -9 (fenced: out of the ISR; below min ISR 102 becomes eligible) and the
// leader 101 is stopped with SIGTERM (a controlled shutdown: the ISR empties, 101 and 102
// eligible, 101 the last-known leader). A killed broker restarts without a clean-shutdown
// file, so Kafka takes it out of the ELR when it registers: 102 restarts first, leaves
// the ELR, and is elected only on the unclean topic. Then 101, shut down cleanly, restarts
// and is elected from the ELR; then 103, and the ISR is back to three. After each step
// both topics' states (leader, epoch, ISR, ELR, last-known ELR) are read through broker
// 104. Then all three are killed -9 in the same order: restarted, 102 and then 101 leave
// the ELR, and with ISR and ELR empty the last-known leader 101 is elected (unclean); the
// unclean topic elects 102 again. At the end the partition records from kafka-dump-log:
// the kraftd run's states and records must equal the Kafka run's, and no record acked on
// the ELR topic is lost.
func TestELRLifecycleLong(t *testing.T) {
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	J, K := kafkatest.SideKafka, kafkatest.SideKraftd
	var jvm, kraftd elrRun
	start := time.Now()
	if !t.Run("kafka-controllers", func(t *testing.T) {
		jvm = elrLifecycle(t, env, []kafkatest.Side{J, J, J}, nil)
	}) {
		t.Fatal("the Kafka-controlled run failed: nothing to judge kraftd against")
	}
	t.Logf("Kafka-controlled run: %v", time.Since(start).Round(time.Second))
	start = time.Now()
	t.Run("kraftd-controllers", func(t *testing.T) {
		kraftd = elrLifecycle(t, env, []kafkatest.Side{K, K, K}, kafkatest.Props{config.ActiveControllerKey: "true"})
	})
	t.Logf("kraftd-controlled run: %v", time.Since(start).Round(time.Second))
	if t.Failed() {
		return
	}
	if len(kraftd.Steps) != len(jvm.Steps) {
		t.Fatalf("kraftd-controlled run: %d steps, Kafka-controlled: %d", len(kraftd.Steps), len(jvm.Steps))
	}
	for i := range jvm.Steps {
		for _, topic := range []string{elrTopic, elrUnclean} {
			j, k := jvm.Steps[i].States[topic], kraftd.Steps[i].States[topic]
			if j.String() != k.String() {
				t.Errorf("%s, topic %s: kraftd-controlled %s, Kafka-controlled %s", jvm.Steps[i].Name, topic, k, j)
			}
		}
	}
	for _, topic := range []string{elrTopic, elrUnclean} {
		j, k := jvm.Records[topic], kraftd.Records[topic]
		if len(j) < len(jvm.Steps) {
			t.Errorf("topic %s: only %d partition records in the Kafka-controlled log", topic, len(j))
		}
		if !slices.Equal(j, k) {
			t.Errorf("topic %s: the partition records differ\nKafka-controlled:\n  %s\nkraftd-controlled:\n  %s",
				topic, strings.Join(j, "\n  "), strings.Join(k, "\n  "))
		}
	}
}

// elrLifecycle runs the scenario against a quorum of sides with four brokers.
func elrLifecycle(t *testing.T, env *kafkatest.Env, sides []kafkatest.Side, kraftdProps kafkatest.Props) elrRun {
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: sides, Controllers: true,
		KafkaFormatArgs: []string{"--release-version", "4.4-IV2"}, KraftdProps: kraftdProps})
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	if _, _, err := q.WaitLeader(0, activeBound); err != nil {
		t.Fatal(err)
	}
	// A follower under this shared machine's load must not fall out of the ISR by lag:
	// only the steps change the ISR.
	brokerCfg := func(id int32) kafkatest.BrokerConfig {
		c := q.BrokerConfig(id)
		c.Props = kafkatest.Props{"replica.lag.time.max.ms": "120000"}
		return c
	}
	var cfgs []kafkatest.BrokerConfig
	for _, id := range []int32{101, 102, 103, 104} {
		cfgs = append(cfgs, brokerCfg(id))
	}
	started := env.StartBrokers(t, cfgs...)
	brokers := map[int32]*kafkatest.Broker{}
	for _, b := range started {
		brokers[b.NodeID] = b
	}
	t.Cleanup(func() {
		var all []*kafkatest.Broker
		for _, b := range brokers {
			all = append(all, b)
		}
		keepBrokerLogs(t, q, all...)
	})
	survivor := brokers[104].Addr
	cl := kafkatest.NewClient(t, survivor)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	waitBrokers(t, ctx, cl, []int32{101, 102, 103, 104})

	createELRTopics(t, ctx, survivor)
	var run elrRun
	step := func(name string, ok func(map[string]elrState) bool) map[string]elrState {
		t.Helper()
		st := waitELRStates(t, ctx, survivor, name, ok)
		run.Steps = append(run.Steps, elrStep{Name: name, States: st})
		t.Logf("%s: %s: %s; %s: %s", name, elrTopic, st[elrTopic], elrUnclean, st[elrUnclean])
		return st
	}
	both := func(f func(elrState) bool) func(map[string]elrState) bool {
		return func(m map[string]elrState) bool { return f(m[elrTopic]) && f(m[elrUnclean]) }
	}
	step("created", both(func(s elrState) bool { return s.Leader == 101 && len(s.ISR) == 3 }))
	acked := produceAcked(t, ctx, cl, "before")

	brokers[103].Kill()
	step("103 killed -9", both(func(s elrState) bool { return !slices.Contains(s.ISR, 103) }))
	acked = append(acked, produceAcked(t, ctx, cl, "isr2")...)

	brokers[102].Kill()
	st := step("102 killed -9", both(func(s elrState) bool { return !slices.Contains(s.ISR, 102) }))
	for topic, s := range st {
		if !slices.Equal(s.ISR, []int32{101}) || !slices.Equal(s.ELR, []int32{102}) {
			t.Errorf("%s after 102 was fenced below min ISR: %s, want isr [101] elr [102]", topic, s)
		}
	}

	brokers[101].Terminate()
	select {
	case <-brokers[101].Done():
	case <-time.After(activeBound):
		t.Fatalf("broker 101 did not exit within %v of SIGTERM", activeBound)
	}
	st = step("101 shut down", both(func(s elrState) bool { return s.Leader == -1 && len(s.ISR) == 0 }))
	for topic, s := range st {
		if !slices.Contains(s.ELR, 101) || !slices.Contains(s.ELR, 102) || !slices.Equal(s.LKE, []int32{101}) {
			t.Errorf("%s with an empty ISR: %s, want 101 and 102 eligible and 101 the last-known leader", topic, s)
		}
	}

	restart := func(id int32) {
		t.Helper()
		b := brokers[id]
		c := brokerCfg(id)
		c.NoFormat, c.Dir, c.Port = true, b.LogDir, b.Port
		brokers[id] = env.StartBroker(t, c)
	}
	restart(102)
	waitBrokers(t, ctx, cl, []int32{102, 104})
	st = step("102 restarted", func(m map[string]elrState) bool {
		return !slices.Contains(m[elrTopic].ELR, 102) && m[elrUnclean].Leader == 102
	})
	if s := st[elrTopic]; s.Leader != -1 || !slices.Equal(s.ELR, []int32{101}) {
		t.Errorf("%s after 102's restart from a kill -9: %s, want no leader and elr [101]", elrTopic, s)
	}

	restart(101)
	st = step("101 restarted", func(m map[string]elrState) bool {
		e, u := m[elrTopic], m[elrUnclean]
		return e.Leader == 101 && slices.Contains(e.ISR, 102) && slices.Contains(u.ISR, 101)
	})
	if s := st[elrTopic]; len(s.ELR) != 0 || len(s.LKE) != 0 {
		t.Errorf("%s after 101 was elected from the ELR: %s, want the ELR and last-known ELR empty", elrTopic, s)
	}

	restart(103)
	step("103 restarted", both(func(s elrState) bool { return len(s.ISR) == 3 }))
	acked = append(acked, produceAcked(t, ctx, cl, "back")...)

	// Again, every replica killed -9: none restarts cleanly, so each leaves the ELR as it
	// registers, and once ISR and ELR are both empty the last-known leader 101 is elected.
	brokers[103].Kill()
	step("again 103 killed -9", both(func(s elrState) bool { return !slices.Contains(s.ISR, 103) }))
	brokers[102].Kill()
	step("again 102 killed -9", both(func(s elrState) bool { return slices.Equal(s.ISR, []int32{101}) }))
	brokers[101].Kill()
	st = step("again 101 killed -9", both(func(s elrState) bool { return s.Leader == -1 && len(s.ISR) == 0 }))
	if s := st[elrTopic]; !slices.Equal(s.LKE, []int32{101}) {
		t.Errorf("%s with an empty ISR: %s, want 101 the last-known leader", elrTopic, s)
	}
	restart(102)
	waitBrokers(t, ctx, cl, []int32{102, 104})
	step("again 102 restarted", func(m map[string]elrState) bool {
		return !slices.Contains(m[elrTopic].ELR, 102) && m[elrUnclean].Leader == 102
	})
	restart(101)
	st = step("again 101 restarted", func(m map[string]elrState) bool {
		e, u := m[elrTopic], m[elrUnclean]
		return e.Leader == 101 && slices.Contains(e.ISR, 102) && slices.Contains(u.ISR, 101)
	})
	restart(103)
	step("again 103 restarted", both(func(s elrState) bool { return len(s.ISR) == 3 }))

	acked = append(acked, produceAcked(t, ctx, cl, "after")...)
	if err := cl.ConsumeAll(ctx, elrTopic, acked); err != nil {
		t.Error(err)
	}

	leader, _, err := q.WaitLeader(0, activeBound)
	if err != nil {
		t.Fatal(err)
	}
	run.Records = partitionRecords(t, env, q.Node(leader).PartitionDir)
	for _, topic := range []string{elrTopic, elrUnclean} {
		t.Logf("%s records:\n  %s", topic, strings.Join(run.Records[topic], "\n  "))
	}
	return run
}

// createELRTopics creates both topics through broker addr (forwarded to the active
// controller) with explicit replicas, retrying while the controller is not ready.
func createELRTopics(t *testing.T, ctx context.Context, addr string) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	for _, name := range []string{elrTopic, elrUnclean} {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, -1, -1
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition, ra.Replicas = 0, []int32{101, 102, 103}
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
		configs := map[string]string{"min.insync.replicas": "2"}
		if name == elrUnclean {
			configs["unclean.leader.election.enable"] = "true"
		}
		for k, v := range configs {
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			c.Name, c.Value = k, kmsg.StringPtr(v)
			rt.Configs = append(rt.Configs, c)
		}
		req.Topics = append(req.Topics, rt)
	}
	deadline := time.Now().Add(activeBound)
	for {
		resp, err := admin.Request(ctx, addr, req)
		last := fmt.Sprint(err)
		if err == nil {
			done := 0
			for _, rt := range resp.(*kmsg.CreateTopicsResponse).Topics {
				if e := kerr.ErrorForCode(rt.ErrorCode); e == nil || e == kerr.TopicAlreadyExists {
					done++
				} else {
					last = fmt.Sprintf("%s: %v %v", rt.Topic, e, rt.ErrorMessage)
				}
			}
			if done == len(req.Topics) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("create topics: %s", last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// produceAcked produces a few records to each topic with acks=all; it returns the values
// acked on the ELR topic.
func produceAcked(t *testing.T, ctx context.Context, cl *kafkatest.Client, prefix string) []string {
	t.Helper()
	var acked []string
	for _, topic := range []string{elrTopic, elrUnclean} {
		a, err := cl.Produce(ctx, topic, prefix, 20)
		if err != nil {
			t.Fatalf("produce %s to %s: %v", prefix, topic, err)
		}
		if topic == elrTopic {
			acked = a
		}
	}
	return acked
}

// describeELR reads both topics' partition 0 through the broker at addr.
func describeELR(ctx context.Context, addr string) (map[string]elrState, error) {
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	req.ResponsePartitionLimit = 10
	for _, name := range []string{elrTopic, elrUnclean} {
		rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
		rt.Topic = name
		req.Topics = append(req.Topics, rt)
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := admin.Request(rctx, addr, req)
	if err != nil {
		return nil, err
	}
	m := map[string]elrState{}
	for _, rt := range resp.(*kmsg.DescribeTopicPartitionsResponse).Topics {
		if rt.ErrorCode != 0 || rt.Topic == nil || len(rt.Partitions) != 1 {
			return nil, fmt.Errorf("topic %v: error %d, %d partitions", rt.Topic, rt.ErrorCode, len(rt.Partitions))
		}
		p := rt.Partitions[0]
		m[*rt.Topic] = elrState{Leader: p.LeaderID, Epoch: p.LeaderEpoch, ISR: orNone(p.ISR),
			ELR: orNone(p.EligibleLeaderReplicas), LKE: orNone(p.LastKnownELR)}
	}
	if len(m) != 2 {
		return nil, fmt.Errorf("described %d topics, want 2", len(m))
	}
	return m, nil
}

func orNone(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

// waitELRStates polls the broker at addr until ok accepts both topics' states.
func waitELRStates(t *testing.T, ctx context.Context, addr, step string, ok func(map[string]elrState) bool) map[string]elrState {
	t.Helper()
	deadline := time.Now().Add(activeBound)
	last := ""
	for {
		m, err := describeELR(ctx, addr)
		if err == nil && ok(m) {
			return m
		}
		if err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("%s: %s; %s: %s", elrTopic, m[elrTopic], elrUnclean, m[elrUnclean])
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the partitions never reached the step's state; last: %s", step, last)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// partitionRecords reads the metadata log in dir with kafka-dump-log and returns, per
// topic of the judge, its PartitionRecord and PartitionChangeRecords in log order, each
// as its record version and decoded fields without the topic id, directory ids renamed
// dir0, dir1, ... in order of first appearance.
func partitionRecords(t *testing.T, env *kafkatest.Env, dir string) map[string][]string {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no segments in %s: %v", dir, err)
	}
	sort.Strings(segs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := env.DumpLog(ctx, kafkatest.DumpOptions{DeepIteration: true, ClusterMetadataDecoder: true}, segs...)
	if err != nil {
		t.Fatal(err)
	}
	files, err := kafkatest.ParseDumpLog(out)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{} // topic id -> name
	dirs := map[string]string{}
	recs := map[string][]string{}
	for _, f := range files {
		for _, b := range f.Batches {
			for _, r := range b.Records {
				payload, ok := strings.CutPrefix(r.Rest, "payload: ")
				if !ok {
					continue
				}
				var d struct {
					Type    string
					Version int
					Data    map[string]any
				}
				if json.Unmarshal([]byte(payload), &d) != nil {
					continue
				}
				id, _ := d.Data["topicId"].(string)
				switch d.Type {
				case "TOPIC_RECORD":
					names[id], _ = d.Data["name"].(string)
					continue
				case "PARTITION_RECORD", "PARTITION_CHANGE_RECORD":
				default:
					continue
				}
				name := names[id]
				if name != elrTopic && name != elrUnclean {
					continue
				}
				delete(d.Data, "topicId")
				if ds, ok := d.Data["directories"].([]any); ok {
					for i, v := range ds {
						s := fmt.Sprint(v)
						if _, seen := dirs[s]; !seen {
							dirs[s] = fmt.Sprintf("dir%d", len(dirs))
						}
						ds[i] = dirs[s]
					}
				}
				js, _ := json.Marshal(d.Data) // map keys sorted
				recs[name] = append(recs[name], fmt.Sprintf("%s v%d %s", d.Type, d.Version, js))
			}
		}
	}
	return recs
}
