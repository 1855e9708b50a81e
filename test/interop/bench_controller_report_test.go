//go:build interopbench

package interop

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ctrlColumns are each scenario's figures, in the order of its table and CSV.
var ctrlColumns = map[string][]string{
	"create": {"brokers", "offered_topics_per_s", "conns", "topics_per_s", "partitions_per_s", "p50_ms", "p99_ms", "errors",
		"hb_p99_ms", "active_cores", "active_rss_mb", "standby_cores", "standby_rss_mb"},
	"heartbeat": {"brokers", "interval_ms", "hb_per_s", "hb_p50_ms", "hb_p99_ms", "hb_max_ms", "errors", "active_idle_cores",
		"active_cores", "cpu_us_per_hb", "active_rss_mb", "standby_cores"},
	"failover": {"partitions", "brokers", "build_s", "elected_ms", "activated_ms", "create_gap_ms", "hb_first_ms", "hb_all_ms"},
	"scale": {"partitions", "brokers", "build_s", "partitions_per_s", "active_rss_mb", "standby_rss_mb", "active_heap_mb",
		"snapshot_mb", "snapshot_write_s", "restart_active_s", "restarted_rss_mb"},
	"storm": {"brokers", "partitions", "stopped", "affected", "first_fenced_s", "last_fenced_s", "new_leaders_s", "records",
		"partition_changes", "leaderless", "hb_p99_ms", "active_cores"},
}

// ctrlScenarioText says what each scenario's table shows.
var ctrlScenarioText = map[string]string{
	"create":    "Scenario 1, topic creation: CreateTopics (RF 3, placed by the controller) sent straight to the active controller while the brokers heartbeat every 2 s; an open loop at the offered rate (latency from each request's due time, so a backlog shows) or a closed loop over `conns` connections (one request in flight each). A CreateTopics is answered once its records are committed, so topics/s and partitions/s are committed ones. hb_p99_ms: the brokers' heartbeats meanwhile.",
	"heartbeat": "Scenario 4, heartbeat load: the brokers heartbeat every interval_ms and nothing else happens. active_idle_cores is the active controller's CPU before any broker registered (NoOps every 500 ms, the JVM's own threads); cpu_us_per_hb is the CPU above that per heartbeat.",
	"failover":  "Scenario 3, failover: with the image built, the brokers heartbeating and 1-partition creates offered at 20/s (retried every 20 ms after a failure), the active controller is killed with SIGKILL. create_gap_ms: from the kill to the first create answered that was sent after it; hb_first_ms / hb_all_ms: to the first broker's, and to every broker's, first heartbeat answered that it sent after the kill; elected_ms and activated_ms: to the new raft leader's election and to its activation as the controller, as their logs time them (millisecond precision). controller.quorum.election.timeout.ms is 1 s and controller.quorum.fetch.timeout.ms Kafka's 2 s on both: a follower starts an election only once it has heard nothing from the leader for the fetch timeout.",
	"scale":     "Scenario 2, scale: the image built through CreateTopics of 1000-partition topics (8 connections) with the brokers heartbeating; RSS once built and settled (the JVM: its live heap after a full GC too, jcmd GC.class_histogram, taken after the RSS); the last snapshot the active controller wrote during the build (each controller snapshots every 20 MiB of records), its size and the time from its start to its end in the controller's log; then all three are killed with SIGKILL and started again: restart_active_s is from the start to the first create answered (process start-up, snapshot and log loading, election and activation), restarted_rss_mb the largest RSS then.",
	"storm":     "Scenario 5, broker failure storm: the stopped brokers (every tenth by id) stop heartbeating and close their connections at once; broker.session.timeout.ms is Kafka's 9 s. Read from the active controller's metadata log while it runs: affected = partitions they led; first/last_fenced_s = the first and last of their fencing records (the batch's append time, from the stop); new_leaders_s = when the last affected partition got a leader that is not a stopped broker (or none: leaderless counts partitions without a leader at the end); records = every record but NoOps written from the stop to that moment.",
}

