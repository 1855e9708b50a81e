//go:build interopbench

package interop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/test/controllerload"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
	"github.com/kraftd/kraftd/uuid"
)

// seriesPoint is one sample of the scale scenario's build: the image's size and the
// active controller's RSS then.
type seriesPoint struct {
	System     string
	Partitions int
	RSSMB      float64
}

// scaleJVMFlags are Kafka's scripts' G1 settings with room for a million partitions (the
// scripts' -Xmx1G is not: Kafka's docs size a controller's heap by its metadata).
func scaleJVMFlags() []string {
	return []string{"-Xmx" + envString("BENCH_CONTROLLER_SCALE_XMX", "6g"), "-Xms1G", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
		"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent", "-Djava.awt.headless=true"}
}

// scenarioScale is scenario 2: the image built through CreateTopics of 1000-partition
// topics (quick: 100) to each of BENCH_CONTROLLER_SCALE_PARTITIONS ("100000,1000000"; quick
// "5000,20000") on BENCH_CONTROLLER_SCALE_BROKERS brokers (1000; quick 100); the JVMs with
// -Xmx BENCH_CONTROLLER_SCALE_XMX (6g).
func (b *ctrlBench) scenarioScale() {
	t := b.t
	brokers := envInt(t, "BENCH_CONTROLLER_SCALE_BROKERS", b.pick(1000, 100))
	per := b.pick(1000, 100)
	var names []string
	sizes := map[string]int{}
	for _, n := range envList(t, "BENCH_CONTROLLER_SCALE_PARTITIONS", b.pickS("100000,1000000", "5000,20000"), per) {
		c := fmt.Sprintf("%s partitions, %d brokers", thousands(n), brokers)
		names, sizes[c] = append(names, c), n
	}
	b.interleave(names, func(sys, c string) ctrlRow { return b.runScale(sys, sizes[c], brokers, per) })
}

func (b *ctrlBench) runScale(sys string, partitions, brokers, per int) ctrlRow {
	t := b.t
	var props kafkatest.Props
	if b.quick {
		// A smoke run's image is a few MB: snapshot every MiB so that the snapshot
		// figures are taken too.
		props = kafkatest.Props{"metadata.log.max.record.bytes.between.snapshots": strconv.Itoa(1 << 20)}
	}
	cq := b.startQuorum(sys, props, scaleJVMFlags())
	defer cq.stop()
	f := cq.fleet(brokers, 2*time.Second)
	defer f.Close()
	active := cq.active()
	v := map[string]float64{"partitions": float64(partitions), "brokers": float64(brokers)}
	// The build in tenths, the active controller's RSS after each.
	steps := max(1, min(10, partitions/per))
	var built float64
	for i := range steps {
		n := partitions / steps / per * per
		if i == steps-1 {
			n = partitions - (steps-1)*(partitions/steps/per*per)
		}
		built += cq.build(fmt.Sprintf("scale%d", i), n, per, 8)
		if s := cq.samplers[active]; s.Sample() {
			pts := s.Points()
			b.addSeries("scale-rss", seriesPoint{System: sys + " " + thousands(partitions), Partitions: partitions / steps * (i + 1), RSSMB: float64(pts[len(pts)-1].RSS) / (1 << 20)})
		}
	}
	v["build_s"] = built
	v["partitions_per_s"] = float64(partitions) / built
	time.Sleep(time.Duration(b.pick(10, 3)) * time.Second)
	now := time.Now()
	cq.usage(v, active, now.Add(-5*time.Second), now)
	if cq.side == kafkatest.SideKafka {
		if live, err := jvmLiveHeap(b.env, cq.q.Node(active).Proc.Pid()); err == nil {
			v["active_heap_mb"] = float64(live) / (1 << 20)
		} else {
			t.Logf("kafka heap: %v", err)
		}
	}
	r := ctrlRow{Scenario: "scale", Values: v}
	if sn, ok := lastSnapshot(cq.side, cq.q.Node(active)); ok {
		v["snapshot_mb"] = float64(sn.bytes) / (1 << 20)
		v["snapshot_write_s"] = sn.end.Sub(sn.start).Seconds()
		r.Note = fmt.Sprintf("last snapshot %s", sn.name)
	} else {
		r.Note = "no snapshot written"
	}

	// kill -9 of all three, then all three started again: how soon creates are answered.
	for _, n := range cq.q.Nodes {
		cq.q.Kill(n.ID)
	}
	cq.finder.Wrong(cq.q.Node(active).Addr)
	t0 := time.Now()
	for _, n := range cq.q.Nodes {
		cq.q.Start(n.ID)
		cq.resample(n.ID)
	}
	probe := controllerload.StartLoad(cq.ctx, cq.finder, controllerload.CreateTopics("probe", 1, 3),
		controllerload.LoadConfig{Rate: 10, Conns: 2, Retry: true, Timeout: 10 * time.Second})
	defer probe.Stop()
	var at time.Time
	for deadline := t0.Add(10 * time.Minute); at.IsZero() && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		at = firstOK(probe.Samples(t0, time.Now().Add(time.Hour)), t0)
	}
	if at.IsZero() {
		r.Note += "; no create answered within 10 minutes of the restart"
		return r
	}
	v["restart_active_s"] = at.Sub(t0).Seconds()
	time.Sleep(5 * time.Second)
	now = time.Now()
	for _, s := range cq.samplers {
		v["restarted_rss_mb"] = max(v["restarted_rss_mb"], float64(s.Window(now.Add(-3*time.Second), now).MaxRSS)/(1<<20))
	}
	return r
}

