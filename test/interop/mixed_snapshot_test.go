package interop

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// TestMixedRaftSnapshot: two kraftd voters run with small snapshot, segment and retention
// limits until the leader's log no longer starts at 0; then Kafka's TestRaftServer joins as
// the third voter with an empty log. It must load kraftd's snapshot through FetchSnapshot
// (its copy byte-identical to the leader's file), then fetch the rest of the log, which
// matches the leader's batch for batch.
func TestMixedRaftSnapshot(t *testing.T) {
	t.Parallel() // see interop/doc.go
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	K, J := kafkatest.SideKraftd, kafkatest.SideKafka
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{K, K, J}, Throughput: 500, RecordSize: mixedRecordSize,
		KraftdProps: kafkatest.Props{
			"metadata.log.max.record.bytes.between.snapshots": "65536",
			// Segments roll by time, not size: kraftd accepts segments smaller than a batch
			// can grow (docs/design/kafka-4.4-findings.md 3.5), Kafka's floor is 8 MiB.
			"metadata.log.segment.ms":      "500",
			"metadata.max.retention.bytes": "131072",
		},
		KraftdArgs: []string{"--log-maintenance-interval", "300ms"}})
	q.Start(1)
	q.Start(2)
	leader, epoch, err := q.WaitLeaderAmong([]int32{1, 2}, 0, mixedElectionWait)
	if err != nil {
		t.Fatal(err)
	}
	ld := q.Node(leader)

	// Keep a copy of every snapshot and segment the leader writes: retention deletes old
	// ones quickly, possibly before node 3 has fetched past them.
	saved := watchSnapshots(t, ld.PartitionDir)
	defer saved.stop()
	segments := watchFiles(ld.PartitionDir, "*.log", true)
	defer segments.stop()

	retention := regexp.MustCompile(`"msg":"log retention removed old segments and snapshots".*"log_start_offset":(\d+)`)
	var logStart int64
	for deadline := time.Now().Add(60 * time.Second); logStart == 0; time.Sleep(100 * time.Millisecond) {
		for _, m := range retention.FindAllStringSubmatch(ld.Proc.Log(), -1) {
			logStart, _ = strconv.ParseInt(m[1], 10, 64)
		}
		if time.Now().After(deadline) {
			t.Fatalf("kraftd leader %d's log start did not move past 0", leader)
		}
	}
	t.Logf("kraftd leader %d (epoch %d): log start offset %d", leader, epoch, logStart)

	// The JVM joins with an empty log: the leader answers its Fetch with a snapshot id.
	q.Start(3)
	jvm := q.Node(3)
	// Read the JVM's snapshot as soon as it appears (retention may delete it later).
	first, jvmSnap, err := firstSnapshot(jvm.PartitionDir, "", 60*time.Second)
	if err != nil {
		t.Fatalf("Kafka node 3 joined a leader whose log starts at %d: %v", logStart, err)
	}
	if l, e, err := q.WaitLeader(0, mixedElectionWait); err != nil || l != leader || e != epoch {
		t.Fatalf("after node 3 joined: leader %d epoch %d (%v), want %d in %d", l, e, err, leader, epoch)
	}
	// Node 3 fetches past the snapshot: the leader's snapshot is below its high watermark.
	committed, err := q.WaitCaughtUp(q.MaxKraftdHighWatermark(), mixedElectionWait)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int32{3, 3 - leader, leader} { // the JVM, the other kraftd, the leader
		if err := q.Stop(id); err != nil {
			t.Errorf("stop node %d: %v", id, err)
		}
	}
	saved.stop()
	segments.stop()

	// The JVM's snapshot is byte for byte the file the kraftd leader served.
	want, ok := saved.get(first)
	if !ok {
		t.Errorf("Kafka node 3 holds snapshot %s, which the kraftd leader never wrote", first)
	} else if !bytes.Equal(jvmSnap, want) {
		t.Errorf("snapshot %s: Kafka node 3's copy (%d bytes) differs from the kraftd leader's (%d bytes)", first, len(jvmSnap), len(want))
	}
	t.Logf("Kafka node 3 loaded kraftd's snapshot %s (%d bytes)", first, len(jvmSnap))
	snapCopy := filepath.Join(t.TempDir(), first)
	if err := os.WriteFile(snapCopy, jvmSnap, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := env.DumpLog(ctx, kafkatest.DumpOptions{DeepIteration: true}, snapCopy)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "SnapshotHeader") || !strings.Contains(out, "SnapshotFooter") {
		t.Errorf("kafka-dump-log on node 3's snapshot %s:\n%s", first, out)
	}

	// Node 3's log starts at a snapshot and matches the leader's from there.
	js, je, jb := readBatches(t, jvm.PartitionDir)
	ls, le, lb := readBatches(t, ld.PartitionDir)
	for off, b := range segments.batches() { // what retention deleted meanwhile
		lb[off] = b
		ls = min(ls, off)
	}
	t.Logf("Kafka node 3 log [%d, %d); kraftd leader log [%d, %d); committed %d", js, je, ls, le, committed)
	if js == 0 {
		t.Errorf("Kafka node 3's log starts at 0: it did not start from the snapshot")
	}
	if je < committed {
		t.Errorf("Kafka node 3's log ends at %d, below the committed offset %d", je, committed)
	}
	same := sameBatches(t, js, je, jb, ls, le, lb)
	if same == 0 {
		t.Errorf("no batch of Kafka node 3's log could be compared with the leader's")
	}
	t.Logf("%d batches identical on Kafka node 3 and the kraftd leader", same)
	keepLogs(t, q)
}

