package interop

import (
	"context"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// TestMixedControllerQuorum: kraftd `start` as the third voter beside two Kafka 4.4.0 KRaft
// controllers (kafka.Kafka, process.roles=controller) on __cluster_metadata. Kafka's leaders
// write metadata (bootstrap records, controller registrations, NoOps) that reaches kraftd
// unchanged; a kraftd leader writes only its LeaderChange, and the JVM controllers follow it
// without faults and take over again afterwards. Kafka's kafka-metadata-quorum and kraftd's
// describe-quorum print the same description of either side's leader.
func TestMixedControllerQuorum(t *testing.T) {
	t.Parallel() // see interop/doc.go
	env := kafkatest.Require(t)
	bin := kafkatest.BuildKraftd(t)
	K, J := kafkatest.SideKraftd, kafkatest.SideKafka
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{J, J, K}, Controllers: true, KafkaLog4j: kafkaRaftDebug})
	r := &mixedRun{t: t, q: q, hw: -1, led: map[int32]kafkatest.Side{}}
	start := time.Now()
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	took := r.elected("first election", start)
	t.Logf("first election: %s leads epoch %d, %v after the first start", r.label(r.leader), r.epoch, took.Round(time.Millisecond))

	if r.side(r.leader) == J {
		r.force(K)
	}
	// kraftd leads: the JVM controllers follow it in one epoch, stay up, and kraftd's high
	// watermark stays at its LeaderChange (it appends nothing else).
	kraftdEpoch, hw := r.epoch, r.hw
	describeBoth(t, env, bin, q, r.leader, true)
	time.Sleep(3 * time.Second) // the scenario: three election timeouts in which nothing may move
	if l, e, ok := q.AgreedLeader(); !ok || l != r.leader || e != kraftdEpoch {
		t.Errorf("under kraftd's leadership the quorum moved: leader %d epoch %d (agreed %v), want %d in %d", l, e, ok, r.leader, kraftdEpoch)
	}
	if d, err := kafkatest.DescribeQuorum(q.Node(r.leader).Addr, "__cluster_metadata"); err != nil || d.HighWatermark != hw {
		t.Errorf("kraftd leader's high watermark %d (%v), want %d: it appended records of its own", d.HighWatermark, err, hw)
	}
	checkJVMHealthy(t, q, r.leader)

	// Back to a Kafka leader (both followers are JVMs): it appends metadata after kraftd's epoch.
	r.handover()
	if r.side(r.leader) != J {
		t.Fatalf("leader %s after kraftd resigned", r.label(r.leader))
	}
	describeBoth(t, env, bin, q, r.leader, false)
	committed := r.caughtUp(r.hw + 1) // NoOps and registrations in the new epoch

	for _, id := range append(r.others(r.leader), r.leader) {
		if err := q.Stop(id); err != nil {
			t.Errorf("stop %s: %v", r.label(id), err)
		}
	}
	checkMixedLogs(t, env, q, r.led, committed, true)
	keepLogs(t, q)
}

// checkJVMHealthy fails on signs of a JVM controller in trouble while following kraftd: an
// exit, a fatal fault or halt, or any error other than the expected one: a JVM controller
// registers itself with the active controller (ControllerRegistration, api 70), which kraftd
// is not (it runs no QuorumController): kraftd turns the registration away (node.Handle) and
// the registration manager retries.
func checkJVMHealthy(t *testing.T, q *kafkatest.MixedRaft, leader int32) {
	t.Helper()
	bad := regexp.MustCompile(`(?i)fatal|halt|Unexpected error .* in .* response`)
	registration := regexp.MustCompile(`(?i)CONTROLLER_REGISTRATION|ControllerRegistration`)
	for _, n := range q.Nodes {
		if n.Side != kafkatest.SideKafka {
			continue
		}
		if !n.Running() {
			t.Errorf("Kafka controller %d exited while kraftd node %d led", n.ID, leader)
			continue
		}
		var errs []string
		expected := 0
		for _, line := range strings.Split(n.Proc.Log(), "\n") {
			if !strings.Contains(line, "] ERROR ") && !bad.MatchString(line) {
				continue
			}
			if registration.MatchString(line) && !bad.MatchString(line) {
				expected++
				continue
			}
			errs = append(errs, line)
		}
		t.Logf("Kafka controller %d following kraftd node %d: %d ControllerRegistration errors (kraftd registers no controller)", n.ID, leader, expected)
		if len(errs) > 0 {
			t.Errorf("Kafka controller %d logged %d errors while following kraftd node %d, e.g.:\n%s", n.ID, len(errs), leader, strings.Join(errs[:min(len(errs), 5)], "\n"))
		}
	}
}