// addSeries keeps a point of a plotted series.
func (b *ctrlBench) addSeries(name string, p seriesPoint) {
	if b.series == nil {
		b.series = map[string][]seriesPoint{}
	}
	b.series[name] = append(b.series[name], p)
}

// snapshotWrite is one snapshot a controller logged writing.
type snapshotWrite struct {
	name       string
	start, end time.Time
	bytes      int64
}

var (
	jvmSnapStart = regexp.MustCompile(`^\[([0-9-]+ [0-9:,]+)\] .*Creating new KRaft snapshot file snapshot (\d+-\d+) because`)
	jvmSnapEnd   = regexp.MustCompile(`^\[([0-9-]+ [0-9:,]+)\] .*Successfully wrote snapshot (\d+-\d+)`)
)

// lastSnapshot is the last snapshot node n logged writing: kraftd's "creating a new
// snapshot" and "wrote snapshot", Kafka's SnapshotGenerator's "Creating new KRaft snapshot
// file" and SnapshotEmitter's "Successfully wrote"; the size is the file's.
func lastSnapshot(side kafkatest.Side, n *kafkatest.MixedNode) (snapshotWrite, bool) {
	starts := map[string]time.Time{}
	var last snapshotWrite
	found := false
	for _, line := range strings.Split(n.Proc.Log(), "\n") {
		var name string
		var at time.Time
		end := false
		switch side {
		case kafkatest.SideKafka:
			m := jvmSnapStart.FindStringSubmatch(line)
			if m == nil {
				if m = jvmSnapEnd.FindStringSubmatch(line); m == nil {
					continue
				}
				end = true
			}
			ts, err := time.ParseInLocation("2006-01-02 15:04:05,000", m[1], time.Local)
			if err != nil {
				continue
			}
			name, at = m[2], ts
		case kafkatest.SideKraftd:
			if !strings.HasPrefix(line, "{") || !strings.Contains(line, "snapshot") {
				continue
			}
			var e struct {
				TS       string `json:"ts"`
				Msg      string `json:"msg"`
				Offset   int64  `json:"offset"`
				Epoch    int32  `json:"epoch"`
				Snapshot string `json:"snapshot"`
			}
			if json.Unmarshal([]byte(line), &e) != nil {
				continue
			}
			ts, err := time.Parse("2006-01-02T15:04:05.000Z0700", e.TS)
			if err != nil {
				continue
			}
			switch e.Msg {
			case "creating a new snapshot":
				name = fmt.Sprintf("%020d-%010d", e.Offset, e.Epoch)
			case "wrote snapshot":
				name, end = strings.TrimSuffix(e.Snapshot, ".checkpoint"), true
			default:
				continue
			}
			at = ts
		}
		if !end {
			starts[name] = at
			continue
		}
		if s, ok := starts[name]; ok {
			last, found = snapshotWrite{name: name, start: s, end: at}, true
		}
	}
	if found {
		if st, err := os.Stat(filepath.Join(n.PartitionDir, last.name+".checkpoint")); err == nil {
			last.bytes = st.Size()
		}
	}
	return last, found
}

// scenarioStorm is scenario 5: BENCH_CONTROLLER_STORM_PERCENT percent (10) of
// BENCH_CONTROLLER_STORM_BROKERS brokers (1000; quick 100), every tenth by id, stop
// heartbeating at once with BENCH_CONTROLLER_STORM_PARTITIONS partitions (100000; quick
// 2000) in 100-partition topics, broker.session.timeout.ms Kafka's 9 s.
func (b *ctrlBench) scenarioStorm() {
	t := b.t
	brokers := envInt(t, "BENCH_CONTROLLER_STORM_BROKERS", b.pick(1000, 100))
	partitions := envInt(t, "BENCH_CONTROLLER_STORM_PARTITIONS", b.pick(100000, 2000))
	percent := max(1, min(100, envInt(t, "BENCH_CONTROLLER_STORM_PERCENT", 10)))
	c := fmt.Sprintf("%d%% of %d brokers, %s partitions", percent, brokers, thousands(partitions))
	b.interleave([]string{c}, func(sys, _ string) ctrlRow { return b.runStorm(sys, partitions, brokers, percent) })
}

