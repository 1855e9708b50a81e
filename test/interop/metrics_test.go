package interop

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// TestMixedRaftMetrics: Kafka 4.4.0's raft-metrics, read from a JVM controller's JMX by
// Kafka's own JmxTool, and kraftd's /metrics (kafka_server_raft_metrics_*, the names the
// Prometheus JMX exporter gives that MBean) describe the same quorum state alike: leader,
// epoch, high watermark and log end (within what the leader's NoOps add between the
// reads), voters, each node's current-state; and kraftd names every attribute the JVM's
// MBean lists, and no other (checkRaftMetricNames). Then kraftd's /readyz through kill -9,
// restart and catch-up: a kraftd voter left without a quorum is unready, and ready again
// once the other kraftd voter restarted, caught up and the two elected a leader.
func TestMixedRaftMetrics(t *testing.T) {
	t.Parallel() // see interop/doc.go
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	K, J := kafkatest.SideKraftd, kafkatest.SideKafka
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{J, K, K}, Controllers: true, Metrics: true})
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	leader, epoch, err := q.WaitLeader(0, mixedElectionWait)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.WaitCommit(epoch, -1, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	// The JVM's JMX answers once its raft client registered the MBean; kraftd's
	// followers agree once they fetched in the epoch.
	var jvm, k2, k3 map[string]string
	for {
		// A JMX connection made while the JVM starts can hang: bound each read.
		readCtx, cancelRead := context.WithTimeout(ctx, 10*time.Second)
		jvm, err = jmxRaftMetrics(readCtx, env, q.Node(1).MetricsPort)
		cancelRead()
		if err == nil {
			k2, k3 = kraftdRaftMetrics(t, q.Node(2).MetricsPort), kraftdRaftMetrics(t, q.Node(3).MetricsPort)
			if sameQuorumState(jvm, k2, k3) {
				break
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("no agreement (last JMX error %v):\njvm %v\nkraftd 2 %v\nkraftd 3 %v", err, jvm, k2, k3)
		}
		time.Sleep(time.Second)
	}
	t.Logf("leader %d epoch %d; JVM raft-metrics %v", leader, epoch, jvm)
	for id, k := range map[int32]map[string]string{2: k2, 3: k3} {
		checkRaftMetricNames(t, id, id == leader, jvm, leader == 1, k)
	}
	for _, k := range []map[string]string{k2, k3} {
		for _, attr := range []string{"number-of-voters", "number-unknown-voter-connections"} {
			if !sameNumber(k[attr], jvm[attr]) {
				t.Errorf("%s: kraftd %s, Kafka %s", attr, k[attr], jvm[attr])
			}
		}
	}
	// Each node's current-state follows from the leader: the leader's is "leader", the
	// other voters' "follower", on either side.
	for id, m := range map[int32]map[string]string{1: jvm, 2: k2, 3: k3} {
		want := "follower"
		if id == leader {
			want = "leader"
		}
		if m["current-state"] != want {
			t.Errorf("node %d current-state %q, want %q (leader %d)", id, m["current-state"], want, leader)
		}
	}
	checkReadinessAfterCrash(t, q, epoch)
}

// Attributes of Kafka's raft-metrics MBean that kraftd does not export under that name, and
// why (docs/operating.md says so too).
var raftMetricsNotExported = map[string]string{
	"current-vote-directory-id": "a string: the Prometheus JMX exporter drops it too",
}

// raftMetricsLeaderOnly are the attributes Kafka registers only while it leads (and kraftd
// exports only while it leads): a follower JVM does not list them.
var raftMetricsLeaderOnly = []string{"number-of-observers", "uncommitted-voter-change"}

// checkRaftMetricNames: kraftd node id's raft-metrics (k) name every attribute the JVM's
// MBean lists, under the same name, and nothing the JVM would not list; the leader-only
// attributes are compared with the JVM's when it leads, else with raftMetricsLeaderOnly.
func checkRaftMetricNames(t *testing.T, id int32, kraftdLeads bool, jvm map[string]string, jvmLeads bool, k map[string]string) {
	t.Helper()
	for attr := range jvm {
		if _, ok := raftMetricsNotExported[attr]; ok {
			continue
		}
		if slices.Contains(raftMetricsLeaderOnly, attr) && !kraftdLeads {
			continue
		}
		if _, ok := k[attr]; !ok {
			t.Errorf("kraftd node %d exports no kafka_server_raft_metrics_%s (Kafka's attribute %s)", id, strings.ReplaceAll(attr, "-", "_"), attr)
		}
	}
	for attr := range k {
		_, inJVM := jvm[attr]
		leaderOnly := slices.Contains(raftMetricsLeaderOnly, attr)
		switch {
		case leaderOnly && !kraftdLeads:
			t.Errorf("kraftd node %d, a follower, exports the leader-only %s", id, attr)
		case inJVM || leaderOnly && !jvmLeads:
		default:
			t.Errorf("kraftd node %d exports kafka_server_raft_metrics_%s, which Kafka's raft-metrics MBean does not list", id, strings.ReplaceAll(attr, "-", "_"))
		}
	}
	if jvmLeads && !kraftdLeads {
		for _, attr := range raftMetricsLeaderOnly {
			if _, ok := jvm[attr]; !ok {
				t.Errorf("the JVM leader lists no %s: Kafka's leader-only attributes changed", attr)
			}
		}
	}
}

// checkReadinessAfterCrash kills the JVM and kraftd node 3 with SIGKILL: node 2 has no
// quorum and turns unready; node 3 restarts, catches up, and both are ready under a
// kraftd leader of a later epoch, on which their metrics agree.
func checkReadinessAfterCrash(t *testing.T, q *kafkatest.MixedRaft, epoch int32) {
	for _, id := range []int32{1, 3} {
		q.Kill(id)
	}
	waitReady(t, q.Node(2).MetricsPort, false, 20*time.Second)
	q.Start(3)
	for _, id := range []int32{2, 3} {
		waitReady(t, q.Node(id).MetricsPort, true, 30*time.Second)
	}
	k2, k3 := kraftdRaftMetrics(t, q.Node(2).MetricsPort), kraftdRaftMetrics(t, q.Node(3).MetricsPort)
	e, _ := strconv.Atoi(k2["current-epoch"])
	if !sameNumber(k2["current-leader"], k3["current-leader"]) || !sameNumber(k2["current-epoch"], k3["current-epoch"]) ||
		e <= int(epoch) || (k2["current-state"] != "leader") == (k3["current-state"] != "leader") {
		t.Errorf("after the crash: node 2 %v, node 3 %v (old epoch %d)", k2, k3, epoch)
	}
}

// waitReady polls a kraftd node's /readyz until its status says ready (200) or not (503).
func waitReady(t *testing.T, port int, ready bool, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", port))
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			last = fmt.Sprintf("%d %s", resp.StatusCode, body)
			if want := map[bool]int{true: http.StatusOK, false: http.StatusServiceUnavailable}[ready]; resp.StatusCode == want {
				t.Logf("port %d /readyz: %s", port, strings.Join(strings.Fields(string(body)), " "))
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("port %d /readyz never said ready=%v; last answer %s", port, ready, last)
}

// sameQuorumState: every node names the same leader and epoch, the same log end epoch,
// and high watermarks and log end offsets within a few of the JVM's (its leader appends a
// NoOp every 500 ms, and the reads are seconds apart).
func sameQuorumState(jvm map[string]string, kraftd ...map[string]string) bool {
	const slack = 20
	for _, k := range kraftd {
		for _, attr := range []string{"current-leader", "current-epoch", "log-end-epoch", "number-of-voters"} {
			if !sameNumber(k[attr], jvm[attr]) {
				return false
			}
		}
		for _, attr := range []string{"high-watermark", "log-end-offset"} {
			a, errA := strconv.ParseFloat(k[attr], 64)
			b, errB := strconv.ParseFloat(jvm[attr], 64)
			if errA != nil || errB != nil || a < 1 || math.Abs(a-b) > slack {
				return false
			}
		}
	}
	return !sameNumber(jvm["current-leader"], "-1")
}

// sameNumber compares values as numbers: JMX shows gauges as Java ints or doubles.
func sameNumber(a, b string) bool {
	x, errX := strconv.ParseFloat(a, 64)
	y, errY := strconv.ParseFloat(b, 64)
	return errX == nil && errY == nil && x == y
}

// jmxRaftMetrics reads kafka.server:type=raft-metrics with Kafka's JmxTool: attribute ->
// value as JMX shows it (numbers as doubles, current-state a string).
func jmxRaftMetrics(ctx context.Context, env *kafkatest.Env, port int) (map[string]string, error) {
	url := fmt.Sprintf("service:jmx:rmi:///jndi/rmi://127.0.0.1:%d/jmxrmi", port)
	out, err := env.RunTool(ctx, "org.apache.kafka.tools.JmxTool", "--jmx-url", url,
		"--object-name", "kafka.server:type=raft-metrics", "--one-time", "true", "--report-format", "properties")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	const prefix = "kafka.server:type=raft-metrics:"
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		if attr, v, ok := strings.Cut(strings.TrimPrefix(line, prefix), "="); ok {
			m[attr] = v
		}
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("no raft-metrics in JmxTool output %q", out)
	}
	return m, nil
}

// kraftdRaftMetrics scrapes a kraftd node's /metrics into Kafka's attribute names: the
// metric name's suffix with _ as -, and current-state from the series whose value is 1.
func kraftdRaftMetrics(t *testing.T, port int) map[string]string {
	t.Helper()
	m := map[string]string{}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Logf("scrape kraftd: %v", err)
		return m
	}
	defer resp.Body.Close()
	const prefix = "kafka_server_raft_metrics_"
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(name, prefix) {
			continue
		}
		name = strings.TrimPrefix(name, prefix)
		if state, ok := strings.CutPrefix(name, `current_state{state="`); ok {
			if v == "1" {
				m["current-state"] = strings.TrimSuffix(state, `"}`)
			}
			continue
		}
		m[strings.ReplaceAll(name, "_", "-")] = v
	}
	return m
}
