//go:build interopbench && interoplong

package interop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// clusterRow is one run of TestControllerClusterBench.
type clusterRow struct {
	side                         kafkatest.Side
	active, topic, fence, failov time.Duration
	activeCPU, allCPU            float64 // cores over the window: the active controller, all three
	activeRSS, maxRSS            int64   // bytes at the window's end: the active controller, the largest
	load                         string
}

// TestControllerClusterBench is the active controller's cluster figures, side by side: three
// kraftd controllers (the active side on) and three Kafka 4.4.0 controllers, each quorum with
// the same three Kafka 4.4.0 brokers (fresh directories each run), the systems' runs
// alternating, BENCH_CLUSTER_ROUNDS (3) runs each; the JVM controllers with the flags Kafka's
// scripts give them (kafkatest.ShippedJVMFlags), the brokers with the harness's:
//
//   - start to active: from starting the three controllers to the active controller's
//     activation line (millisecond log timestamps);
//   - start to a created topic: from the same start, brokers started once a controller is
//     active, to the first CreateTopics (6 partitions, 3 replicas) a broker answers;
//   - controller CPU and RSS: an idempotent acks=all producer (about 500 records/s) and a
//     consumer group run for BENCH_CLUSTER_SECONDS (30); CPU of the active controller and of
//     all three over that window, RSS at its end;
//   - broker fencing: kill -9 of the broker leading the most partitions, to its absence from
//     every live broker's Metadata (Kafka's defaults: session 9 s, heartbeat 2 s);
//   - controller failover: kill -9 of the active controller, to the next CreateTopics a
//     broker answers (a new client every attempt, 20 ms between failures).
//
// It writes a Markdown table to BENCH_CLUSTER_REPORT (docs/bench/controller/cluster.md).
// A measurement, built with -tags interopbench,interoplong:
//
//	cd test && go test -tags interopbench,interoplong -run TestControllerClusterBench -v -timeout 60m ./interop/
func TestControllerClusterBench(t *testing.T) {
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	rounds := envInt(t, "BENCH_CLUSTER_ROUNDS", 3)
	window := time.Duration(envInt(t, "BENCH_CLUSTER_SECONDS", 30)) * time.Second
	var rows []clusterRow
	for r := range rounds {
		sides := []kafkatest.Side{kafkatest.SideKraftd, kafkatest.SideKafka}
		if r%2 == 1 {
			slices.Reverse(sides)
		}
		for _, side := range sides {
			t.Run(fmt.Sprintf("%s-%d", side, r+1), func(t *testing.T) {
				row := clusterRound(t, env, side, window)
				t.Logf("%s: active %v, topic %v, CPU %.3f active / %.3f all cores, RSS %d MB active / %d MB max, fenced %v, failover %v (load %s)",
					side, row.active, row.topic, row.activeCPU, row.allCPU, row.activeRSS>>20, row.maxRSS>>20, row.fence, row.failov, row.load)
				rows = append(rows, row)
			})
		}
	}
	md := clusterReport(rows, window)
	t.Log("\n" + md)
	out, err := filepath.Abs(envString("BENCH_CLUSTER_REPORT", "../../docs/bench/controller/cluster.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
}

func clusterRound(t *testing.T, env *kafkatest.Env, side kafkatest.Side, window time.Duration) clusterRow {
	row := clusterRow{side: side, load: procLoadAverage()}
	mc := kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{side, side, side}, Controllers: true,
		KafkaJVMFlags: kafkatest.ShippedJVMFlags}
	if side == kafkatest.SideKraftd {
		mc.KraftdProps = kafkatest.Props{config.ActiveControllerKey: "true"}
	}
	q := env.NewMixedRaft(t, mc)
	start := time.Now()
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	_, _, at, err := q.WaitActiveNode(0, activeBound)
	if err != nil {
		t.Fatal(err)
	}
	row.active = at.Sub(start.Truncate(time.Millisecond))
	ids := []int32{101, 102, 103}
	bs := q.StartBrokers(ids...)
	brokers := map[int32]*kafkatest.Broker{}
	var seeds []string
	for _, b := range bs {
		brokers[b.NodeID] = b
		seeds = append(seeds, b.Addr)
	}
	t.Cleanup(func() { keepBrokerLogs(t, q, bs...) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	minISR := "2"
	if err := createTopicWith(ctx, seeds, loadTopic, 6, 3, map[string]*string{"min.insync.replicas": &minISR}, probeRetry); err != nil {
		t.Fatal(err)
	}
	row.topic = time.Since(start)

	cl := kafkatest.NewClient(t, seeds...)
	waitBrokers(t, ctx, cl, ids)
	p := startLoad(t, ctx, seeds)
	startGroupReader(t, ctx, seeds)
	p.waitAcked(t, 500)
	active, _, _, err := q.WaitActiveNode(0, activeBound)
	if err != nil {
		t.Fatal(err)
	}
	before := map[int32]kafkatest.Usage{}
	for _, n := range q.Nodes {
		if before[n.ID], err = n.Proc.Usage(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(window)
	for _, n := range q.Nodes {
		u, err := n.Proc.Usage()
		if err != nil {
			t.Fatal(err)
		}
		cores := (u.CPU - before[n.ID].CPU).Seconds() / window.Seconds()
		row.allCPU += cores
		row.maxRSS = max(row.maxRSS, u.RSS)
		if n.ID == active {
			row.activeCPU, row.activeRSS = cores, u.RSS
		}
	}

	victim := mostLeader(t, ctx, cl)
	brokers[victim].Kill()
	killed := time.Now()
	var live []*kafkatest.Broker
	for _, b := range bs {
		if b.NodeID != victim {
			live = append(live, b)
		}
	}
	row.fence = waitUnlisted(t, ctx, live, victim, killed)

	if active, _, _, err = q.WaitActiveNode(0, activeBound); err != nil {
		t.Fatal(err)
	}
	q.Kill(active)
	killed = time.Now()
	var liveSeeds []string
	for _, b := range live {
		liveSeeds = append(liveSeeds, b.Addr)
	}
	// Two brokers of three: the probe's replication factor is 2.
	if err := createTopicWith(ctx, liveSeeds, "failover-probe", 1, 2, nil, probeRetry); err != nil {
		t.Fatal(err)
	}
	row.failov = time.Since(killed)
	p.stop(t, ctx)
	return row
}

// probeRetry: the timed creates retry every 20 ms, with a new client each attempt
// (createTopicWith), so the figures are not rounded up to a coarse retry.
const probeRetry = 20 * time.Millisecond

// clusterReport is the runs' table and each figure's median per system.
func clusterReport(rows []clusterRow, window time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# The active controller in a cluster: kraftd beside Kafka 4.4.0\n\n")
	fmt.Fprintf(&b, "`cd test && go test -tags interopbench,interoplong -run TestControllerClusterBench -v -timeout 60m ./interop/`"+
		" (test/interop/controller_cluster_bench_test.go): three controllers of each system, each with three Kafka 4.4.0 brokers,"+
		" the systems' runs alternating; a producer at about 500 records/s and a consumer group during a %v window; Kafka's defaults"+
		" (session 9 s, heartbeat 2 s, fetch timeout 2 s); the JVM controllers as Kafka's scripts start them (-Xmx1G -Xms1G, G1),"+
		" the brokers (the same for both) with the harness's small heaps.\n\n", window)
	b.WriteString("| run | system | start to active | start to created topic | active controller CPU (cores) | all three CPU | active RSS (MB) | broker kill -9 to fenced | controller kill -9 to next CreateTopics | load (1, 5, 15 min) |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for i, r := range rows {
		fmt.Fprintf(&b, "| %d | %s | %v | %v | %.3f | %.3f | %.0f | %v | %v | %s |\n", i+1, r.side,
			r.active.Round(time.Millisecond), r.topic.Round(10*time.Millisecond), r.activeCPU, r.allCPU, float64(r.activeRSS)/(1<<20),
			r.fence.Round(10*time.Millisecond), r.failov.Round(time.Millisecond), r.load)
	}
	b.WriteString("\nMedians, kraftd / Kafka:\n\n| figure | kraftd | Kafka | ratio |\n|---|---|---|---|\n")
	med := func(side kafkatest.Side, f func(clusterRow) float64) float64 {
		var v []float64
		for _, r := range rows {
			if r.side == side {
				v = append(v, f(r))
			}
		}
		return median(v)
	}
	for _, f := range []struct {
		name string
		get  func(clusterRow) float64
		unit string
	}{
		{"start to active (s)", func(r clusterRow) float64 { return r.active.Seconds() }, "%.3f"},
		{"start to created topic (s)", func(r clusterRow) float64 { return r.topic.Seconds() }, "%.2f"},
		{"active controller CPU (cores)", func(r clusterRow) float64 { return r.activeCPU }, "%.3f"},
		{"all three controllers' CPU (cores)", func(r clusterRow) float64 { return r.allCPU }, "%.3f"},
		{"active controller RSS (MB)", func(r clusterRow) float64 { return float64(r.activeRSS) / (1 << 20) }, "%.0f"},
		{"broker kill -9 to fenced (s)", func(r clusterRow) float64 { return r.fence.Seconds() }, "%.2f"},
		{"controller kill -9 to next CreateTopics (s)", func(r clusterRow) float64 { return r.failov.Seconds() }, "%.3f"},
	} {
		k, j := med(kafkatest.SideKraftd, f.get), med(kafkatest.SideKafka, f.get)
		fmt.Fprintf(&b, "| %s | "+f.unit+" | "+f.unit+" | %.2f |\n", f.name, k, j, k/j)
	}
	return b.String()
}
