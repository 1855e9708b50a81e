//go:build interoplong

package interop

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/admin"
	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// activeBound bounds every wait of the active-controller scenario: a hang bound, not a
// speed goal.
const activeBound = 90 * time.Second

// TestKraftdActiveControllerBrokersLong: a kraftd-only quorum (K,K,K, formatted by
// kafka-storage format, then by kraftd's controller format; the active side on) activates: kafka-dump-log
// --cluster-metadata-decoder shows the bootstrap records in a metadata transaction. Three
// Kafka 4.4.0 brokers register, heartbeat and start ("Kafka Server started" needs their
// registration and unfencing); a client sees all three through a broker. A broker killed
// -9 drops out of the brokers a broker lists (fenced by the stale-broker task once its
// session expires); restarted, it registers again and starts. SIGTERM: the broker is
// granted its controlled shutdown and exits. kafka-cluster unregister through a broker
// (an Envelope) removes a fenced broker's registration.
func TestKraftdActiveControllerBrokersLong(t *testing.T) {
	t.Run("kafka-storage-format", func(t *testing.T) {
		activeControllerBrokers(t, kafkatest.MixedRaftConfig{KafkaFormatArgs: []string{"--release-version", "4.4-IV2"}})
	})
	t.Run("controller-format", func(t *testing.T) {
		activeControllerBrokers(t, kafkatest.MixedRaftConfig{KraftdFormatArgs: []string{}})
	})
}

