//go:build interopbench

package interop

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// runReportBench is runBench (bench_interop_test.go) as the report needs it: the
// committed records are counted in both followers' logs and the larger count is the row's.
// A record is committed once one follower has it (with the leader, a majority of three),
// and under load the other follower can lag by seconds: a count in a fixed follower's log
// then undercounts by that lag (seen as 5% at 118,000 records/s on a loaded machine,
// docs/bench/notes.md). The smaller count goes in the note when they differ by more than 1%.
func runReportBench(t *testing.T, env *kafkatest.Env, side kafkatest.Side, rate, size int, props kafkatest.Props, kraftdArgs []string, seconds, warmup int) benchRow {
	t.Helper()
	sides := []kafkatest.Side{side, side, side}
	// kraftd keeps every segment (its snapshots would let retention delete them) so the
	// measured window can be counted in the log.
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: sides, Throughput: rate, RecordSize: size, Props: props,
		KraftdArgs:    append([]string{"--stats-interval", "5s"}, kraftdArgs...),
		KraftdProps:   kafkatest.Props{"metadata.max.retention.bytes": "-1", "metadata.max.retention.ms": "-1"},
		KafkaJVMFlags: kafkatest.ShippedJVMFlags})
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	leader, epoch, err := q.WaitLeader(0, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Duration(warmup) * time.Second)
	from := time.Now()
	before := benchWindows(q.Node(leader), size)
	cpu0 := map[int32]time.Duration{}
	for _, n := range q.Nodes {
		u, err := n.Proc.Usage()
		if err != nil {
			t.Fatal(err)
		}
		cpu0[n.ID] = u.CPU
	}
	time.Sleep(time.Duration(seconds) * time.Second)
	to := time.Now()
	after := benchWindows(q.Node(leader), size)
	row := benchRow{Side: side, Leader: leader, P50: math.NaN()}
	if l, e, ok := q.AgreedLeader(); !ok || l != leader || e != epoch {
		row.Note = fmt.Sprintf("leadership changed during the run (now %d/%d)", l, e)
	}
	for _, n := range q.Nodes {
		u, err := n.Proc.Usage()
		if err != nil {
			t.Fatal(err)
		}
		row.Nodes = append(row.Nodes, benchNode{ID: n.ID, CPU: u.CPU - cpu0[n.ID], Peak: u.PeakRSS, Leader: n.ID == leader})
	}
	for _, n := range q.Nodes {
		if err := q.Stop(n.ID); err != nil {
			t.Errorf("stop node %d: %v", n.ID, err)
		}
	}
	keepLogs(t, q)
	var counts []string
	var least float64 = -1
	for _, n := range q.Nodes {
		if n.ID == leader {
			continue
		}
		counted, err := recordsStamped(n.PartitionDir, from, to)
		if err != nil {
			t.Fatalf("count node %d's log: %v", n.ID, err)
		}
		r := float64(counted) / to.Sub(from).Seconds()
		counts = append(counts, fmt.Sprintf("node %d %.0f", n.ID, r))
		row.RecsPerS = math.Max(row.RecsPerS, r)
		if least < 0 || r < least {
			least = r
		}
	}
	if least < 0.99*row.RecsPerS {
		row.Note = strings.TrimSpace(row.Note + " followers' logs differ: " + strings.Join(counts, ", "))
	}
	// Counted: the logs go now, not at the test's end (a run at 400k/s writes 4 GB a node).
	for _, n := range q.Nodes {
		if err := os.RemoveAll(n.LogDir); err != nil {
			t.Errorf("remove node %d's log: %v", n.ID, err)
		}
	}
	if side == kafkatest.SideKafka {
		log := q.Node(leader).Logs()
		if i := strings.Index(log, "Error due to (kafka.tools.TestRaftServer$RaftWorkloadGenerator)"); i >= 0 {
			cause, _, _ := strings.Cut(log[i:], "\n")
			if rest := strings.SplitN(log[i:], "\n", 3); len(rest) > 1 {
				cause = rest[1]
			}
			row.Note = strings.TrimSpace(row.Note + " workload thread died: " + cause)
		}
	}
	win := after[len(before):]
	row.Windows = len(win)
	if len(win) == 0 {
		row.Note = strings.TrimSpace(row.Note + " no report in the measured window")
		row.P99 = math.NaN()
		return row
	}
	var recs, secs float64
	var p50s []float64
	for _, w := range win {
		recs += w.recsPerSec * w.seconds
		secs += w.seconds
		p50s = append(p50s, w.p50)
		row.P99 = math.Max(row.P99, w.p99)
	}
	row.Reported = recs / secs
	if side == kafkatest.SideKraftd {
		row.P50 = median(p50s)
	}
	return row
}