// fileWatch copies the files of a partition dir as they appear (retention deletes them
// within seconds under small limits).
type fileWatch struct {
	mu    sync.Mutex
	saved map[string][]byte
	stop  func()
}

func (w *fileWatch) get(name string) ([]byte, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b, ok := w.saved[name]
	return b, ok
}

func watchSnapshots(t *testing.T, dir string) *fileWatch {
	return watchFiles(dir, "*.checkpoint", false)
}

// watchFiles copies every file of dir matching pattern once it appears and, with grow, again
// whenever its size changes (a segment being appended to).
func watchFiles(dir, pattern string, grow bool) *fileWatch {
	w := &fileWatch{saved: map[string][]byte{}}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			names, _ := filepath.Glob(filepath.Join(dir, pattern))
			for _, name := range names {
				base := filepath.Base(name)
				old, ok := w.get(base)
				if ok && (!grow || fileSize(name) == int64(len(old))) {
					continue
				}
				if b, err := os.ReadFile(name); err == nil {
					w.mu.Lock()
					w.saved[base] = b
					w.mu.Unlock()
				}
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	w.stop = sync.OnceFunc(func() { close(done); wg.Wait() })
	return w
}

func fileSize(name string) int64 {
	fi, err := os.Stat(name)
	if err != nil {
		return -1
	}
	return fi.Size()
}

// batches returns every whole batch of the saved segment copies by base offset.
func (w *fileWatch) batches() map[int64][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := map[int64][]byte{}
	for _, b := range w.saved {
		for len(b) > 0 {
			h, err := protocol.CheckBatch(b)
			if err != nil {
				break // a copy may end in a batch being written
			}
			m[h.BaseOffset] = bytes.Clone(b[:h.Size()])
			b = b[h.Size():]
		}
	}
	return m
}

// firstSnapshot waits for a snapshot file in dir other than skip and returns its name and
// bytes, read at once.
func firstSnapshot(dir, skip string, timeout time.Duration) (string, []byte, error) {
	for deadline := time.Now().Add(timeout); ; time.Sleep(20 * time.Millisecond) {
		got, _ := filepath.Glob(filepath.Join(dir, "*.checkpoint"))
		for _, name := range got {
			if filepath.Base(name) == skip {
				continue
			}
			if b, err := os.ReadFile(name); err == nil {
				return filepath.Base(name), b, nil
			}
		}
		if time.Now().After(deadline) {
			return "", nil, fmt.Errorf("no snapshot in %s within %v", dir, timeout)
		}
	}
}

// readBatches reads a partition dir with kraftd's metadatalog: log start, log end and every
// batch by base offset.
func readBatches(t *testing.T, dir string) (int64, int64, map[int64][]byte) {
	t.Helper()
	l, err := metadatalog.OpenReadOnly(dir)
	if err != nil {
		t.Fatalf("metadatalog cannot open %s: %v", dir, err)
	}
	defer l.Close()
	m := map[int64][]byte{}
	if err := l.Batches(l.StartOffset(), func(b []byte) error {
		h, err := protocol.ParseBatchHeader(b)
		if err != nil {
			return err
		}
		m[h.BaseOffset] = bytes.Clone(b)
		return nil
	}); err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	return l.StartOffset(), l.EndOffset().Offset, m
}

// sameBatches compares the batches of a follower's log with the leader's where both hold
// them (below both log ends, above both log starts) and returns how many matched.
func sameBatches(t *testing.T, fs, fe int64, fb map[int64][]byte, ls, le int64, lb map[int64][]byte) int {
	t.Helper()
	same := 0
	for off, b := range fb {
		h, _ := protocol.ParseBatchHeader(b)
		if h.LastOffset() >= min(fe, le) || off < max(fs, ls) {
			continue
		}
		if !bytes.Equal(b, lb[off]) {
			t.Fatalf("batch at offset %d differs between the follower and the leader", off)
		}
		same++
	}
	return same
}

// TestMixedControllerSnapshot: two Kafka controllers snapshot every second
// (metadata.log.max.snapshot.interval.ms); then a kraftd `start` node joins as the third
// voter with an empty log. A Kafka leader answers a Fetch from offset 0 with its latest
// snapshot id whenever it holds a snapshot other than the bootstrap one, so kraftd must load
// the JVM leader's snapshot through FetchSnapshot (its copy byte-identical to the JVM's
// file) and fetch the rest of the log, which matches the leader's batch for batch.
func TestMixedControllerSnapshot(t *testing.T) {
	t.Parallel() // see interop/doc.go
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	K, J := kafkatest.SideKraftd, kafkatest.SideKafka
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{J, J, K}, Controllers: true,
		Props: kafkatest.Props{"metadata.log.max.snapshot.interval.ms": "1000"}})
	q.Start(1)
	q.Start(2)
	leader, epoch, err := q.WaitLeaderAmong([]int32{1, 2}, 0, mixedElectionWait)
	if err != nil {
		t.Fatal(err)
	}
	ld := q.Node(leader)
	saved := watchSnapshots(t, ld.PartitionDir)
	defer saved.stop()
	const bootstrapSnapshot = "00000000000000000000-0000000000.checkpoint"
	leaderSnap, _, err := firstSnapshot(ld.PartitionDir, bootstrapSnapshot, 60*time.Second)
	if err != nil {
		t.Fatalf("Kafka leader %d wrote no snapshot: %v", leader, err)
	}
	t.Logf("Kafka leader %d (epoch %d) wrote snapshot %s", leader, epoch, leaderSnap)

	q.Start(3)
	kd := q.Node(3)
	first, snap, err := firstSnapshot(kd.PartitionDir, bootstrapSnapshot, 60*time.Second)
	if err != nil {
		t.Fatalf("kraftd node 3 joined a leader holding snapshot %s: %v", leaderSnap, err)
	}
	if l, e, err := q.WaitLeader(0, mixedElectionWait); err != nil || l != leader || e != epoch {
		t.Fatalf("after node 3 joined: leader %d epoch %d (%v), want %d in %d", l, e, err, leader, epoch)
	}
	// Node 3 fetches past the snapshot: a batch above it, to compare with the leader's.
	snapEnd, err := strconv.ParseInt(first[:20], 10, 64)
	if err != nil {
		t.Fatalf("snapshot name %q: %v", first, err)
	}
	if _, err := q.WaitCaughtUp(snapEnd+1, mixedElectionWait); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int32{3, 3 - leader, leader} {
		if err := q.Stop(id); err != nil {
			t.Errorf("stop node %d: %v", id, err)
		}
	}
	saved.stop()
	want, ok := saved.get(first)
	if !ok {
		t.Errorf("kraftd node 3 holds snapshot %s, which the Kafka leader never wrote", first)
	} else if !bytes.Equal(snap, want) {
		t.Errorf("snapshot %s: kraftd's copy (%d bytes) differs from the Kafka leader's (%d bytes)", first, len(snap), len(want))
	}
	t.Logf("kraftd node 3 loaded Kafka's snapshot %s (%d bytes)", first, len(snap))
	ks, ke, kb := readBatches(t, kd.PartitionDir)
	ls, le, lb := readBatches(t, ld.PartitionDir)
	t.Logf("kraftd node 3 log [%d, %d); Kafka leader log [%d, %d)", ks, ke, ls, le)
	if ks == 0 {
		t.Errorf("kraftd node 3's log starts at 0: it did not start from the snapshot")
	}
	same := sameBatches(t, ks, ke, kb, ls, le, lb)
	if same == 0 {
		t.Errorf("no batch of kraftd node 3's log could be compared with the leader's")
	}
	t.Logf("%d batches identical on kraftd node 3 and the Kafka leader", same)
	keepLogs(t, q)
}
