//go:build interopbench

package interop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/test/controllerload"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// TestBenchController is `make bench-controller`: three kraftd controllers (the active side
// on) against three Kafka 4.4.0 controllers, each driven over the wire by
// test/controllerload (simulated brokers, an admin client sending CreateTopics straight to
// the active controller, the processes' /proc), scenario by scenario, the systems'
// runs interleaved (their order alternating from run to run), a fresh quorum for every run:
//
//  1. create: topics created and committed per second (1-partition and 100-partition
//     topics, RF 3, 100 simulated brokers), open loops at offered rates and a closed loop,
//     CreateTopics latency p50/p99;
//  2. scale: the image built to 100k and 1M partitions on 1,000 brokers through
//     CreateTopics: the build rate, the controllers' RSS (the JVM's live heap too), the last
//     snapshot's write time and size, and after kill -9 of all three, how soon the restarted
//     quorum is active again;
//  3. failover: kill -9 of the active controller with 100k partitions, 1,000 brokers
//     heartbeating and creates offered: time to the next CreateTopics answered and to the next
//     broker heartbeat answered (first broker, every broker);
//  4. heartbeat: 1,000 brokers at 2 s heartbeats, nothing else: the active controller's CPU,
//     heartbeat p50/p99;
//  5. storm: 10% of 1,000 brokers stop heartbeating at once (100k partitions): time until
//     every partition they led has a new leader, and the records written.
//
// It writes README.md, a CSV per scenario and SVG plots to BENCH_CONTROLLER_DIR
// (docs/bench/controller). Only built with -tags interopbench: a measurement, not a test.
//
// Settings (environment): BENCH_CONTROLLER_SCENARIOS ("create,heartbeat,failover,scale,storm"),
// BENCH_CONTROLLER_SYSTEMS ("kraftd,kafka"), BENCH_CONTROLLER_ROUNDS (runs of each case per
// system, 1), BENCH_CONTROLLER_SECONDS (measured window, 30) and BENCH_CONTROLLER_WARMUP (10),
// BENCH_CONTROLLER_PROFILE_DIR (kraftd's CPU profile of the active controller over each
// measured window of create and heartbeat is written there), and per scenario the sizes
// named in their functions. BENCH_CONTROLLER_QUICK=1 is a smoke run of every scenario at a
// small scale (tens of brokers, thousands of partitions, 8 s windows) into a temporary
// directory unless BENCH_CONTROLLER_DIR is set: not the report's figures.
func TestBenchController(t *testing.T) {
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	b := &ctrlBench{t: t, env: env, quick: os.Getenv("BENCH_CONTROLLER_QUICK") == "1"}
	b.seconds = envInt(t, "BENCH_CONTROLLER_SECONDS", b.pick(30, 8))
	b.warmup = envInt(t, "BENCH_CONTROLLER_WARMUP", b.pick(10, 3))
	b.rounds = max(1, envInt(t, "BENCH_CONTROLLER_ROUNDS", 1))
	if b.profileDir = os.Getenv("BENCH_CONTROLLER_PROFILE_DIR"); b.profileDir != "" {
		if err := os.MkdirAll(b.profileDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b.systems = strings.Split(envString("BENCH_CONTROLLER_SYSTEMS", "kraftd,kafka"), ",")
	for _, s := range b.systems {
		if s != "kraftd" && s != "kafka" {
			t.Fatalf("BENCH_CONTROLLER_SYSTEMS: unknown system %q (kraftd, kafka)", s)
		}
	}
	dir := os.Getenv("BENCH_CONTROLLER_DIR")
	switch {
	case dir == "" && b.quick:
		var err error
		if dir, err = os.MkdirTemp("", "kraftd-bench-controller-"); err != nil {
			t.Fatal(err)
		}
	case dir == "":
		dir = "../../docs/bench/controller"
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	b.loadBefore = loadAverage()
	started := time.Now()
	scenarios := map[string]func(){
		"create": b.scenarioCreate, "heartbeat": b.scenarioHeartbeat, "failover": b.scenarioFailover,
		"scale": b.scenarioScale, "storm": b.scenarioStorm,
	}
	for _, s := range strings.Split(envString("BENCH_CONTROLLER_SCENARIOS", "create,heartbeat,failover,scale,storm"), ",") {
		run, ok := scenarios[s]
		if !ok {
			t.Fatalf("BENCH_CONTROLLER_SCENARIOS: unknown scenario %q", s)
		}
		b.order = append(b.order, s)
		run()
	}
	b.loadAfter = loadAverage()
	b.elapsed = time.Since(started)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	md := b.writeReport(dir)
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	fmt.Print(md)
	t.Logf("report in %s", dir)
}

// ctrlBench runs the controller scenarios and keeps their rows.
type ctrlBench struct {
	t                     *testing.T
	env                   *kafkatest.Env
	quick                 bool
	seconds, warmup       int
	rounds                int
	systems               []string
	profileDir            string
	order                 []string // scenarios in the order run
	rows                  []ctrlRow
	loadBefore, loadAfter string
	elapsed               time.Duration
	series                map[string][]seriesPoint // scale's RSS over the build, by CSV name
}

// pick is full's value, or quick's in a smoke run.
func (b *ctrlBench) pick(full, quick int) int {
	if b.quick {
		return quick
	}
	return full
}

// ctrlRow is one run of one system in one case of a scenario.
type ctrlRow struct {
	Scenario, Case, System string
	Values                 map[string]float64 // by column name (ctrlColumns)
	Note                   string
	Load                   float64 // the 1-minute load average during the run (mean of samples)
}

// interleave runs each case's runs, every system in turn, the order alternating from run
// to run so that neither system always runs first on a machine whose load drifts.
func (b *ctrlBench) interleave(cases []string, run func(sys, c string) ctrlRow) {
	b.interleaveRounds(b.rounds, cases, run)
}

// interleaveRounds is interleave with rounds runs of each case per system.
func (b *ctrlBench) interleaveRounds(rounds int, cases []string, run func(sys, c string) ctrlRow) {
	i := 0
	for _, c := range cases {
		for range rounds {
			for k := range b.systems {
				sys := b.systems[(i+k)%len(b.systems)]
				stop := sampleLoad()
				r := run(sys, c)
				r.Load = stop()
				r.System, r.Case = sys, c
				b.t.Logf("%s %s %s: %s load %.2f %s", r.Scenario, c, sys, formatValues(r.Values), r.Load, r.Note)
				b.rows = append(b.rows, r)
			}
			i++
		}
	}
}

// benchProps are both systems' settings: Kafka's defaults, including its thread pools
// (the harness's other tests shrink them; kraftd has none).
var benchProps = kafkatest.Props{"num.network.threads": "3", "num.io.threads": "8", "background.threads": "10"}

// ctrlQuorum is a running quorum of one system with its finder and usage samplers.
type ctrlQuorum struct {
	b        *ctrlBench
	side     kafkatest.Side
	q        *kafkatest.MixedRaft
	finder   *controllerload.Finder
	ctx      context.Context
	cancel   context.CancelFunc
	samplers map[int32]*controllerload.Sampler
}

// startQuorum starts three controllers of sys with props (over benchProps) and flags for
// the JVMs (nil: kafkatest.ShippedJVMFlags, Kafka's scripts' -Xmx1G and G1), waits for an
// active controller, and starts the high watermark poller and a usage sampler per node.
func (b *ctrlBench) startQuorum(sys string, props kafkatest.Props, jvmFlags []string) *ctrlQuorum {
	t := b.t
	side := kafkatest.Side(sys)
	if jvmFlags == nil {
		jvmFlags = kafkatest.ShippedJVMFlags
	}
	all := benchProps.Clone().Merge(props)
	q := b.env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{side, side, side}, Controllers: true,
		Props: all, KafkaJVMFlags: jvmFlags,
		KraftdProps: kafkatest.Props{config.ActiveControllerKey: "true", config.MetricsPprofKey: "true"},
		Metrics:     side == kafkatest.SideKraftd && b.profileDir != ""})
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	if _, _, err := q.WaitLeader(0, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	cq := &ctrlQuorum{b: b, side: side, q: q, samplers: map[int32]*controllerload.Sampler{}}
	cq.ctx, cq.cancel = context.WithCancel(context.Background())
	addrs := map[int32]string{}
	for _, n := range q.Nodes {
		addrs[n.ID] = n.Addr
	}
	cq.finder = controllerload.NewFinder(addrs)
	actx, cancel := context.WithTimeout(cq.ctx, 2*time.Minute)
	defer cancel()
	if _, _, err := cq.finder.Active(actx); err != nil {
		t.Fatalf("%s: no active controller: %v", sys, err)
	}
	go cq.finder.PollHighWatermark(cq.ctx, 200*time.Millisecond)
	for _, n := range q.Nodes {
		cq.samplers[n.ID] = controllerload.SampleUsage(cq.ctx, n.Proc.Pid(), time.Second)
	}
	return cq
}

// resample starts sampling node id's current process (after a restart).
func (cq *ctrlQuorum) resample(id int32) {
	if s := cq.samplers[id]; s != nil {
		s.Stop()
	}
	cq.samplers[id] = controllerload.SampleUsage(cq.ctx, cq.q.Node(id).Proc.Pid(), time.Second)
}

// stop stops the quorum (gracefully) and removes its logs.
func (cq *ctrlQuorum) stop() {
	cq.cancel()
	for _, s := range cq.samplers {
		s.Stop()
	}
	keepLogs(cq.b.t, cq.q)
	for _, n := range cq.q.Nodes {
		if n.Running() {
			if err := cq.q.Stop(n.ID); err != nil {
				cq.b.t.Logf("stop node %d: %v", n.ID, err)
			}
		}
		if err := os.RemoveAll(n.LogDir); err != nil {
			cq.b.t.Logf("remove node %d's log: %v", n.ID, err)
		}
	}
}

// active is the active controller's node id (waiting up to a minute for one).
func (cq *ctrlQuorum) active() int32 {
	ctx, cancel := context.WithTimeout(cq.ctx, time.Minute)
	defer cancel()
	_, id, err := cq.finder.Active(ctx)
	if err != nil {
		cq.b.t.Fatalf("%s: no active controller: %v", cq.side, err)
	}
	return id
}

// usage puts the active controller's and the busiest standby's CPU and RSS over [from, to]
// into v.
func (cq *ctrlQuorum) usage(v map[string]float64, active int32, from, to time.Time) {
	for id, s := range cq.samplers {
		u := s.Window(from, to)
		if id == active {
			v["active_cores"] = u.Cores
			v["active_rss_mb"] = float64(u.MaxRSS) / (1 << 20)
			continue
		}
		v["standby_cores"] = max(v["standby_cores"], u.Cores)
		v["standby_rss_mb"] = max(v["standby_rss_mb"], float64(u.MaxRSS)/(1<<20))
	}
}

// fleet starts n brokers heartbeating every interval and waits until all are unfenced.
func (cq *ctrlQuorum) fleet(n int, interval time.Duration) *controllerload.Fleet {
	f := controllerload.NewFleet(controllerload.FleetConfig{Brokers: n, HeartbeatInterval: interval, Racks: 0, Seed: 1}, cq.finder)
	f.Start(cq.ctx)
	ctx, cancel := context.WithTimeout(cq.ctx, 5*time.Minute)
	defer cancel()
	if err := f.WaitUnfenced(ctx, n); err != nil {
		cq.b.t.Fatalf("%s: %v", cq.side, err)
	}
	return f
}

// build creates partitions partitions in topics of per partitions each (RF 3), a closed
// loop of conns connections, and returns the seconds it took.
func (cq *ctrlQuorum) build(prefix string, partitions, per, conns int) float64 {
	start := time.Now()
	l := controllerload.StartLoad(cq.ctx, cq.finder, controllerload.CreateTopics(prefix, int32(per), 3),
		controllerload.LoadConfig{Conns: conns, Count: partitions / per, Retry: true, Timeout: time.Minute})
	<-l.Done()
	w := l.Summarize(start, time.Now().Add(time.Hour))
	if w.Parts != partitions/per*per {
		cq.b.t.Fatalf("%s: building %d partitions: %d created, errors by code %v", cq.side, partitions, w.Parts, w.Errors)
	}
	return time.Since(start).Seconds()
}

// profile writes a CPU profile and an allocation profile of kraftd node id over the next
// d, and its /metrics before and after, to the profile dir (a
// kraftd quorum with BENCH_CONTROLLER_PROFILE_DIR only); it returns at once, and what it
// returns waits for the profile.
func (cq *ctrlQuorum) profile(id int32, name string, d time.Duration) (wait func()) {
	if cq.side != kafkatest.SideKraftd || cq.b.profileDir == "" {
		return func() {}
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", cq.q.Node(id).MetricsPort)
	secs := int(d.Seconds())
	var wg sync.WaitGroup
	for _, p := range []struct{ url, file string }{
		{fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, secs), name + ".pprof"},
		{fmt.Sprintf("%s/debug/pprof/allocs?seconds=%d", base, secs), name + "-allocs.pprof"},
		{base + "/metrics", name + "-metrics-before.txt"},
	} {
		wg.Go(func() {
			if err := fetchTo(p.url, filepath.Join(cq.b.profileDir, p.file)); err != nil {
				cq.b.t.Logf("profile %s: %v", p.file, err)
			}
		})
	}
	return func() {
		wg.Wait()
		if err := fetchTo(base+"/metrics", filepath.Join(cq.b.profileDir, name+"-metrics-after.txt")); err != nil {
			cq.b.t.Logf("profile %s: %v", name, err)
		}
	}
}

func formatValues(v map[string]float64) string {
	var b strings.Builder
	for _, k := range sortedKeys(v) {
		fmt.Fprintf(&b, "%s=%s ", k, strconv.FormatFloat(v[k], 'g', 5, 64))
	}
	return b.String()
}
