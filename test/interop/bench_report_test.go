//go:build interopbench

package interop

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// TestBenchReport is `make bench-report`: kraftd test-kraft-server-start, Kafka 4.4.0
// TestRaftServer and etcd raft (bench/peers: go.etcd.io/raft with etcd's WAL, three nodes
// in one process), at each linger of BENCH_REPORT_LINGERS (kraftd's and Kafka's
// controller.quorum.append.linger.ms; etcd has none and runs once, at the first):
//
//  1. a sweep: every system at each offered rate of BENCH_REPORT_RATES, one after another
//     (their order rotating from rate to rate), and at the first linger the contention
//     runs (see contention);
//  2. a search for each system's highest sustained rate (sustained: an open loop that
//     committed within 2% of its offered rate with p99 below BENCH_REPORT_P99_BOUND_MS),
//     bisecting between the sweep's highest sustained rate and the next one it did not
//     sustain (search.go's searchMax);
//  3. overload: each system offered BENCH_REPORT_OVERLOAD times its own highest sustained
//     rate; and kraftd offered Kafka's highest sustained rate (the latency goal's point);
//
// then a Markdown report with SVG plots (drawn by cmd/plot) in BENCH_REPORT_DIR: the
// summary and the goals first, then each linger's rows. Only built with -tags
// interopbench: a measurement of about 80 minutes, not a test.
//
// Settings (environment): BENCH_REPORT_LINGERS ("0,25"; BENCH_REPORT_LINGER_MS=N, the
// older setting, means "N"), BENCH_REPORT_RATES (records/s, 0 = as fast as each commits;
// default "20000,100000,200000,300000,400000"; "-" for none), BENCH_REPORT_DIR
// (default docs/bench, beside the README), BENCH_REPORT_SYSTEMS ("kraftd,kafka,etcd"),
// BENCH_REPORT_KAFKA_MAX (what TestRaftServer, which has no unthrottled mode, is offered at
// rate 0; 240000), BENCH_REPORT_P99_BOUND_MS (1000), BENCH_REPORT_SEARCH_STEPS (bisection
// runs per system and linger, 3; 0: the sweep's best is the maximum), BENCH_REPORT_OVERLOAD
// ("1.25,1.5"; "-" for none), BENCH_REPORT_CONTENTION_RATES (rates run again with one
// spinning process per core beside the quorum, in a session of their own and in the
// quorum's, at the first linger: see contention; "20000"; "-" for none),
// BENCH_REPORT_CONTENTION_RUNS (how many times each system runs at each of those in each
// arrangement, quiet included, interleaved; 3), and BENCH_INTEROP_RECORD_SIZE,
// BENCH_INTEROP_SECONDS and BENCH_INTEROP_WARMUP as for TestBenchInterop (etcd's window is
// at most 30 s).
//
// BENCH_REPORT_QUICK=1 is a smoke run of every step in about 12 minutes: 8 s windows after
// a 4 s warm-up, rates "50000,200000", one search step, no contention, and, unless
// BENCH_REPORT_DIR is set, the report goes to a temporary directory (its figures are not
// the report's). Any setting given explicitly still wins.
func TestBenchReport(t *testing.T) {
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	quick := os.Getenv("BENCH_REPORT_QUICK") == "1"
	def := func(full, smoke string) string {
		if quick {
			return smoke
		}
		return full
	}
	defInt := func(full, smoke int) int {
		if quick {
			return smoke
		}
		return full
	}
	c := &reportRunner{t: t, env: env,
		size:     envInt(t, "BENCH_INTEROP_RECORD_SIZE", 256),
		seconds:  envInt(t, "BENCH_INTEROP_SECONDS", defInt(30, 8)),
		warmup:   envInt(t, "BENCH_INTEROP_WARMUP", defInt(10, 4)),
		kafkaMax: envInt(t, "BENCH_REPORT_KAFKA_MAX", 240000),
		p99Bound: float64(envInt(t, "BENCH_REPORT_P99_BOUND_MS", 1000)),
	}
	searchSteps := envInt(t, "BENCH_REPORT_SEARCH_STEPS", defInt(3, 1))
	lingerList := envString("BENCH_REPORT_LINGERS", "0,25")
	if v := os.Getenv("BENCH_REPORT_LINGER_MS"); v != "" && os.Getenv("BENCH_REPORT_LINGERS") == "" {
		lingerList = v
	}
	lingers := envList(t, "BENCH_REPORT_LINGERS", lingerList, 0)
	if len(lingers) == 0 {
		t.Fatal("BENCH_REPORT_LINGERS: at least one linger")
	}
	var dir string
	if d := os.Getenv("BENCH_REPORT_DIR"); d == "" && quick {
		var err error
		if dir, err = os.MkdirTemp("", "kraftd-bench-report-"); err != nil {
			t.Fatal(err)
		}
	} else {
		var err error
		if dir, err = filepath.Abs(envString("BENCH_REPORT_DIR", "../../docs/bench")); err != nil {
			t.Fatal(err)
		}
	}
	rates := envList(t, "BENCH_REPORT_RATES", def("20000,100000,200000,300000,400000", "50000,200000"), 0)
	overload := envFactors(t, "BENCH_REPORT_OVERLOAD", "1.25,1.5")
	systems := strings.Split(envString("BENCH_REPORT_SYSTEMS", "kraftd,kafka,etcd"), ",")
	for _, s := range systems {
		switch s {
		case "etcd":
			c.peers = buildPeers(t)
		case "kraftd", "kafka":
		default:
			t.Fatalf("BENCH_REPORT_SYSTEMS: unknown system %q (kraftd, kafka, etcd)", s)
		}
	}
	contended := envList(t, "BENCH_REPORT_CONTENTION_RATES", def("20000", "-"), 1)
	// One run is a poor sample at the rates the latency goals are judged at: its p99 is the
	// worst 5 s window's, and a single stall of the machine decides it. At each contention
	// rate each system runs busyRuns times in each arrangement, quiet included,
	// interleaved, and its row is the run of the median p99.
	busyRuns := envInt(t, "BENCH_REPORT_CONTENTION_RUNS", 3)
	c.loadBefore = loadAverage()
	c.diskBefore = probeDisk()
	started := time.Now()

	// systemsAt are the systems that run at linger index li: etcd, which has no linger,
	// only at the first.
	systemsAt := func(li int) []string {
		if li == 0 {
			return systems
		}
		return slices.DeleteFunc(slices.Clone(systems), func(s string) bool { return s == "etcd" })
	}
	for li, linger := range lingers {
		// 1. The sweep.
		type run struct {
			rate int
			busy contention
		}
		var runs []run
		for _, r := range rates {
			runs = append(runs, run{r, quiet})
		}
		if li == 0 {
			for _, r := range contended {
				for i := range max(busyRuns, 1) {
					// The quiet run at a contention rate is repeated too: the quiet and the
					// contended rows at that rate are then the same statistic.
					if i > 0 || !slices.Contains(rates, r) {
						runs = append(runs, run{r, quiet})
					}
					runs = append(runs, run{r, busyApart}, run{r, busyInSession})
				}
			}
		}
		sys := systemsAt(li)
		for i, ru := range runs {
			for k := range sys {
				c.run(sys[(i+k)%len(sys)], ru.rate, linger, ru.busy, "")
			}
		}
		// 2. and 3. The search for each system's highest sustained rate, then overload.
		for _, s := range sys {
			best, ok := c.searchMax(s, linger, searchSteps)
			if !ok {
				continue
			}
			for _, f := range overload {
				// A rate already run (the sweep's or the search's) is not run again.
				if rate := roundRate(f * float64(best.Offered)); !c.ran(s, linger, rate) {
					c.run(s, rate, linger, quiet, fmt.Sprintf("%gx its highest sustained", f))
				}
			}
		}
		// kraftd at Kafka's highest sustained rate: the latency goal's comparison.
		if kb, ok := c.best("kafka", linger); ok && slices.Contains(sys, "kraftd") {
			if !c.ran("kraftd", linger, kb.Offered) {
				c.run("kraftd", kb.Offered, linger, quiet, "at Kafka's highest sustained")
			}
		}
	}
	c.loadAfter = loadAverage()
	c.diskAfter = probeDisk()
	c.elapsed = time.Since(started)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	md := c.writeReport(dir, lingers, overload)
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	fmt.Print(md)
	t.Logf("report in %s", dir)
}