// writeReport writes each scenario's CSV and plots into dir and returns the Markdown report.
func (b *ctrlBench) writeReport(dir string) string {
	var md strings.Builder
	b.writeHeader(&md)
	b.writeGoals(&md)
	for _, sc := range b.order {
		rows := b.rowsOf(sc)
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(&md, "## %s\n\n%s\n\n", sc, ctrlScenarioText[sc])
		md.WriteString(formatCtrlRows(rows, ctrlColumns[sc]))
		csvPath := filepath.Join(dir, sc+".csv")
		if err := writeCtrlCSV(csvPath, rows, ctrlColumns[sc]); err != nil {
			b.t.Fatal(err)
		}
		fmt.Fprintf(&md, "\nCSV: [%s.csv](%s.csv).\n\n", sc, sc)
		for _, p := range ctrlPlots(sc, rows) {
			b.plot(&md, dir, csvPath, p)
		}
	}
	if pts := b.series["scale-rss"]; len(pts) > 0 {
		path := filepath.Join(dir, "scale-rss.csv")
		if err := writeSeriesCSV(path, pts); err != nil {
			b.t.Fatal(err)
		}
		b.plot(&md, dir, path, ctrlPlot{file: "scale-rss", title: "scale: the active controller's RSS (MB) vs partitions in the image, during the build", x: "partitions", y: "rss_mb", by: "system"})
	}
	return md.String()
}

func (b *ctrlBench) rowsOf(scenario string) []ctrlRow {
	var out []ctrlRow
	for _, r := range b.rows {
		if r.Scenario == scenario {
			out = append(out, r)
		}
	}
	return out
}

func (b *ctrlBench) writeHeader(md *strings.Builder) {
	var loads []float64
	for _, r := range b.rows {
		loads = append(loads, r.Load)
	}
	slices.Sort(loads)
	during := "unknown"
	if len(loads) > 0 {
		during = fmt.Sprintf("%.2f / %.2f / %.2f (lowest / median / highest of the runs' means)", loads[0], loads[len(loads)/2], loads[len(loads)-1])
	}
	fmt.Fprintf(md, "# kraftd and Kafka 4.4.0 as the active controller, side by side\n\n")
	fmt.Fprintf(md, "Written by `make bench-controller` on %s (%d cores, %d runs in %s)", time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), len(b.rows), b.elapsed.Round(time.Minute))
	if b.quick {
		md.WriteString(", **a quick smoke run (BENCH_CONTROLLER_QUICK=1): small scale, short windows; not the report's figures**")
	}
	md.WriteString(".\n\n")
	fmt.Fprintf(md, "- Load average (1, 5, 15 min) before the runs: %s; after: %s.\n", b.loadBefore, b.loadAfter)
	fmt.Fprintf(md, "- 1-minute load average during the runs, sampled every 2 s: %s. The quorum is three processes, the harness a fourth, on %d cores: a load well above what a run adds means other work shared the machine.\n\n", during, runtime.NumCPU())
	fmt.Fprintf(md, "Each run starts a fresh quorum of three controllers on 127.0.0.1, fsync'd logs: **kraftd** (`controller start`, the active side on) or **Kafka** 4.4.0 (`kafka.Kafka`, process.roles=controller, %s; Kafka's default thread pools), with Kafka's defaults otherwise (controller.quorum.append.linger.ms 25, broker.heartbeat.interval.ms 2000, broker.session.timeout.ms 9000, metadata.max.idle.interval.ms 500, snapshots every 20 MiB). ", strings.Join(benchJVMFlagsText(), " "))
	fmt.Fprintf(md, "The runs of a case alternate between the systems, %d each; the tables list every run. Measured windows are %d s after a %d s warm-up.\n\n", b.rounds, b.seconds, b.warmup)
	md.WriteString("The load comes over the wire from test/controllerload: simulated brokers (one connection each, as Kafka's; register with every feature the controller supports, heartbeat every 2 s after each answer reporting the metadata log's high watermark as their offset, so they are unfenced) and an admin client sending CreateTopics straight to the active controller, found as a broker finds it (DescribeCluster, then NOT_CONTROLLER or a broken connection sends it looking again). CPU and RSS are read from /proc every second: active_* is the active controller's, standby_* the larger of the other two.\n\n")
}