func (b *ctrlBench) runStorm(sys string, partitions, brokers, percent int) ctrlRow {
	t := b.t
	cq := b.startQuorum(sys, nil, nil)
	defer cq.stop()
	f := cq.fleet(brokers, 2*time.Second)
	defer f.Close()
	cq.build("base", partitions, 100, 8)
	active := cq.active()
	follower := controllerload.FollowLog(cq.q.Node(active).PartitionDir)
	// Replayed up to the build's end before the storm (a million records take seconds).
	hw := cq.finder.HighWatermark()
	for deadline := time.Now().Add(5 * time.Minute); follower.Next() < hw; time.Sleep(100 * time.Millisecond) {
		if err := follower.Poll(); err != nil || time.Now().After(deadline) {
			t.Fatalf("%s: replaying the active controller's log: at %d of %d: %v", sys, follower.Next(), hw, err)
		}
	}
	time.Sleep(time.Duration(b.warmup) * time.Second)
	if err := follower.Poll(); err != nil {
		t.Fatal(err)
	}
	stopped := map[int32]bool{}
	every := 100 / percent
	for i, br := range f.Brokers() {
		if i%every == 0 && len(stopped) < brokers*percent/100 {
			stopped[br.ID] = true
		}
	}
	im := follower.Image()
	affected := map[image.TopicPartition]bool{}
	for id := range stopped {
		for tp := range im.PartitionsLedBy(id) {
			affected[tp] = true
		}
	}
	v := map[string]float64{"brokers": float64(brokers), "partitions": float64(partitions), "stopped": float64(len(stopped)),
		"affected": float64(len(affected))}
	from := follower.Next()
	var fenced []time.Time
	var resolvedAt time.Time
	resolvedAtOffset := int64(-1)
	remaining := len(affected)
	counts := map[string]int{}
	follower.OnBatch = func(bt controllerload.Batch) {
		for _, rec := range bt.Records {
			if _, noop := rec.(*metadata.NoOpRecord); noop || resolvedAtOffset >= 0 {
				continue
			}
			counts[rec.TypeName()]++
			switch r := rec.(type) {
			case *metadata.BrokerRegistrationChangeRecord:
				if stopped[r.BrokerId] && r.Fenced == 1 {
					fenced = append(fenced, bt.Appended)
				}
			case *metadata.PartitionChangeRecord:
				tp := image.TopicPartition{TopicID: uuid.UUID(r.TopicId), Partition: r.PartitionId}
				if !affected[tp] {
					continue
				}
				// Led by a live broker, or by none (no live replica was eligible).
				if p, ok := bt.Image.Partition(tp.TopicID, tp.Partition); ok && !stopped[p.Leader()] {
					delete(affected, tp)
					if remaining--; remaining == 0 {
						resolvedAt, resolvedAtOffset = bt.Appended, bt.BaseOffset
					}
				}
			}
		}
	}
	t0 := time.Now()
	for _, br := range f.Brokers() {
		if stopped[br.ID] {
			br.Stop()
		}
	}
	bound := 9*time.Second + time.Duration(b.pick(180, 60))*time.Second
	for deadline := t0.Add(bound); remaining > 0 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err := follower.Poll(); err != nil {
			t.Fatal(err)
		}
	}
	to := time.Now()
	r := ctrlRow{Scenario: "storm", Values: v}
	if remaining > 0 {
		r.Note = fmt.Sprintf("%d partitions still led by a stopped broker after %v", remaining, bound)
	} else {
		v["new_leaders_s"] = resolvedAt.Sub(t0).Seconds()
		v["records"] = float64(sumCounts(counts))
		v["partition_changes"] = float64(counts["PartitionChangeRecord"])
	}
	if len(fenced) > 0 {
		v["first_fenced_s"] = fenced[0].Sub(t0).Seconds()
		v["last_fenced_s"] = fenced[len(fenced)-1].Sub(t0).Seconds()
	}
	leaderless := 0
	for range follower.Image().LeaderlessPartitions() {
		leaderless++
	}
	v["leaderless"] = float64(leaderless)
	hb := f.Heartbeats.Summarize(t0, to)
	v["hb_p99_ms"] = msOf(hb.P99)
	cq.usage(v, active, t0, to)
	t.Logf("%s storm: records from offset %d by type %v", sys, from, counts)
	return r
}

func sumCounts(m map[string]int) int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}
