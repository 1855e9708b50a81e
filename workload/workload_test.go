package workload

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/raft"
)

// fakeDriver assigns offsets like a leader's Append and records snapshots.
type fakeDriver struct {
	next    int64
	calls   [][][]byte
	refuse  error
	epochOf []int32
	// maxPerCall > 0 refuses larger calls with ErrRecordTooLarge, as a leader whose
	// batches are capped (small segments) does.
	maxPerCall int
	snapshots  []raft.OffsetAndEpoch
}

func (f *fakeDriver) UpgradeKRaftVersion(time.Time, int32, int16, bool) (int64, error) {
	return -1, nil
}

func (f *fakeDriver) WriteEmptySnapshot(id raft.OffsetAndEpoch, lastContainedMs int64) error {
	f.snapshots = append(f.snapshots, id)
	return nil
}

func (f *fakeDriver) Append(now time.Time, epoch int32, records [][]byte) (int64, error) {
	if f.refuse != nil {
		return 0, f.refuse
	}
	if f.maxPerCall > 0 && len(records) > f.maxPerCall {
		return 0, raft.ErrRecordTooLarge
	}
	f.calls = append(f.calls, records)
	f.epochOf = append(f.epochOf, epoch)
	f.next += int64(len(records))
	return f.next - 1, nil
}

func (f *fakeDriver) appended() int {
	n := 0
	for _, c := range f.calls {
		n += len(c)
	}
	return n
}

func leaderStatus(epoch int32) raft.Status {
	return raft.Status{NodeID: 1, Role: raft.RoleLeader, Epoch: epoch, LeaderID: 1}
}

func TestWorkloadThrottle(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var out bytes.Buffer
	w := New(Config{Throughput: 1000, RecordSize: 32, MaxInFlight: 10000}, 1, true, &out, zap.NewNop(), t0)
	d := &fakeDriver{}
	w.Tick(t0, leaderStatus(3), d)
	if d.appended() != 0 {
		t.Fatalf("appended %d at t0", d.appended())
	}
	next := w.Tick(t0.Add(100*time.Millisecond), leaderStatus(3), d)
	if got := d.appended(); got != 100 {
		t.Fatalf("after 100ms at 1000/s: appended %d, want 100", got)
	}
	if next.Before(t0.Add(101 * time.Millisecond)) {
		t.Errorf("next wake %v is before the append tick", next.Sub(t0))
	}
	// Records carry sequence, node id and epoch.
	r := d.calls[0][0]
	if len(r) != 32 || binary.BigEndian.Uint64(r) != 1 || binary.BigEndian.Uint32(r[8:]) != 1 || binary.BigEndian.Uint32(r[12:]) != 3 {
		t.Errorf("record %x", r)
	}
	// Latency runs from each record's offered (due) time: records due at
	// 1, 2, ..., 100 ms, committed at 102 ms.
	w.clock = func() time.Time { return t0.Add(102 * time.Millisecond) }
	w.HandleCommit([]raft.CommittedBatch{{BaseOffset: 0, LastOffset: 99, Epoch: 3, Records: make([][]byte, 100)}})
	if n, lo, hi := w.total.TotalCount(), w.total.Min(), w.total.Max(); n != 100 || lo < 1990 || lo > 2010 || hi < 100900 || hi > 101100 {
		t.Fatalf("latencies: %d samples, min %dus max %dus; want 100 from 2ms to 101ms", n, lo, hi)
	}
	w.Tick(t0.Add(1*time.Second), leaderStatus(3), d)
	if got := d.appended(); got != 1000 {
		t.Fatalf("after 1s: appended %d, want 1000", got)
	}
}

// The loop ticks the workload on every round, far more often than the append
// tick: records that fell due are still appended together, one batch per tick.
func TestWorkloadAppendsOncePerTick(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := New(Config{Throughput: 20000, RecordSize: 16, AppendTick: time.Millisecond}, 1, true, &bytes.Buffer{}, zap.NewNop(), t0)
	d := &fakeDriver{}
	w.Tick(t0, leaderStatus(1), d)
	var wakes []time.Time
	for now := t0; now.Before(t0.Add(10 * time.Millisecond)); now = now.Add(50 * time.Microsecond) {
		wakes = append(wakes, w.Tick(now, leaderStatus(1), d))
	}
	if n := len(d.calls); n < 9 || n > 11 {
		t.Fatalf("200 ticks in 10 ms with a 1 ms append tick: %d appends, want about 10", n)
	}
	if got := d.appended(); got < 180 || got > 200 {
		t.Fatalf("appended %d records in 10 ms at 20000/s, want the ~200 due less at most one tick's", got)
	}
	for i, next := range wakes {
		if now := t0.Add(time.Duration(i) * 50 * time.Microsecond); next.Sub(now) > time.Millisecond {
			t.Fatalf("tick at %v asks to run next at %v: later than one append tick", now.Sub(t0), next.Sub(t0))
		}
	}
}