func benchJVMFlagsText() []string {
	return []string{"JVM flags as Kafka's scripts (-Xmx1G -Xms1G G1) except scale (-Xmx" + envString("BENCH_CONTROLLER_SCALE_XMX", "6g") + ")"}
}

// ctrlGoal is one of the goals: a ratio of kraftd's figure to Kafka's, or a bound
// on kraftd's alone.
type ctrlGoal struct {
	text, scenario, column string
	caseOK                 func(c string) bool
	ratio                  float64 // kraftd / Kafka at most (or at least, when atLeast)
	atLeast                bool
	bound                  float64 // when ratio is 0: kraftd's figure below this
}

var ctrlGoals = []ctrlGoal{
	{text: "creation throughput (partitions/s, closed loop) >= 2x Kafka's", scenario: "create", column: "partitions_per_s",
		caseOK: func(c string) bool { return strings.Contains(c, "closed") }, ratio: 2, atLeast: true},
	{text: "failover to the next CreateTopics <= 0.5x Kafka's", scenario: "failover", column: "create_gap_ms", ratio: 0.5},
	{text: "RSS of the active controller <= 0.25x Kafka's", scenario: "scale", column: "active_rss_mb", ratio: 0.25},
	{text: "heartbeat CPU (active controller) <= 0.5x Kafka's", scenario: "heartbeat", column: "active_cores", ratio: 0.5},
	{text: "a 1M-partition image loads (restart to active) in < 10 s", scenario: "scale", column: "restart_active_s",
		caseOK: func(c string) bool { return strings.HasPrefix(c, "1M ") }, bound: 10},
}

