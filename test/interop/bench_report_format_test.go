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

type plotSpec struct{ file, title, logy string }

var reportPlots = []plotSpec{
	{"latency-p99", "commit latency p99 (ms, log scale) vs committed records/s", "p99_ms"},
	{"latency-p50", "commit latency p50 (ms, log scale) vs committed records/s", "p50_ms"},
	{"cpu", "CPU cores per node (the busiest) vs committed records/s", "cores_per_node"},
	{"cpu-per-record", "CPU µs per committed record (all nodes) vs committed records/s", "cpu_us_per_record"},
	{"rss", "peak RSS MB per node (the largest) vs committed records/s", "rss_mb_per_node"},
}

// grouped is the report's rows: the runs of one system at one linger, rate and contention
// folded into their median run (medianRun), in the order of their first run.
func (c *reportRunner) grouped() []reportRow {
	groups := map[string][]reportRow{}
	var keys []string
	for _, r := range c.rows {
		key := fmt.Sprintf("%s %d %d", r.System, r.Linger, r.Offered)
		if groups[key] == nil {
			keys = append(keys, key)
		}
		groups[key] = append(groups[key], r)
	}
	var rows []reportRow
	for _, key := range keys {
		rows = append(rows, medianRun(groups[key]))
	}
	return rows
}

// writeReport writes each linger's results-lingerN.csv and plots into dir and returns the
// Markdown report.
func (c *reportRunner) writeReport(dir string, lingers []int, overload []float64) string {
	t := c.t
	rows := c.grouped()
	var b strings.Builder
	c.writeHeader(&b, lingers)
	c.writeSummary(&b, rows, lingers, overload)
	for _, linger := range lingers {
		// etcd (no linger) is drawn beside each linger's systems.
		var at []reportRow
		for _, r := range rows {
			if r.Linger == linger || r.Linger == -1 {
				at = append(at, r)
			}
		}
		suffix := fmt.Sprintf("-linger%d", linger)
		csvPath := filepath.Join(dir, "results"+suffix+".csv")
		if err := writeReportCSV(csvPath, at); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "## controller.quorum.append.linger.ms=%d\n\n", linger)
		b.WriteString(formatRows(at))
		b.WriteString(formatRatios(at))
		b.WriteString("\nRows with nothing committed are not drawn, nor Kafka's p50 (it prints none).\n\n")
		for _, p := range reportPlots {
			if !plottable(at, p.logy) {
				continue // cmd/plot refuses a plot with no point
			}
			file := p.file + suffix + ".svg"
			title := fmt.Sprintf("linger %d ms: %s", linger, p.title)
			args := []string{"run", "../cmd/plot", "-o", filepath.Join(dir, file), "-x", "committed_per_s", "-by", "system", "-points", "-title", title}
			if strings.HasPrefix(p.logy, "p") || p.logy == "cpu_us_per_record" {
				args = append(args, "-logy")
			}
			args = append(args, csvPath, p.logy)
			if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
				t.Fatalf("plot %s: %v\n%s", file, err, out)
			}
			fmt.Fprintf(&b, "![%s](%s)\n\n", title, file)
		}
	}
	return b.String()
}