// --throughput is an open loop: every record that fell due is offered whatever
// is still uncommitted (MaxInFlight bounds only the unthrottled mode); records
// the leader's buffer refused are offered again later and charged latency from
// their due time.
func TestWorkloadOpenLoop(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := New(Config{Throughput: 1000, RecordSize: 16, MaxInFlight: 10}, 1, true, &bytes.Buffer{}, zap.NewNop(), t0)
	d := &fakeDriver{}
	w.Tick(t0, leaderStatus(1), d)
	w.Tick(t0.Add(100*time.Millisecond), leaderStatus(1), d)
	if got := d.appended(); got != 100 {
		t.Fatalf("100 ms at 1000/s with nothing committed: appended %d, want 100 (not held to --max-in-flight)", got)
	}
	// The buffer is full for 50 ms: nothing is appended, nothing is lost.
	d.refuse = raft.ErrBufferFull
	w.Tick(t0.Add(150*time.Millisecond), leaderStatus(1), d)
	if got := d.appended(); got != 100 || w.stopped {
		t.Fatalf("refused: appended %d stopped %v", got, w.stopped)
	}
	d.refuse = nil
	w.Tick(t0.Add(200*time.Millisecond), leaderStatus(1), d)
	if got := d.appended(); got != 200 {
		t.Fatalf("after the buffer drained: appended %d, want the backlog too (200)", got)
	}
	// The held-back records (due at 101..150 ms) are charged from their due time.
	w.clock = func() time.Time { return t0.Add(210 * time.Millisecond) }
	w.HandleCommit([]raft.CommittedBatch{{BaseOffset: 0, LastOffset: 199, Epoch: 1, Records: make([][]byte, 200)}})
	if n, hi := w.total.TotalCount(), w.total.Max(); n != 200 || hi < 208_000 || hi > 210_000 {
		t.Fatalf("latencies: %d samples, max %dus; want 200 with the first record's 209 ms", n, hi)
	}
	if v := w.total.ValueAtQuantile(50); v < 105_000 || v > 115_000 {
		t.Fatalf("median latency %dus, want about 110 ms (records due 1..200 ms, committed at 210)", v)
	}
}