// reportRunner runs the report's measurements and keeps their rows.
type reportRunner struct {
	t                     *testing.T
	env                   *kafkatest.Env
	peers                 string // bench/peers binary, when etcd runs
	size, seconds, warmup int
	kafkaMax              int
	p99Bound              float64 // ms: a sustained rate's p99 is below it
	rows                  []reportRow
	loadBefore, loadAfter string
	diskBefore, diskAfter string
	elapsed               time.Duration
	searchNotes           []string
	maxes                 map[string]reportRow // the search's result by maxKey
}

// run measures one system at one offered rate and linger and keeps the row (etcd's linger
// is -1: it has none). why names the step that asked for it ("" for the sweep).
func (c *reportRunner) run(sys string, rate, linger int, busy contention, why string) reportRow {
	t := c.t
	props := kafkatest.Props{"controller.quorum.append.linger.ms": strconv.Itoa(linger)}
	stopBusy := busy.start(t)
	stopLoad := sampleLoad()
	var r reportRow
	switch sys {
	case "kraftd":
		var args []string
		if rate == 0 {
			args = []string{"--max-in-flight", "1000"}
		}
		r = fromBenchRow(runBench(t, c.env, kafkatest.SideKraftd, "", rate, c.size, props, args, c.seconds, c.warmup), c.seconds)
	case "kafka":
		offered := rate
		if rate == 0 {
			offered = c.kafkaMax
		}
		r = fromBenchRow(runBench(t, c.env, kafkatest.SideKafka, "", offered, c.size, props, nil, c.seconds, c.warmup), c.seconds)
		if rate == 0 {
			r.Note = strings.TrimSpace(fmt.Sprintf("offered %d/s (no unthrottled mode) %s", c.kafkaMax, r.Note))
		}
	case "etcd":
		r = runPeers(t, c.peers, rate, c.size, min(c.seconds, 30), c.warmup)
		linger = -1
	}
	r.Load = stopLoad()
	stopBusy()
	// The system column names the plots' lines: unthrottled and contended runs are points
	// of their own, not points on the line of offered rates.
	r.System, r.Offered, r.OpenLoop, r.Linger, r.Why = sys, rate, rate, linger, why
	if sys == "kafka" && rate == 0 {
		r.OpenLoop = c.kafkaMax
	}
	switch {
	case busy != quiet:
		r.System += busy.suffix()
	case rate == 0:
		r.System += " unthrottled"
	}
	t.Logf("%s at %s, linger %d: %.0f records/s (leader's own %.0f), p50 %.2f p99 %.2f ms, %.2f cores and %.0f MB per node (max), load %.2f %s %s",
		r.System, offeredText(rate), linger, r.Committed, r.Reported, r.P50, r.P99, r.CoresPerNode, r.RSSPerNode, r.Load, why, r.Note)
	c.rows = append(c.rows, r)
	return r
}