func activeControllerBrokers(t *testing.T, mc kafkatest.MixedRaftConfig) {
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	K := kafkatest.SideKraftd
	mc.Sides, mc.Controllers = []kafkatest.Side{K, K, K}, true
	mc.KraftdProps = kafkatest.Props{config.ActiveControllerKey: "true"}
	q := env.NewMixedRaft(t, mc)
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	leader, epoch, err := q.WaitLeader(0, activeBound)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kraftd node %d leads epoch %d", leader, epoch)

	brokers := q.StartBrokers(101, 102, 103)
	t.Cleanup(func() { keepBrokerLogs(t, q, brokers...) })
	addrs := []string{brokers[0].Addr, brokers[1].Addr, brokers[2].Addr}
	cl := kafkatest.NewClient(t, addrs...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	waitBrokers(t, ctx, cl, []int32{101, 102, 103})

	checkActivationDump(t, env, q, leader)
	waitRegisteredControllers(t, q, leader, []int32{1, 2, 3})
	if st, err := env.DescribeStatus(ctx, q.Node(leader).Addr); err != nil || st["LeaderId"] != strconv.Itoa(int(leader)) {
		t.Errorf("kafka-metadata-quorum describe --status at the active kraftd: %v %v", st, err)
	}

	// kill -9: fenced once its session (9 s) expires, so it leaves the brokers listed.
	brokers[2].Kill()
	killed := time.Now()
	waitBrokers(t, ctx, cl, []int32{101, 102})
	t.Logf("broker 103 left the listed brokers %v after kill -9 (session 9 s)", time.Since(killed).Round(100*time.Millisecond))
	cfg := q.BrokerConfig(103)
	cfg.NoFormat, cfg.Dir, cfg.Port = true, brokers[2].LogDir, brokers[2].Port
	restarted := env.StartBroker(t, cfg)
	brokers = append(brokers, restarted)
	waitBrokers(t, ctx, cl, []int32{101, 102, 103})

	// SIGTERM: a controlled shutdown the controller grants; the JVM exits on its own.
	brokers[1].Terminate()
	terminated := time.Now()
	select {
	case <-brokers[1].Done():
		t.Logf("broker 102 exited %v after SIGTERM", time.Since(terminated).Round(100*time.Millisecond))
	case <-time.After(activeBound):
		t.Fatalf("broker 102 did not exit within %v of SIGTERM", activeBound)
	}
	if !strings.Contains(brokers[1].Log(), "controlled shutdown") {
		t.Errorf("broker 102's log does not mention its controlled shutdown")
	}
	waitBrokers(t, ctx, cl, []int32{101, 103})

	// kafka-cluster unregister through a broker: UnregisterBroker forwarded in an Envelope.
	restarted.Kill()
	waitBrokers(t, ctx, cl, []int32{101})
	if !registeredThrough(t, ctx, brokers[0].Addr, 103) {
		t.Fatal("broker 103 is not registered (fenced) before its unregistration")
	}
	if out, err := env.RunTool(ctx, kafkatest.ClassClusterTool, "unregister", "--bootstrap-server", brokers[0].Addr, "--id", "103"); err != nil {
		t.Fatalf("kafka-cluster unregister --id 103: %v\n%s", err, out)
	}
	deadline := time.Now().Add(activeBound)
	for registeredThrough(t, ctx, brokers[0].Addr, 103) {
		if time.Now().After(deadline) {
			t.Fatal("broker 103 still registered after kafka-cluster unregister")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// registeredThrough reports whether broker addr's DescribeCluster, fenced brokers
// included, lists id.
func registeredThrough(t *testing.T, ctx context.Context, addr string, id int32) bool {
	t.Helper()
	req := kmsg.NewPtrDescribeClusterRequest()
	req.Version, req.IncludeFencedBrokers = 2, true
	resp, err := admin.Request(ctx, addr, req)
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(resp.(*kmsg.DescribeClusterResponse).Brokers,
		func(b kmsg.DescribeClusterResponseBroker) bool { return b.NodeID == id })
}

// waitRegisteredControllers waits until the leader's DescribeCluster (controller endpoints)
// lists exactly ids, each registered (the leader itself, the others through their
// registration with it), and names the leader the controller.
func waitRegisteredControllers(t *testing.T, q *kafkatest.MixedRaft, leader int32, ids []int32) {
	t.Helper()
	deadline := time.Now().Add(activeBound)
	last := ""
	for time.Now().Before(deadline) {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.EndpointType = 2
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := admin.Request(ctx, q.Node(leader).Addr, req)
		cancel()
		if err == nil {
			dc := resp.(*kmsg.DescribeClusterResponse)
			var got []int32
			for _, b := range dc.Brokers {
				got = append(got, b.NodeID)
			}
			slices.Sort(got)
			if dc.ErrorCode == 0 && dc.ControllerID == leader && slices.Equal(got, ids) {
				return
			}
			last = fmt.Sprintf("error %d, controller %d, controllers %v", dc.ErrorCode, dc.ControllerID, got)
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("DescribeCluster at the active kraftd %d: %s, want controllers %v", leader, last, ids)
}

// waitBrokers waits until a broker's Metadata lists exactly ids (the unfenced brokers).
func waitBrokers(t *testing.T, ctx context.Context, cl *kafkatest.Client, ids []int32) {
	t.Helper()
	deadline := time.Now().Add(activeBound)
	var got []int32
	for time.Now().Before(deadline) {
		md, err := cl.Admin.BrokerMetadata(ctx)
		if err == nil {
			got = got[:0]
			for _, b := range md.Brokers {
				got = append(got, b.NodeID)
			}
			slices.Sort(got)
			if slices.Equal(got, ids) {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("brokers listed %v, want %v", got, ids)
}

// checkActivationDump reads the leader's segments with kafka-dump-log: after the
// LeaderChange record, BeginTransaction "Bootstrap records", metadata.version first among
// the FeatureLevel records, then EndTransaction.
func checkActivationDump(t *testing.T, env *kafkatest.Env, q *kafkatest.MixedRaft, leader int32) {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(q.Node(leader).PartitionDir, "*.log"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no segments in %s", q.Node(leader).PartitionDir)
	}
	sort.Strings(segs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := env.DumpLog(ctx, kafkatest.DumpOptions{DeepIteration: true, ClusterMetadataDecoder: true}, segs[0])
	if err != nil {
		t.Fatal(err)
	}
	files, err := kafkatest.ParseDumpLog(out)
	if err != nil || len(files) == 0 {
		t.Fatalf("dump: %v", err)
	}
	var kinds []string
	for _, b := range files[0].Batches {
		for _, r := range b.Records {
			kinds = append(kinds, r.Rest)
		}
	}
	begin := slices.IndexFunc(kinds, func(s string) bool { return strings.Contains(s, `"BEGIN_TRANSACTION_RECORD"`) })
	end := slices.IndexFunc(kinds, func(s string) bool { return strings.Contains(s, `"END_TRANSACTION_RECORD"`) })
	if begin < 0 || end < begin || !strings.Contains(kinds[begin], "Bootstrap records") {
		t.Fatalf("no bootstrap transaction in the dump:\n%s", strings.Join(kinds[:min(len(kinds), 30)], "\n"))
	}
	if first := kinds[begin+1]; !strings.Contains(first, "FEATURE_LEVEL_RECORD") || !strings.Contains(first, "metadata.version") {
		t.Errorf("the first bootstrap record is not metadata.version: %s", first)
	}
	noops := 0
	for _, k := range kinds[end:] {
		if strings.Contains(k, "NO_OP_RECORD") {
			noops++
		}
	}
	if noops == 0 {
		t.Errorf("no NoOpRecord after the activation")
	}
}

// TestKraftdActiveThenJVMControllerLong: kraftd nodes 1 and 2 of K,K,J start alone and
// one of them becomes the active controller; a broker registers with it. The Kafka 4.4.0
// controller then joins, replays everything kraftd wrote without a fault, and registers
// itself with kraftd (its RegisterControllerRecord, which a JVM writes only as the active
// controller's answer). Then the kraftd leader is killed -9: whoever leads next, the
// broker stays registered and the JVM controller logs no replay error. When the JVM took
// over, it is killed in turn once the kraftd node is back: kraftd activates on the log the
// JVM wrote to, keeps the broker's session and registers a second broker.
func TestKraftdActiveThenJVMControllerLong(t *testing.T) {
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	J, K := kafkatest.SideKafka, kafkatest.SideKraftd
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{K, K, J}, Controllers: true,
		KafkaFormatArgs: []string{"--release-version", "4.4-IV2"},
		KraftdProps:     kafkatest.Props{config.ActiveControllerKey: "true"}})
	q.Start(1)
	q.Start(2)
	leader, _, err := q.WaitLeaderAmong([]int32{1, 2}, 0, activeBound)
	if err != nil {
		t.Fatal(err)
	}
	brokers := q.StartBrokers(101)
	t.Cleanup(func() { keepBrokerLogs(t, q, brokers...) })
	cl := kafkatest.NewClient(t, brokers[0].Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	waitBrokers(t, ctx, cl, []int32{101})

	q.Start(3)
	if err := q.WaitLoaded(3, activeBound); err != nil {
		t.Fatal(err)
	}
	jvm := q.Node(3).Proc
	if err := jvm.WaitLog("Our registration has been persisted to the metadata log", activeBound); err != nil {
		t.Errorf("the JVM controller did not see its registration committed: %v", err)
	}
	noReplayFaults(t, jvm.Log())

	q.Kill(leader)
	next, epoch, err := q.WaitLeaderAmong([]int32{3 - leader, 3}, 0, activeBound)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after kraftd node %d was killed, node %d (%s) leads epoch %d", leader, next, q.Node(next).Side, epoch)
	waitBrokers(t, ctx, cl, []int32{101})
	noReplayFaults(t, jvm.Log())

	// Back to kraftd: the killed node restarts, the JVM controller is killed; a kraftd node
	// claims the log the JVM wrote to and keeps the broker's session (heartbeats), and a
	// second broker registers with it.
	q.Start(leader)
	if next == 3 {
		if _, err := q.WaitCaughtUp(0, activeBound); err != nil {
			t.Fatal(err)
		}
		q.Kill(3)
		next, epoch, err = q.WaitLeaderAmong([]int32{1, 2}, epoch, activeBound)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("after the JVM controller was killed, kraftd node %d leads epoch %d", next, epoch)
	}
	more := q.StartBrokers(102)
	brokers = append(brokers, more...)
	waitBrokers(t, ctx, cl, []int32{101, 102})
	time.Sleep(12 * time.Second) // longer than a session: heartbeats keep both registered
	waitBrokers(t, ctx, cl, []int32{101, 102})
}

// noReplayFaults fails on the lines a Kafka controller logs when a record does not replay.
func noReplayFaults(t *testing.T, log string) {
	t.Helper()
	for _, bad := range []string{"Unable to apply", "Error replaying", "fault handler"} {
		if i := strings.Index(log, bad); i >= 0 {
			t.Errorf("the JVM controller logged %q: %s", bad, log[i:min(len(log), i+400)])
		}
	}
}