func TestWorkloadMaxInFlightAndLatency(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var out bytes.Buffer
	w := New(Config{Throughput: 0, RecordSize: 16, MaxInFlight: 50, MaxPerAppend: 20, StatsFormat: StatsJSON}, 1, true, &out, zap.NewNop(), t0)
	d := &fakeDriver{}
	w.clock = func() time.Time { return t0.Add(1500 * time.Microsecond) }
	w.Tick(t0, leaderStatus(2), d)
	if got := d.appended(); got != 50 || len(d.calls) != 3 {
		t.Fatalf("unthrottled: appended %d in %d calls, want 50 in 3", got, len(d.calls))
	}
	w.Tick(t0.Add(time.Millisecond), leaderStatus(2), d)
	if d.appended() != 50 {
		t.Fatalf("went past max in flight: %d", d.appended())
	}
	// Commit offsets 0..29 (first call and half of the second).
	w.HandleCommit([]raft.CommittedBatch{
		{BaseOffset: 0, LastOffset: 0, Epoch: 2, Control: true, Records: [][]byte{{1}}},
		{BaseOffset: 0, LastOffset: 29, Epoch: 2, Records: make([][]byte, 30)},
	})
	if w.inFlight != 20 || w.committed != 30 {
		t.Fatalf("inFlight %d committed %d, want 20 and 30", w.inFlight, w.committed)
	}
	if w.total.TotalCount() != 30 {
		t.Fatalf("latency samples %d, want 30", w.total.TotalCount())
	}
	if v := w.total.ValueAtQuantile(50); v < 1490 || v > 1510 {
		t.Fatalf("median latency %dus, want 1500us", v)
	}
	w.Tick(t0.Add(2*time.Millisecond), leaderStatus(2), d)
	if d.appended() != 80 {
		t.Fatalf("refill: appended %d, want 80", d.appended())
	}
	// Commits of another epoch count but are not our latency.
	w.HandleCommit([]raft.CommittedBatch{{BaseOffset: 30, LastOffset: 39, Epoch: 1, Records: make([][]byte, 10)}})
	if w.total.TotalCount() != 30 || w.committed != 40 {
		t.Fatalf("foreign epoch: samples %d committed %d", w.total.TotalCount(), w.committed)
	}
	// Losing leadership drops what was pending.
	w.Tick(t0.Add(3*time.Millisecond), raft.Status{NodeID: 1, Role: raft.RoleFollower, Epoch: 3, LeaderID: 2}, d)
	if w.inFlight != 0 || len(w.pending) != 0 {
		t.Fatalf("after losing leadership: inFlight %d pending %d", w.inFlight, len(w.pending))
	}
	// A refused append is retried later, not counted.
	d.refuse = raft.ErrBufferFull
	w.Tick(t0.Add(4*time.Millisecond), leaderStatus(4), d)
	if w.inFlight != 0 || w.stopped {
		t.Fatalf("refused append: inFlight %d stopped %v", w.inFlight, w.stopped)
	}
	d.refuse = nil
	w.Tick(t0.Add(5*time.Millisecond), leaderStatus(4), d)
	if w.inFlight != 50 || d.epochOf[len(d.epochOf)-1] != 4 {
		t.Fatalf("after refusal: inFlight %d", w.inFlight)
	}

	w.printStats(t0.Add(5*time.Second), leaderStatus(4), true)
	var s Stats
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &s); err != nil {
		t.Fatalf("stats json %q: %v", out.String(), err)
	}
	if !s.Final || s.NodeID != 1 || s.Epoch != 4 || s.CommittedRecords != 40 || s.LatencyCount != 30 || s.RecordsPerSec != 8 {
		t.Fatalf("stats %+v", s)
	}
	for _, k := range []string{"node_id", "leader_id", "epoch", "committed_records", "records_per_sec", "mb_per_sec", "p50_ms", "p75_ms", "p99_ms", "p999_ms", "max_ms", "cpu_seconds", "peak_rss_mb"} {
		if !strings.Contains(out.String(), `"`+k+`"`) {
			t.Errorf("stats json lacks %q", k)
		}
	}
}

func TestWorkloadStopsOnHardError(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := New(Config{Throughput: 0, RecordSize: 16, MaxInFlight: 1}, 1, true, &bytes.Buffer{}, zap.NewNop(), t0)
	d := &fakeDriver{refuse: raft.ErrRecordTooLarge}
	w.Tick(t0, leaderStatus(1), d)
	if !w.stopped {
		t.Fatal("workload did not stop when a single record is too large")
	}
	d.refuse = nil
	w.Tick(t0.Add(time.Second), leaderStatus(1), d)
	if d.appended() != 0 {
		t.Fatal("stopped workload appended")
	}
}

// A backlog that does not fit one batch is split into smaller Append calls, not
// dropped: the workload keeps going.
func TestWorkloadSplitsBacklogForSmallBatches(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := New(Config{Throughput: 0, RecordSize: 16, MaxInFlight: 10}, 1, true, &bytes.Buffer{}, zap.NewNop(), t0)
	d := &fakeDriver{maxPerCall: 3}
	for i := 0; i < 10 && d.appended() < 10; i++ {
		w.Tick(t0.Add(time.Duration(i)*time.Millisecond), leaderStatus(1), d)
	}
	if w.stopped {
		t.Fatal("workload stopped on a backlog larger than a batch")
	}
	if d.appended() != 10 {
		t.Fatalf("appended %d records, want all 10 in flight", d.appended())
	}
	for _, c := range d.calls {
		if len(c) > 3 {
			t.Fatalf("an Append call of %d records was accepted above the cap", len(c))
		}
	}
}

func TestWorkloadSnapshotTrigger(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := New(Config{Throughput: 0, RecordSize: 32, MaxInFlight: 10, SnapshotEvery: 100}, 2, true, &bytes.Buffer{}, zap.NewNop(), t0)
	w.stopped = true // follower-like: no appends
	d := &fakeDriver{}
	follower := raft.Status{NodeID: 2, Role: raft.RoleFollower, Epoch: 3, LeaderID: 1}
	w.HandleCommit([]raft.CommittedBatch{{BaseOffset: 0, LastOffset: 2, Epoch: 3, Records: [][]byte{make([]byte, 32), make([]byte, 32), make([]byte, 32)}}})
	w.Tick(t0, follower, d)
	if len(d.snapshots) != 0 {
		t.Fatalf("snapshot after 96 bytes: %v", d.snapshots)
	}
	w.HandleCommit([]raft.CommittedBatch{
		{BaseOffset: 3, LastOffset: 3, Epoch: 3, Records: [][]byte{make([]byte, 32)}},
		{BaseOffset: 4, LastOffset: 4, Epoch: 4, Control: true, Records: [][]byte{{0}}},
	})
	w.Tick(t0, follower, d)
	if len(d.snapshots) != 1 || d.snapshots[0] != (raft.OffsetAndEpoch{Offset: 5, Epoch: 4}) {
		t.Fatalf("snapshots %v, want one at 5/4 (end of the last committed batch)", d.snapshots)
	}
	w.Tick(t0, follower, d)
	if len(d.snapshots) != 1 {
		t.Fatal("snapshot repeated without new commits")
	}
}