func (c *reportRunner) writeHeader(b *strings.Builder, lingers []int) {
	var loads []float64
	for _, r := range c.rows {
		loads = append(loads, r.Load)
	}
	slices.Sort(loads)
	during := "unknown"
	if len(loads) > 0 {
		during = fmt.Sprintf("%.2f / %.2f / %.2f (lowest / median / highest of the runs' means)", loads[0], loads[len(loads)/2], loads[len(loads)-1])
	}
	fmt.Fprintf(b, "# kraftd, Kafka 4.4.0 and etcd raft side by side\n\n")
	fmt.Fprintf(b, "Written by `make bench-report` on %s (%d cores, %d runs in %s).\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), len(c.rows), c.elapsed.Round(time.Minute))
	fmt.Fprintf(b, "- Load average (1, 5, 15 min) before the runs: %s; after: %s.\n", c.loadBefore, c.loadAfter)
	fmt.Fprintf(b, "- 1-minute load average during the runs, sampled every 2 s of each run: %s. The quorum itself is 3 processes on %d cores: a load well above what one run adds (about 1 to 2.5) means other work shared the machine, and the figures are noisy.\n", during, runtime.NumCPU())
	fmt.Fprintf(b, "- The disk before the runs: %s; after: %s.\n\n", c.diskBefore, c.diskAfter)
	fmt.Fprintf(b, "Three voters on 127.0.0.1, %d-byte records, fsync'd logs; each system runs alone, %d s measured after a %d s warm-up. ", c.size, c.seconds, c.warmup)
	fmt.Fprintf(b, "kraftd and Kafka run at controller.quorum.append.linger.ms %s (Kafka's default is 25; etcd has no linger, its rows are run once and shown beside each linger's).\n\n", joinInts(lingers))
	b.WriteString("- **kraftd**: three `test-kraft-server-start` processes (an open loop at the offered rate: records that fall due are offered, refused ones retried and charged latency from their due time; at `max`, unthrottled with at most 1,000 records in flight, as etcd).\n")
	b.WriteString("- **Kafka**: three Kafka 4.4.0 `kafka.tools.TestRaftServer` JVMs (-Xmx1G); an open loop; it has no unthrottled mode, so at `max` it is offered a fixed rate. Offered far more than it commits, its workload thread can die (its accumulator's batch limit: \"number of batches ... reached\"): the row's note says so, and what it committed is what it committed.\n")
	b.WriteString("- **etcd**: bench/peers, go.etcd.io/raft/v3 with etcd's WAL, three nodes in one process (its CPU and RSS are divided by three); at `max`, 1,000 records in flight; with the Go runtime setting kraftd's nodes apply to themselves (GODEBUG schedtrace, see docs/operating.md).\n\n")
	b.WriteString("Committed records/s: kraftd and Kafka counted in the followers' logs, both with kraftd's log reader (metadatalog: both write Kafka's record batch format), the records of the batches the leader stamped in the measured window over its length, in each follower's log, the larger count (a record is committed once one follower has it; the other may lag, and a note gives both counts when they differ by more than 1%); etcd from its leader's applied count. ")
	b.WriteString("\"leader's own\" is what the leader's workload reported for the same window (kraftd's stats; Kafka's Throughput lines, whose meter pads its window until it fills and so understates the first minute): beside the log count it shows how much of a gap is the counting. ")
	b.WriteString("Latency: to the record's commit on the leader, from its due time (kraftd), its intended send time (etcd) or its append (Kafka's TestRaftServer); ")
	b.WriteString("all three report it per 5 s window: p50 is the median window's, p99 the worst window's (Kafka clamps at 250 ms and prints no p50). ")
	b.WriteString("CPU cores/node and RSS: the busiest and the largest node; CPU µs/record: all nodes' CPU over the committed records.\n\n")
	fmt.Fprintf(b, "**Highest sustained rate**: the largest offered rate that an open loop committed within 2%% of, with a p99 below %.0f ms, found by search: the sweep's rates, then at most a few runs bisecting between the highest sustained rate and the lowest rate above it that was not (to within 5%%), or 1.25 times it when none above failed. ", c.p99Bound)
	b.WriteString("Kafka's p99 is clamped at 250 ms and measured from its append rather than the due time, so for Kafka the bound never decides: its highest sustained rate is where it stops committing what it is offered. ")
	b.WriteString("**Overload**: each system is then offered its own highest sustained rate times each factor; its committed rate is shown as a share of what it committed at its maximum.\n\n")
	fmt.Fprintf(b, "\"busy\" and \"busy in-session\" (at the first linger): run again with one spinning process per core beside the quorum (the contention of a shared machine). At those rates every arrangement, quiet included, runs several times, interleaved; the row is the run of the median p99, its note lists every run's. "+
		"\"busy\": the spinners are processes of their own session, as another service or user's job on the host is; \"busy in-session\": they are processes in the session of the quorum's processes, as a job started from the same shell is. "+
		"The two differ because Linux with sched_autogroup_enabled (here: %s) shares the CPU between sessions first: apart, the quorum's session keeps half the machine; in one session every spinner weighs as much as each of the quorum's threads.\n\n", autogroup())
}

// writeSummary writes each system's highest sustained rate and its overload rows, then the
// goals kraftd is held to (same run, same machine).
func (c *reportRunner) writeSummary(b *strings.Builder, rows []reportRow, lingers []int, overload []float64) {
	find := func(sys string, linger, rate int) (reportRow, bool) {
		for _, r := range rows {
			if r.System == sys && r.Linger == lingerOf(sys, linger) && r.Offered == rate {
				return r, true
			}
		}
		return reportRow{}, false
	}
	b.WriteString("## Summary\n\n| linger ms | system | highest sustained: offered/s | committed/s | p99 ms |")
	for _, f := range overload {
		fmt.Fprintf(b, " %gx: offered/s | committed/s (%% of max) | p99 ms |", f)
	}
	b.WriteString(" note |\n|---|---|---|---|---|")
	b.WriteString(strings.Repeat("---|---|---|", len(overload)))
	b.WriteString("---|\n")
	type maxes struct{ kraftd, kafka reportRow }
	best := map[int]*maxes{}
	for li, linger := range lingers {
		best[linger] = &maxes{}
		for _, sys := range []string{"kraftd", "kafka", "etcd"} {
			if sys == "etcd" && li > 0 {
				continue
			}
			lo, ok := c.best(sys, linger)
			if !ok {
				continue
			}
			m, _ := find(sys, linger, lo.Offered)
			switch sys {
			case "kraftd":
				best[linger].kraftd = m
			case "kafka":
				best[linger].kafka = m
			}
			fmt.Fprintf(b, "| %s | %s | %d | %.0f | %s |", lingerText(m.Linger), sys, m.Offered, m.Committed, ms(m.P99))
			var notes []string
			for _, f := range overload {
				o, ok := find(sys, linger, roundRate(f*float64(lo.Offered)))
				if !ok {
					b.WriteString(" | | |")
					continue
				}
				fmt.Fprintf(b, " %d | %.0f (%.0f%%) | %s |", o.Offered, o.Committed, 100*o.Committed/m.Committed, ms(o.P99))
				if o.Note != "" {
					notes = append(notes, fmt.Sprintf("at %gx: %s", f, o.Note))
				}
			}
			fmt.Fprintf(b, " %s |\n", strings.Join(notes, "; "))
		}
	}
	b.WriteString("\nSearch: ")
	b.WriteString(strings.Join(c.searchNotes, "; "))
	b.WriteString(".\n\n### Goals\n\n| linger ms | goal | measured | met |\n|---|---|---|---|\n")
	yes := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "**no**"
	}
	for _, linger := range lingers {
		m := best[linger]
		if m.kraftd.Offered > 0 && m.kafka.Offered > 0 {
			x := m.kraftd.Committed / m.kafka.Committed
			fmt.Fprintf(b, "| %d | kraftd's highest sustained rate >= 1.5x Kafka's | %.0f / %.0f = %.2fx | %s |\n", linger, m.kraftd.Committed, m.kafka.Committed, x, yes(x >= 1.5))
		}
		if m.kraftd.Offered > 0 {
			if o, ok := find("kraftd", linger, roundRate(1.5*float64(m.kraftd.Offered))); ok {
				x := o.Committed / m.kraftd.Committed
				fmt.Fprintf(b, "| %d | offered 1.5x its maximum, kraftd commits >= 95%% of it | %.0f / %.0f = %.0f%% | %s |\n", linger, o.Committed, m.kraftd.Committed, 100*x, yes(x >= 0.95))
			}
		}
		if m.kafka.Offered > 0 {
			if k, ok := find("kraftd", linger, m.kafka.Offered); ok && !math.IsNaN(k.P99) && !math.IsNaN(m.kafka.P99) {
				x := k.P99 / m.kafka.P99
				clamp := ""
				if m.kafka.P99 >= 249 {
					clamp = " (Kafka's p99 at its 250 ms clamp: its true p99 is higher, the true ratio lower)"
				}
				fmt.Fprintf(b, "| %d | p99 at Kafka's highest sustained rate (%d/s) <= 1/4 of Kafka's | %s / %s ms = %.3f%s | %s |\n", linger, m.kafka.Offered, ms(k.P99), ms(m.kafka.P99), x, clamp, yes(x <= 0.25))
			}
		}
	}
	b.WriteString("\n")
}

