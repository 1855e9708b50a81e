// Command benchquorum measures a local 3-node kraftd quorum (make
// bench-quorum): three `controller test-kraft-server-start` processes on
// 127.0.0.1 with fsync'd logs, one scenario at a time, each repeated -runs
// times; it prints the median of the runs.
//
// Scenarios (the goals):
//
//	a0   20,000 records/s offered, controller.quorum.append.linger.ms=0
//	a25  20,000 records/s offered, linger 25 ms (Kafka's default)
//	b    --throughput 0 --max-in-flight 1000 (as fast as the quorum commits)
//	h0   320,000 records/s offered (about the highest rate it sustains), linger 0
//	h25  320,000 records/s offered, linger 25 ms
//	o25  480,000 records/s offered (overload), linger 25 ms
//	x0   400,000 records/s offered, linger 0 (with -count-log -retention
//	     on|off: the leader's own stats against a follower's log)
//
// Throughput is the leader's committed records/s over the measured window
// (its periodic stats after the warm-up); latency percentiles come from the
// leader's summary histogram (appends after the warm-up); CPU cores = CPU
// seconds / wall seconds per node; peak RSS per node from getrusage.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/kraftd/kraftd/workload"
)

type scenario struct {
	name, desc  string
	throughput  int
	linger      int
	maxInFlight int
}

var scenarios = []scenario{
	{"a0", "20000 rec/s, linger 0", 20000, 0, 10000},
	{"a25", "20000 rec/s, linger 25ms", 20000, 25, 10000},
	{"b", "unthrottled, max in flight 1000", 0, 0, 1000},
	{"h0", "320000 rec/s, linger 0", 320000, 0, 10000},
	{"h25", "320000 rec/s, linger 25ms", 320000, 25, 10000},
	{"o25", "480000 rec/s (overload), linger 25ms", 480000, 25, 10000},
	{"x0", "400000 rec/s, linger 0", 400000, 0, 10000},
}

type result struct {
	recPerSec, p50, p99, p999, max float64
	cpuCores, rssMB                [3]float64
	leader                         int32
	count                          *logCount // -count-log
}

// benchOptions are the flags of the measured scenarios.
type benchOptions struct {
	bin                         string // absolute path of the controller binary
	runs                        int
	seconds, warmup, recordSize int
	profileDir                  string
	keep                        bool
	protocols                   []string // -security, interleaved run by run
	csvDir                      string   // -csv: each run's stats time series
	countLog                    bool     // -count-log
}