// describeBoth runs Kafka's kafka-metadata-quorum and kraftd's describe-quorum against the
// leader and compares what they print. With stable set (a kraftd leader, which appends
// nothing) the offsets must match too; a Kafka leader appends NoOps every 500 ms, so its
// offsets are only compared for order.
func describeBoth(t *testing.T, env *kafkatest.Env, bin string, q *kafkatest.MixedRaft, leader int32, stable bool) {
	t.Helper()
	addr := q.Node(leader).Addr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kafkaStatus, err := env.MetadataQuorum(ctx, addr, "describe", "--status")
	if err != nil {
		t.Fatalf("kafka-metadata-quorum describe --status against %s node %d: %v", q.Node(leader).Side, leader, err)
	}
	ourStatus, err := runController(t, bin, "describe-quorum", "--bootstrap-controller", addr, "--status")
	if err != nil {
		t.Fatalf("controller describe-quorum --status against %s node %d: %v", q.Node(leader).Side, leader, err)
	}
	t.Logf("describe --status of %s leader %d\nkafka-metadata-quorum:\n%scontroller describe-quorum:\n%s", q.Node(leader).Side, leader, kafkaStatus, ourStatus)
	ks, err1 := kafkatest.ParseStatus(kafkaStatus)
	ours, err2 := kafkatest.ParseStatus(ourStatus)
	if err1 != nil || err2 != nil {
		t.Fatalf("parse: %v %v", err1, err2)
	}
	if got, want := sortedKeysOf(ours), sortedKeysOf(ks); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("describe --status fields: kraftd %v, Kafka %v", got, want)
	}
	for _, k := range []string{"ClusterId", "LeaderId", "LeaderEpoch", "CurrentVoters", "CurrentObservers"} {
		if ks[k] != ours[k] {
			t.Errorf("describe --status %s: Kafka %q, kraftd %q", k, ks[k], ours[k])
		}
	}
	if ks["LeaderId"] != strconv.Itoa(int(leader)) || ks["ClusterId"] != q.ClusterID(leader) {
		t.Errorf("Kafka's tool reports leader %s of cluster %s, want %d of %s", ks["LeaderId"], ks["ClusterId"], leader, q.ClusterID(leader))
	}
	compareOffsets(t, "HighWatermark", ks["HighWatermark"], ours["HighWatermark"], stable)

	kafkaRepl, err := env.MetadataQuorum(ctx, addr, "describe", "--replication")
	if err != nil {
		t.Fatalf("kafka-metadata-quorum describe --replication: %v", err)
	}
	ourRepl, err := runController(t, bin, "describe-quorum", "--bootstrap-controller", addr, "--replication")
	if err != nil {
		t.Fatalf("controller describe-quorum --replication: %v", err)
	}
	t.Logf("describe --replication of %s leader %d\nkafka-metadata-quorum:\n%scontroller describe-quorum:\n%s", q.Node(leader).Side, leader, kafkaRepl, ourRepl)
	kr, err1 := kafkatest.ParseReplication(kafkaRepl)
	or, err2 := kafkatest.ParseReplication(ourRepl)
	if err1 != nil || err2 != nil {
		t.Fatalf("parse: %v %v", err1, err2)
	}
	if len(kr) != len(or) || len(kr) != len(q.Nodes) {
		t.Fatalf("describe --replication rows: Kafka %d, kraftd %d, want %d", len(kr), len(or), len(q.Nodes))
	}
	for i := range kr {
		if got, want := sortedKeysOf(or[i]), sortedKeysOf(kr[i]); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("replication columns: kraftd %v, Kafka %v", got, want)
		}
		for _, k := range []string{"NodeId", "DirectoryId", "Status"} {
			if kr[i][k] != or[i][k] {
				t.Errorf("replication row %d %s: Kafka %q, kraftd %q", i, k, kr[i][k], or[i][k])
			}
		}
		compareOffsets(t, "LogEndOffset of node "+kr[i]["NodeId"], kr[i]["LogEndOffset"], or[i]["LogEndOffset"], stable)
	}
}

// compareOffsets: equal when stable, else kraftd's later reading is not behind Kafka's.
func compareOffsets(t *testing.T, what, kafka, ours string, stable bool) {
	t.Helper()
	k, err1 := strconv.ParseInt(kafka, 10, 64)
	o, err2 := strconv.ParseInt(ours, 10, 64)
	switch {
	case err1 != nil || err2 != nil:
		t.Errorf("%s: Kafka %q, kraftd %q", what, kafka, ours)
	case stable && k != o:
		t.Errorf("%s: Kafka %d, kraftd %d (the leader appends nothing, they must match)", what, k, o)
	case !stable && o < k:
		t.Errorf("%s: kraftd's later reading %d is behind Kafka's %d", what, o, k)
	}
}

func sortedKeysOf(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