// writeGoals puts each goal against the medians of the runs, case by case.
func (b *ctrlBench) writeGoals(md *strings.Builder) {
	md.WriteString("## Goals\n\nkraftd's median over its runs of a case against Kafka's, in the same report.\n\n")
	md.WriteString("| goal | case | kraftd | Kafka | kraftd / Kafka | met |\n|---|---|---|---|---|---|\n")
	for _, g := range ctrlGoals {
		cases := map[string]map[string][]float64{}
		var order []string
		for _, r := range b.rowsOf(g.scenario) {
			v, ok := r.Values[g.column]
			if !ok || (g.caseOK != nil && !g.caseOK(r.Case)) {
				continue
			}
			if cases[r.Case] == nil {
				cases[r.Case] = map[string][]float64{}
				order = append(order, r.Case)
			}
			cases[r.Case][r.System] = append(cases[r.Case][r.System], v)
		}
		if len(order) == 0 {
			fmt.Fprintf(md, "| %s | - | not run | | | |\n", g.text)
		}
		for _, c := range order {
			k, j := cases[c]["kraftd"], cases[c]["kafka"]
			kv, jv := math.NaN(), math.NaN()
			if len(k) > 0 {
				kv = median(k)
			}
			if len(j) > 0 {
				jv = median(j)
			}
			ratio := kv / jv
			met := "-"
			switch {
			case g.ratio == 0 && !math.IsNaN(kv):
				met = yesNo(kv < g.bound)
			case g.atLeast && !math.IsNaN(ratio):
				met = yesNo(ratio >= g.ratio)
			case !math.IsNaN(ratio):
				met = yesNo(ratio <= g.ratio)
			}
			fmt.Fprintf(md, "| %s | %s | %s | %s | %s | %s |\n", g.text, c, num(kv), num(jv), num(ratio), met)
		}
	}
	md.WriteString("\n")
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// num writes v with 3 significant digits, or whole from 100 on; "-" for NaN.
func num(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func formatCtrlRows(rows []ctrlRow, cols []string) string {
	var b strings.Builder
	b.WriteString("| case | system | " + strings.Join(cols, " | ") + " | load | note |\n")
	b.WriteString("|---|---|" + strings.Repeat("---|", len(cols)) + "---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s |", r.Case, r.System)
		for _, c := range cols {
			v, ok := r.Values[c]
			if !ok {
				v = math.NaN()
			}
			fmt.Fprintf(&b, " %s |", num(v))
		}
		fmt.Fprintf(&b, " %.1f | %s |\n", r.Load, r.Note)
	}
	return b.String()
}

func writeCtrlCSV(path string, rows []ctrlRow, cols []string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write(append(append([]string{"case", "system", "series"}, cols...), "load", "note"))
	for _, r := range rows {
		rec := []string{r.Case, r.System, r.System + " " + seriesOf(r)}
		for _, c := range cols {
			if v, ok := r.Values[c]; ok && !math.IsNaN(v) {
				rec = append(rec, strconv.FormatFloat(v, 'f', -1, 64))
			} else {
				rec = append(rec, "")
			}
		}
		_ = w.Write(append(rec, strconv.FormatFloat(r.Load, 'f', 2, 64), r.Note))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// seriesOf names a row's line in a plot: the create scenario's topic size.
func seriesOf(r ctrlRow) string {
	if r.Scenario == "create" {
		p, _, _ := strings.Cut(r.Case, " ")
		return p
	}
	return ""
}

func writeSeriesCSV(path string, pts []seriesPoint) error {
	var b strings.Builder
	b.WriteString("partitions,rss_mb,system\n")
	for _, p := range pts {
		fmt.Fprintf(&b, "%d,%.1f,%s\n", p.Partitions, p.RSSMB, p.System)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

type ctrlPlot struct {
	file, title, x, y, by string
	logy                  bool
}

// ctrlPlots are a scenario's plots (those with points to draw).
func ctrlPlots(sc string, rows []ctrlRow) []ctrlPlot {
	distinct := func(col string) int {
		seen := map[float64]bool{}
		for _, r := range rows {
			if v, ok := r.Values[col]; ok {
				seen[v] = true
			}
		}
		return len(seen)
	}
	switch sc {
	case "create":
		return []ctrlPlot{
			{file: "create-p99", title: "create: CreateTopics p99 (ms, log scale) vs committed partitions/s", x: "partitions_per_s", y: "p99_ms", by: "series", logy: true},
			{file: "create-cpu", title: "create: the active controller's CPU (cores) vs committed partitions/s", x: "partitions_per_s", y: "active_cores", by: "series"},
		}
	case "heartbeat":
		if distinct("brokers") > 1 {
			return []ctrlPlot{
				{file: "heartbeat-cpu", title: "heartbeat: the active controller's CPU (cores) vs brokers", x: "brokers", y: "active_cores", by: "system"},
				{file: "heartbeat-p99", title: "heartbeat: p99 (ms) vs brokers", x: "brokers", y: "hb_p99_ms", by: "system"},
			}
		}
	case "scale":
		if distinct("partitions") > 1 {
			return []ctrlPlot{{file: "scale-restart", title: "scale: restart to active (s) vs partitions", x: "partitions", y: "restart_active_s", by: "system"}}
		}
	}
	return nil
}

// plot draws p from csvPath into dir with cmd/plot and links it from md.
func (b *ctrlBench) plot(md *strings.Builder, dir, csvPath string, p ctrlPlot) {
	file := p.file + ".svg"
	args := []string{"run", "../cmd/plot", "-o", filepath.Join(dir, file), "-x", p.x, "-by", p.by, "-points", "-title", p.title}
	if p.logy {
		args = append(args, "-logy")
	}
	args = append(args, csvPath, p.y)
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		b.t.Logf("plot %s: %v\n%s", file, err, out)
		return
	}
	fmt.Fprintf(md, "![%s](%s)\n\n", p.title, file)
}