// plottable reports whether the CSV of rows (writeReportCSV) has a point for the column:
// a row with records committed and a p99, and for p50_ms a p50 (Kafka prints none).
func plottable(rows []reportRow, column string) bool {
	for _, r := range rows {
		if r.Committed > 0 && !math.IsNaN(r.P99) && (column != "p50_ms" || !math.IsNaN(r.P50)) {
			return true
		}
	}
	return false
}

func formatRows(rows []reportRow) string {
	var b strings.Builder
	b.WriteString("| offered | system | committed records/s | leader's own records/s | p50 ms | p99 ms | CPU cores/node | CPU µs/record | peak RSS MB/node | load | note |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		own := "n/a"
		if r.Reported > 0 {
			own = strconv.FormatFloat(r.Reported, 'f', 0, 64)
		}
		var parts []string
		if r.Linger == -1 {
			parts = append(parts, "no linger")
		}
		for _, p := range []string{r.Why, r.Note} {
			if p != "" {
				parts = append(parts, p)
			}
		}
		note := strings.Join(parts, "; ")
		fmt.Fprintf(&b, "| %s | %s | %.0f | %s | %s | %s | %.2f | %s | %.0f | %.1f | %s |\n", offeredText(r.Offered), r.System, r.Committed, own, ms(r.P50), ms(r.P99), r.CoresPerNode, ms(r.CPUPerRecord), r.RSSPerNode, r.Load, note)
	}
	return b.String()
}