func main() {
	var o benchOptions
	bin := flag.String("bin", "bin/controller", "controller binary")
	flag.IntVar(&o.seconds, "seconds", 30, "measured seconds per run (after the warm-up)")
	flag.IntVar(&o.warmup, "warmup", 5, "seconds before measuring (election, first appends)")
	flag.IntVar(&o.runs, "runs", 3, "runs per scenario (median reported)")
	only := flag.String("scenarios", "a0,a25,b", "comma-separated scenarios: a0, a25, b, h0, h25, o25, failover (leader SIGTERM vs kill -9 with Kafka's default timeouts)")
	flag.IntVar(&o.recordSize, "record-size", 256, "record size in bytes")
	flag.StringVar(&o.profileDir, "cpuprofile-dir", "", "write each node's CPU profile of the first run of each scenario here")
	flag.BoolVar(&o.keep, "keep", false, "keep the data dirs and logs")
	flag.StringVar(&o.csvDir, "csv", "", "write each run's per-second stats of every node to DIR/SCENARIO-PROTOCOL-runN.csv (and failovers to DIR/failover.csv); plot with go run ./cmd/plot")
	flag.Var(&nodeArgs, "node-arg", "extra test-kraft-server-start flag for every node (repeatable)")
	propsFile := flag.String("props", "", "properties file appended to every node's config")
	flag.BoolVar(&o.countLog, "count-log", false, "also count each run's committed records in a follower's log over the leader's measured span (as make bench-report does); needs -retention off for a complete count")
	retention := flag.String("retention", "on", "log retention: on (the product's default: segments a snapshot covers are deleted) or off (every segment kept)")
	security := flag.String("security", "PLAINTEXT", "controller listener protocols to compare, comma-separated (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL): each run of a scenario runs once per protocol, interleaved")
	flag.Parse()
	var err error
	if o.protocols, err = parseProtocols(*security); err != nil {
		fatal(err)
	}
	if *propsFile != "" {
		b, err := os.ReadFile(*propsFile)
		if err != nil {
			fatal(err)
		}
		extraProps = string(b) + "\n"
	}
	switch *retention {
	case "on":
	case "off":
		extraProps += retentionOffProps
	default:
		fatal(fmt.Errorf("-retention %q: want on or off", *retention))
	}
	if o.runs < 1 || o.seconds < 1 || o.warmup < 0 || o.recordSize < 1 {
		fatal(fmt.Errorf("-runs %d, -seconds %d, -warmup %d, -record-size %d: want runs, seconds and record size >= 1, warm-up >= 0",
			o.runs, o.seconds, o.warmup, o.recordSize))
	}

	if o.bin, err = filepath.Abs(*bin); err != nil {
		fatal(err)
	}
	if _, err := os.Stat(o.bin); err != nil {
		fatal(fmt.Errorf("%v (run make build first)", err))
	}
	want := map[string]bool{}
	for _, s := range strings.Split(*only, ",") {
		want[strings.TrimSpace(s)] = true
	}
	if want["failover"] {
		if err := runFailover(o.bin, o.runs, o.csvDir); err != nil {
			fatal(err)
		}
		if len(want) == 1 {
			return
		}
	}
	fmt.Printf("kraftd bench-quorum: 3 nodes on 127.0.0.1, %d B records, fsync on, %ds measured after %ds warm-up, median of %d runs, listener %s\n",
		o.recordSize, o.seconds, o.warmup, o.runs, strings.Join(o.protocols, " vs "))
	fmt.Printf("%-4s %-34s %12s %9s %9s %9s %9s %22s %22s\n", "", "scenario", "records/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "cpu cores (n1 n2 n3)", "peak RSS MB (n1 n2 n3)")
	for _, sc := range scenarios {
		if want[sc.name] {
			runScenario(o, sc)
		}
	}
}

// runScenario prints the disk's current fsync latency, each run's result,
// and the scenario's median row per listener protocol (runs of the protocols
// alternate, so a change of the machine's load hits all of them alike); a
// failed run is fatal.
func runScenario(o benchOptions, sc scenario) {
	if p, err := probeFsync(3 * time.Second); err == nil {
		fmt.Printf("     disk now: 4 KiB write+fsync p50 %.3f p99 %.3f max %.3f ms (%d in 3 s, one writer)\n", p[0], p[1], p[2], int(p[3]))
	}
	rs := make([][]result, len(o.protocols))
	for r := 0; r < o.runs; r++ {
		for i, proto := range o.protocols {
			prof := ""
			if r == 0 {
				prof = o.profileDir
			}
			res, err := runOnce(o, sc, proto, prof, r+1)
			if err != nil {
				fatal(fmt.Errorf("scenario %s %s run %d: %w", sc.name, proto, r+1, err))
			}
			fmt.Printf("     run %d %s: leader %d, %.0f records/s, p50 %.2f p99 %.2f p99.9 %.2f max %.2f ms, cpu %.2f %.2f %.2f, rss %.1f %.1f %.1f MB\n",
				r+1, proto, res.leader, res.recPerSec, res.p50, res.p99, res.p999, res.max,
				res.cpuCores[0], res.cpuCores[1], res.cpuCores[2], res.rssMB[0], res.rssMB[1], res.rssMB[2])
			if lc := res.count; lc != nil {
				fmt.Printf("     run %d %s: leader's own %.0f records/s; counted over the same span", r+1, proto, lc.leaderRate)
				for i, id := range lc.followers {
					incomplete := ""
					if !lc.complete[i] {
						incomplete = " (incomplete: retention removed the span's start; use -retention off)"
					}
					fmt.Printf(", in node %d's log %.0f (%.1f%%)%s", id, lc.logRate[i], 100*lc.logRate[i]/lc.leaderRate, incomplete)
				}
				fmt.Println()
			}
			rs[i] = append(rs[i], res)
		}
	}
	var base result
	for i, proto := range o.protocols {
		m := median(rs[i])
		desc := sc.desc
		if len(o.protocols) > 1 {
			desc += ", " + proto
		}
		fmt.Printf("%-4s %-34s %12.0f %9.2f %9.2f %9.2f %9.2f %6.2f %6.2f %6.2f    %6.1f %6.1f %6.1f\n", sc.name, desc,
			m.recPerSec, m.p50, m.p99, m.p999, m.max, m.cpuCores[0], m.cpuCores[1], m.cpuCores[2], m.rssMB[0], m.rssMB[1], m.rssMB[2])
		if i == 0 {
			base = m
			continue
		}
		fmt.Printf("     %s vs %s: records/s %+.1f%%, p99 %+.2f ms, cpu cores (sum) %+.2f\n", proto, o.protocols[0],
			100*(m.recPerSec/base.recPerSec-1), m.p99-base.p99, sum(m.cpuCores)-sum(base.cpuCores))
	}
}

func sum(v [3]float64) float64 { return v[0] + v[1] + v[2] }

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "benchquorum:", err)
	os.Exit(1)
}