// contention is what runs beside the quorum in a run: nothing, or one spinning process per
// core, either in a session of its own or in the session of the quorum's processes. Which
// one matters on Linux with sched_autogroup_enabled: the scheduler first shares the CPU
// fairly between sessions, then between the threads of a session. Spinning processes
// started apart (as another service or user's job on the host) are a session of their own,
// so the quorum's session keeps half the machine; in the quorum's session (as a job started
// from the same shell) every spinner weighs as much as each of the quorum's threads.
// (In that arrangement on this project's test machine, kernel workers of the root group
// that an fdatasync completes through, ext4's unwritten-extent conversion and the block
// layer's per-CPU high-priority flush worker among them, were seen waiting 100 ms to 2 s
// for a CPU held by a spinner whenever other threads of the session woke often; a plain
// append-and-fdatasync loop shows it with no quorum at all: cmd/fsyncstall.)
type contention int

const (
	quiet contention = iota
	busyApart
	busyInSession
)

func (c contention) suffix() string {
	switch c {
	case busyApart:
		return " busy"
	case busyInSession:
		return " busy in-session"
	}
	return ""
}

// isBusy reports whether a row's system names a contended run.
func isBusy(system string) bool { return strings.Contains(system, " busy") }

// spinEnv makes the test binary a spinning process (see init).
const spinEnv = "KRAFTD_BENCH_SPIN"

func init() {
	if os.Getenv(spinEnv) == "1" {
		for x := uint64(1); ; {
			x ^= x << 13
		}
	}
}