func ms(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func lingerText(l int) string {
	if l < 0 {
		return "none"
	}
	return strconv.Itoa(l)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " and ")
}

func writeReportCSV(path string, rows []reportRow) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	_ = w.Write([]string{"system", "offered_per_s", "committed_per_s", "p50_ms", "p99_ms", "cores_per_node", "cpu_us_per_record", "rss_mb_per_node"})
	for _, r := range rows {
		if r.Committed <= 0 || math.IsNaN(r.P99) {
			continue // nothing committed, or failed: no point to draw
		}
		p50 := num(r.P50)
		if math.IsNaN(r.P50) {
			p50 = "" // not reported: cmd/plot leaves the point out
		}
		_ = w.Write([]string{r.System, strconv.Itoa(r.Offered), num(r.Committed), p50, num(r.P99), num(r.CoresPerNode), num(r.CPUPerRecord), num(r.RSSPerNode)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// autogroup is the kernel's sched_autogroup_enabled setting.
func autogroup() string {
	b, err := os.ReadFile("/proc/sys/kernel/sched_autogroup_enabled")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// formatRatios states kraftd's figures as ratios to each peer's at the same offered rate
// where both committed it (within 1%): the p99 and the CPU per record.
func formatRatios(rows []reportRow) string {
	find := func(sys string, rate int) (reportRow, bool) {
		for _, r := range rows {
			if r.System == sys && r.Offered == rate && r.Committed > 0 {
				return r, true
			}
		}
		return reportRow{}, false
	}
	var b strings.Builder
	b.WriteString("\nkraftd over each peer, same run (below 1 is kraftd lower):\n\n| offered | peer | p99 | CPU µs/record |\n|---|---|---|---|\n")
	for _, r := range rows {
		suffix, ok := strings.CutPrefix(r.System, "kraftd")
		if !ok || suffix != "" && !isBusy(suffix) {
			continue
		}
		for _, peer := range []string{"kafka", "etcd"} {
			peer += suffix
			p, ok := find(peer, r.Offered)
			if !ok || math.Abs(p.Committed-r.Committed) > 0.01*float64(r.Offered) || math.IsNaN(p.P99) || math.IsNaN(r.P99) {
				continue // a peer that fell behind, or reported no window, has no latency to compare
			}
			fmt.Fprintf(&b, "| %s | %s | %.2f | %.2f |\n", offeredText(r.Offered), peer, r.P99/p.P99, r.CPUPerRecord/p.CPUPerRecord)
		}
	}
	return b.String()
}
