//go:build interopbench

package interop

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/internal/metadatatest/synthetic"
	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// controllerHeapJVMFlags are a production-like controller's: G1, as Kafka's
// scripts run it, with room for a million partitions.
var controllerHeapJVMFlags = []string{"-Xmx8g", "-Xms256m", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-Djava.awt.headless=true"}

// TestKafkaControllerHeap states what a Kafka 4.4.0 controller needs for a
// metadata log: the image benchmark's cluster (synthetic.Cluster:
// 1000 brokers, RF 3 with directories, a change to one partition in ten) of
// 100,000 and of 1,000,000 partitions, written as segments into a formatted
// single-voter controller dir; the controller loads it, becomes active, and
// its live heap after a full GC (jcmd GC.class_histogram, which collects
// first: its Total; also read on the empty cluster before) and RSS are read. Beside it, kraftd's image of the same
// dir as `controller metadata summary --memory` loads it (heap after GC,
// RSS). A measurement, built with -tags interopbench; KRAFTD_HEAP_PARTITIONS
// picks the sizes (comma-separated):
//
//	cd test && go test -tags interopbench -run TestKafkaControllerHeap -v -timeout 60m ./interop/
func TestKafkaControllerHeap(t *testing.T) {
	env := kafkatest.Require(t)
	bin := kafkatest.BuildKraftd(t)
	sizes := []int{100_000, 1_000_000}
	if s := os.Getenv("KRAFTD_HEAP_PARTITIONS"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("KRAFTD_HEAP_PARTITIONS: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	if out, err := os.ReadFile("/proc/loadavg"); err == nil {
		t.Logf("load average before: %s", strings.TrimSpace(string(out)))
	}
	for _, n := range sizes {
		measureControllerHeap(t, env, bin, n)
	}
}

func measureControllerHeap(t *testing.T, env *kafkatest.Env, bin string, n int) {
	t.Helper()
	const id = 3000 // above the synthetic brokers' ids
	port := kafkatest.FreePort(t)
	props := kafkatest.Props{
		// No broker heartbeats will come: keep the registered brokers unfenced,
		// and the partitions where the log put them.
		"broker.session.timeout.ms":    "86400000",
		"auto.leader.rebalance.enable": "false",
		// No snapshot while measuring.
		"metadata.log.max.record.bytes.between.snapshots": strconv.FormatInt(1<<50, 10),
		"metadata.log.max.snapshot.interval.ms":           "0",
	}
	cfg := kafkatest.ControllerConfig{NodeID: id, Port: port, Props: props, JVMFlags: controllerHeapJVMFlags}
	c := env.StartController(t, cfg)
	if err := c.WaitLog(kafkatest.ActivationLine, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	baseline, err := jvmLiveHeap(env, c.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}

	recs := synthetic.Cluster(n)
	base, end := appendRecords(t, c.PartitionDir, recs, 1000)
	t.Logf("partitions=%d: %d records appended at offsets %d-%d", n, len(recs), base, end-1)
	recs = nil

	cfg.Dir, cfg.NoFormat = c.LogDir, true
	start := time.Now()
	c = env.StartController(t, cfg)
	for _, line := range []string{kafkatest.ActivationLine, "The loader finished catching up to the current high water mark"} {
		if err := c.WaitLog(line, 30*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	loaded := time.Since(start)
	time.Sleep(5 * time.Second) // the publishers' first images
	live, err := jvmLiveHeap(env, c.Pid())
	if err != nil {
		t.Fatal(err)
	}
	u, err := c.Usage()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kafka-controller partitions=%d loaded_in=%v live_heap_after_full_gc=%d empty_cluster=%d (%.0f B/partition above it) rss=%d peak_rss=%d flags=%q",
		n, loaded.Round(time.Second), live, baseline, float64(live-baseline)/float64(n), u.RSS, u.PeakRSS, controllerHeapJVMFlags)
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "metadata", "summary", "--dir", c.LogDir, "--memory")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("controller metadata: %v\n%s%s", err, out, stderr.Bytes())
	}
	t.Logf("kraftd-image %s", strings.TrimSpace(stderr.String()))
	var heap int64
	for _, f := range strings.Fields(stderr.String()) {
		if v, ok := strings.CutPrefix(f, "heap_after_gc_bytes="); ok {
			heap, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	t.Logf("kraftd-image partitions=%d heap_after_gc=%d (%.0f B/partition)", n, heap, float64(heap)/float64(n))
}

// appendRecords appends recs to the stopped controller's log as batches of
// batchSize in its last epoch; it returns the first and the end offset.
func appendRecords(t *testing.T, dir string, recs []metadata.Record, batchSize int) (int64, int64) {
	t.Helper()
	l, err := metadatalog.Open(metadatalog.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	epoch := l.EndOffset().Epoch
	base := l.EndOffset().Offset
	var buf []byte
	for len(recs) > 0 {
		k := min(batchSize, len(recs))
		b := protocol.Batch{BaseTimestamp: time.Now().UnixMilli()}
		for _, rec := range recs[:k] {
			_, hi := rec.ValidVersions()
			v, err := metadata.Append(nil, rec, hi)
			if err != nil {
				t.Fatal(err)
			}
			b.Records = append(b.Records, protocol.Record{Value: v})
		}
		buf = protocol.AppendBatch(buf[:0], b)
		if _, err := l.AppendAsLeader(buf, epoch); err != nil {
			t.Fatal(err)
		}
		recs = recs[k:]
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	return base, l.EndOffset().Offset
}

// jvmLiveHeap is the Total of `jcmd PID GC.class_histogram`: the bytes of
// the objects live after the full collection the histogram starts with.
func jvmLiveHeap(env *kafkatest.Env, pid int) (int64, error) {
	jcmd := filepath.Join(filepath.Dir(env.Java), "jcmd")
	out, err := exec.Command(jcmd, strconv.Itoa(pid), "GC.class_histogram").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("jcmd GC.class_histogram: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "Total" {
			return strconv.ParseInt(f[2], 10, 64)
		}
	}
	return 0, fmt.Errorf("jcmd GC.class_histogram: no Total line in %d bytes", len(out))
}