// start starts the contention, one spinning process per core (this test binary again,
// see init), and returns what stops it.
func (c contention) start(t *testing.T) (stop func()) {
	if c == quiet {
		return func() {}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	for range runtime.NumCPU() {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), spinEnv+"=1", "GOMAXPROCS=1")
		// Killed with the harness if it dies first; apart, a session of its own.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: c == busyApart, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatalf("start a spinning process: %v", err)
		}
		cmds = append(cmds, cmd)
	}
	return func() {
		for _, cmd := range cmds {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
}

// medianRun is the run of the median p99 (the lower middle one of an even count; a run
// without a p99 counts as the worst), noting every run's p99.
func medianRun(runs []reportRow) reportRow {
	if len(runs) == 1 {
		return runs[0]
	}
	p99 := func(r reportRow) float64 {
		if math.IsNaN(r.P99) {
			return math.Inf(1)
		}
		return r.P99
	}
	sorted := slices.Clone(runs)
	slices.SortStableFunc(sorted, func(a, b reportRow) int { return cmp.Compare(p99(a), p99(b)) })
	m := sorted[(len(sorted)-1)/2]
	all := make([]string, len(runs))
	for i, r := range runs {
		all[i] = strconv.FormatFloat(r.P99, 'f', 1, 64)
	}
	m.Note = strings.TrimSpace(fmt.Sprintf("median of %d runs by p99 (p99 ms in run order: %s) %s", len(runs), strings.Join(all, ", "), m.Note))
	return m
}

// reportRow is one system at one offered rate.
type reportRow struct {
	System       string
	Offered      int // 0: as fast as it commits
	Committed    float64
	P50, P99     float64 // ms; NaN when not reported
	CoresPerNode float64 // the busiest node's
	CPUPerRecord float64 // CPU µs per committed record, all nodes together
	RSSPerNode   float64 // MB, the largest node's
	Note         string
	OpenLoop     int     // the rate an open loop was offered (Kafka's at max too); 0: a closed loop
	Reported     float64 // the leader's own report of its committed records/s (kraftd, Kafka)
	Linger       int     // controller.quorum.append.linger.ms; -1: none (etcd)
	Load         float64 // the 1-minute load average during the run (mean of samples)
	Why          string  // the step that ran it: "" (the sweep), search, overload
}

func fromBenchRow(b benchRow, seconds int) reportRow {
	r := reportRow{Committed: b.RecsPerS, Reported: b.Reported, P50: b.P50, P99: b.P99, Note: b.Note}
	var cpu float64
	for _, n := range b.Nodes {
		cpu += n.CPU.Seconds()
		r.CoresPerNode = math.Max(r.CoresPerNode, n.CPU.Seconds()/float64(seconds))
		r.RSSPerNode = math.Max(r.RSSPerNode, float64(n.Peak)/(1<<20))
	}
	if b.RecsPerS > 0 {
		r.CPUPerRecord = cpu / float64(seconds) / b.RecsPerS * 1e6
	}
	if b.Side == kafkatest.SideKafka {
		r.P50 = math.NaN() // TestRaftServer prints no p50
	}
	return r
}

// peersGODEBUG is the GODEBUG etcd's quorum runs with: the runtime setting kraftd's node
// commands apply to themselves (schedtrace keeps Go's sysmon out of the deep sleep that
// every wake-up from idle turns into 20 us polling; docs/operating.md), so both Go
// systems run on the same runtime settings.
func peersGODEBUG(cur string) string {
	if strings.Contains(cur, "schedtrace") {
		return "GODEBUG=" + cur
	}
	if cur == "" {
		return "GODEBUG=schedtrace=2147483647"
	}
	return "GODEBUG=" + cur + ",schedtrace=2147483647"
}

// buildPeers builds bench/peers (its own module: etcd's dependencies stay out of
// kraftd's) and returns the binary.
func buildPeers(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "peers")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = "../../bench/peers"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build bench/peers: %v\n%s", err, out)
	}
	return bin
}

// runPeers runs etcd raft's quorum (three nodes in one process) and reads its RESULT line.
// Its latency runs from each record's intended send time in rate mode, as kraftd's does
// from its due time, and is reported per 5 s window like kraftd's and Kafka's (the median
// window's p50, the worst window's p99); its CPU and RSS are the process's, shared by the
// three nodes, so per node they are a third.
func runPeers(t *testing.T, bin string, rate, size, seconds, warmup int) reportRow {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(seconds+warmup+60)*time.Second)
	defer cancel()
	args := []string{"-system", "etcd", "-rate", strconv.Itoa(rate), "-size", strconv.Itoa(size),
		"-duration", fmt.Sprintf("%ds", seconds), "-warmup", fmt.Sprintf("%ds", warmup)}
	if rate == 0 {
		args = append(args, "-inflight", "1000")
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), peersGODEBUG(os.Getenv("GODEBUG")))
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Logf("peers failed: %v\n%s", err, stderr)
		return reportRow{P50: math.NaN(), P99: math.NaN(), Note: fmt.Sprintf("peers failed: %v", err)}
	}
	kv, err := parseResult(out)
	if err != nil {
		t.Fatalf("peers: %v\n%s", err, out)
	}
	num := func(k string) float64 {
		if v, ok := kv[k]; ok {
			return v
		}
		return math.NaN() // "-": no full window
	}
	r := reportRow{Committed: kv["rate_per_s"], P50: num("win_p50_median_ms"), P99: num("win_p99_max_ms"),
		CoresPerNode: kv["cpu_cores"] / 3, RSSPerNode: kv["rss_mb"] / 3}
	if r.Committed > 0 {
		r.CPUPerRecord = kv["cpu_cores"] / r.Committed * 1e6
	}
	if kv["lost"] > 0 {
		r.Note = fmt.Sprintf("%.0f proposed records not applied", kv["lost"])
	}
	return r
}

// parseResult reads the numeric fields of peers' "RESULT k=v ..." line ("-" fields are
// left out).
func parseResult(out []byte) (map[string]float64, error) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "RESULT ")
		if !ok {
			continue
		}
		kv := map[string]float64{}
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				kv[k] = x
			}
		}
		return kv, nil
	}
	return nil, fmt.Errorf("no RESULT line")
}

func offeredText(rate int) string {
	if rate == 0 {
		return "max"
	}
	return fmt.Sprintf("%d/s", rate)
}