func median(rs []result) result {
	pick := func(f func(r result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		sort.Float64s(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	var m result
	m.recPerSec = pick(func(r result) float64 { return r.recPerSec })
	m.p50 = pick(func(r result) float64 { return r.p50 })
	m.p99 = pick(func(r result) float64 { return r.p99 })
	m.p999 = pick(func(r result) float64 { return r.p999 })
	m.max = pick(func(r result) float64 { return r.max })
	for i := 0; i < 3; i++ {
		m.cpuCores[i] = pick(func(r result) float64 { return r.cpuCores[i] })
		m.rssMB[i] = pick(func(r result) float64 { return r.rssMB[i] })
	}
	return m
}

// extraProps are lines appended to every node's properties (-props).
var extraProps string

// nodeArgs are extra flags for every node (-node-arg).
var nodeArgs stringList

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

// runOnce runs one measured scenario on a fresh cluster: start the nodes,
// let them run through the warm-up and the measured window, stop them, and
// read the result from their stats (written to -csv DIR as run number run).
func runOnce(o benchOptions, sc scenario, proto, profileDir string, run int) (result, error) {
	dir, err := os.MkdirTemp("", "kraftd-bench-")
	if err != nil {
		return result{}, err
	}
	if !o.keep {
		defer os.RemoveAll(dir)
	} else {
		fmt.Println("     data in", dir)
	}
	sec, err := securityProps(proto, dir)
	if err != nil {
		return result{}, err
	}
	c, err := newCluster(o.bin, dir, extraProps+sec)
	if err != nil {
		return result{}, err
	}
	var cmds []*exec.Cmd
	var outs []string
	var started []time.Time
	start := time.Now()
	for i := 0; i < 3; i++ {
		started = append(started, time.Now())
		cmd, out, err := c.startBenchNode(i, sc, o.recordSize, o.warmup, profileDir)
		if err != nil {
			return result{}, err
		}
		cmds = append(cmds, cmd)
		outs = append(outs, out)
	}
	time.Sleep(time.Duration(o.warmup+o.seconds) * time.Second)
	wall := time.Since(start).Seconds()
	for _, cmd := range cmds {
		_ = cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, cmd := range cmds {
		waitOrKill(cmd, 20*time.Second)
	}
	if o.csvDir != "" {
		path, err := writeRunCSV(o.csvDir, sc.name, proto, run, outs)
		if err != nil {
			return result{}, err
		}
		fmt.Println("     time series in", path)
	}
	res, err := summarize(outs, o.warmup, wall, dir)
	if err != nil || !o.countLog {
		return res, err
	}
	lines, err := readStats(outs[res.leader-1])
	if err != nil {
		return res, err
	}
	lc, err := countLog(c, res.leader, lines, o.warmup, started)
	if err != nil {
		return res, fmt.Errorf("count the log: %w", err)
	}
	res.count = &lc
	return res, nil
}

// startBenchNode starts node i running the scenario's workload with JSON
// stats on stdout, and returns the process and its stdout file.
func (c *cluster) startBenchNode(i int, sc scenario, recordSize, warmup int, profileDir string) (*exec.Cmd, string, error) {
	cfg, err := c.writeConfig(i, fmt.Sprintf("controller.quorum.append.linger.ms=%d\n", sc.linger))
	if err != nil {
		return nil, "", err
	}
	out := c.path("node%d.out", i)
	of, err := os.Create(out)
	if err != nil {
		return nil, "", err
	}
	ef, err := os.Create(c.path("node%d.log", i))
	if err != nil {
		return nil, "", err
	}
	args := []string{"test-kraft-server-start", "--config", cfg, "--replica-directory-id", dirIDs[i],
		"--throughput", fmt.Sprint(sc.throughput), "--record-size", fmt.Sprint(recordSize),
		"--max-in-flight", fmt.Sprint(sc.maxInFlight), "--stats-json", "--stats-interval", "1s",
		"--stats-warmup", fmt.Sprintf("%ds", warmup), "--log-level", "warn"}
	args = append(args, nodeArgs...)
	if profileDir != "" {
		if err := os.MkdirAll(profileDir, 0o755); err != nil {
			return nil, "", err
		}
		args = append(args, "--cpuprofile", filepath.Join(profileDir, fmt.Sprintf("%s-node%d.pprof", sc.name, i+1)))
	}
	cmd := exec.Command(c.bin, args...)
	cmd.Stdout, cmd.Stderr = of, ef
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	return cmd, out, nil
}

// summarize reads each node's stats file (outs[i] for node i+1): CPU and
// RSS from every node's summary, throughput and latency from the node that
// led through the measured window.
func summarize(outs []string, warmup int, wall float64, dir string) (result, error) {
	res := result{leader: -1}
	for i, out := range outs {
		lines, err := readStats(out)
		if err != nil {
			return res, err
		}
		final := finalStats(lines)
		if final == nil {
			return res, fmt.Errorf("node %d printed no summary (see %s)", i+1, filepath.Dir(out))
		}
		res.cpuCores[i] = final.CPUSeconds / wall
		res.rssMB[i] = final.PeakRSSMB
		if rate, led := leaderRate(lines, warmup); led && final.LatencyCount > 0 {
			res.leader = int32(i + 1)
			res.recPerSec = rate
			res.p50, res.p99, res.p999, res.max = final.P50Ms, final.P99Ms, final.P999Ms, final.MaxMs
		}
	}
	if res.leader < 0 {
		return res, fmt.Errorf("no node led through the measured window (data in %s)", dir)
	}
	return res, nil
}

// finalStats returns the last summary line, or nil.
func finalStats(lines []workload.Stats) *workload.Stats {
	var final *workload.Stats
	for j := range lines {
		if lines[j].Final {
			final = &lines[j]
		}
	}
	return final
}

// leaderRate is the node's mean committed records/s over its leader
// intervals after the warm-up (interval stats are 1 s, so the warm-up is
// the first warmup lines); led is false when it led in none of them.
func leaderRate(lines []workload.Stats, warmup int) (rate float64, led bool) {
	var rateSum, timeSum float64
	for j, s := range lines {
		if !s.Final && s.Role == "Leader" && j >= warmup {
			rateSum += s.RecordsPerSec * s.IntervalSec
			timeSum += s.IntervalSec
		}
	}
	if timeSum <= 0 {
		return 0, false
	}
	return rateSum / timeSum, true
}

func readStats(path string) ([]workload.Stats, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []workload.Stats
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var s workload.Stats
		if json.Unmarshal(sc.Bytes(), &s) == nil {
			out = append(out, s)
		}
	}
	return out, nil
}

// probeFsync measures the disk under the current load: 4 KiB appends each
// followed by fsync, for d. Returns p50, p99, max (ms) and the count.
func probeFsync(d time.Duration) ([4]float64, error) {
	var r [4]float64
	f, err := os.CreateTemp("", "kraftd-fsync-probe-")
	if err != nil {
		return r, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, 4096)
	var ds []float64
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if _, err := f.Write(buf); err != nil {
			return r, err
		}
		t := time.Now()
		if err := f.Sync(); err != nil {
			return r, err
		}
		ds = append(ds, float64(time.Since(t).Microseconds())/1000)
	}
	sort.Float64s(ds)
	n := len(ds)
	return [4]float64{ds[n/2], ds[n*99/100], ds[n-1], float64(n)}, nil
}