// TestStatsKafkaLine: --stats-format kafka prints TestRaftServer's line, with the
// interval's committed bytes per second, only for intervals with commits of its own
// appends, and no summary.
func TestStatsKafkaLine(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var out bytes.Buffer
	w := New(Config{Throughput: 0, RecordSize: 100, MaxInFlight: 50, MaxPerAppend: 50, StatsFormat: StatsKafka}, 1, true, &out, zap.NewNop(), t0)
	d := &fakeDriver{}
	w.clock = func() time.Time { return t0.Add(20 * time.Millisecond) }
	w.Tick(t0, leaderStatus(2), d)
	w.HandleCommit([]raft.CommittedBatch{{BaseOffset: 0, LastOffset: 49, Epoch: 2, Records: recordsOf(50, 100)}})
	w.printStats(t0.Add(2*time.Second), leaderStatus(2), false)
	w.printStats(t0.Add(4*time.Second), leaderStatus(2), false) // nothing committed
	w.printStats(t0.Add(5*time.Second), leaderStatus(2), true)
	want := regexp.MustCompile(`^Throughput \(bytes/second\): 2500\.00, Latency \(ms\): 20\.0 p75 20\.0 p99 20\.0 p999\n$`)
	if !want.MatchString(out.String()) {
		t.Fatalf("kafka stats output %q, want one line matching %s", out.String(), want)
	}
}

func recordsOf(n, size int) [][]byte {
	r := make([][]byte, n)
	for i := range r {
		r[i] = make([]byte, size)
	}
	return r
}

func TestStatsFormatFlag(t *testing.T) {
	for _, name := range []string{"text", "json", "kafka", "csv"} {
		var f StatsFormat
		if err := f.Set(name); err != nil || f.String() != name {
			t.Errorf("Set(%q) = %v, String %q", name, err, f.String())
		}
	}
	var f StatsFormat
	if err := f.Set("JSON"); err == nil {
		t.Error("Set accepted an unknown format")
	}
}

// A refused append's slab is reused by the next try: the records that go out
// still carry consecutive sequence numbers, the node id and the epoch, and
// zeros after them, and no two accepted appends share memory.
func TestWorkloadReusesRefusedSlab(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := New(Config{Throughput: 1000, RecordSize: 64, MaxInFlight: 10, MaxPerAppend: 1000}, 7, true, &bytes.Buffer{}, zap.NewNop(), t0)
	d := &fakeDriver{}
	w.Tick(t0, leaderStatus(3), d)
	for i, at := range []time.Duration{50, 100, 150, 200} {
		if i%2 == 0 {
			d.refuse = raft.ErrBufferFull
		} else {
			d.refuse = nil
		}
		w.Tick(t0.Add(at*time.Millisecond), leaderStatus(3), d)
	}
	seen := map[*byte]bool{}
	seq := uint64(0)
	for _, call := range d.calls {
		if len(call) == 0 {
			continue
		}
		if seen[&call[0][0]] {
			t.Fatalf("two accepted appends share a slab")
		}
		seen[&call[0][0]] = true
		for _, r := range call {
			seq++
			if got := binary.BigEndian.Uint64(r); got != seq {
				t.Fatalf("record sequence %d, want %d", got, seq)
			}
			if id, ep := binary.BigEndian.Uint32(r[8:]), binary.BigEndian.Uint32(r[12:]); id != 7 || ep != 3 {
				t.Fatalf("record %d: node %d epoch %d, want 7 and 3", seq, id, ep)
			}
			if !bytes.Equal(r[16:], make([]byte, 48)) {
				t.Fatalf("record %d: payload not zero: %x", seq, r[16:])
			}
		}
	}
	if seq != 200 {
		t.Fatalf("appended %d records in 200 ms at 1000/s, want 200", seq)
	}
}
