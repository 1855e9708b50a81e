package node

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/topics"
)

// snapApp appends one record per round while it leads, and asks for a
// snapshot of what committed every `every` records, until it has `want`
// snapshots; the snapshot's records are "rec-<offset>" for each data
// offset it covers. fail, once set, is returned by Err.
type snapApp struct {
	every, want int

	mu        sync.Mutex
	committed []int64 // data offsets committed
	end       raft.OffsetAndEpoch
	asked     int
	lastAsked int64
	written   []SnapshotResult
	fail      error
	appended  int
}

func (a *snapApp) HandleCommit(bs []raft.CommittedBatch) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, b := range bs {
		if !b.Control {
			for i := range b.Records {
				a.committed = append(a.committed, b.BaseOffset+int64(i))
			}
		}
		a.end = raft.OffsetAndEpoch{Offset: b.LastOffset + 1, Epoch: b.Epoch}
	}
}
func (a *snapApp) HandleLoadSnapshot(raft.OffsetAndEpoch, raft.SnapshotReader) {}
func (a *snapApp) HandleLeaderChange(raft.LeaderAndEpoch)                      {}
func (a *snapApp) BeginShutdown()                                              {}

func (a *snapApp) Tick(now time.Time, st raft.Status, w Writer) time.Time {
	if st.Role == raft.RoleLeader && st.CommittedInEpoch && a.appended < a.every*(a.want+1) {
		if _, err := w.Append(now, st.Epoch, [][]byte{[]byte("x")}); err == nil {
			a.appended++
		}
	}
	return now.Add(5 * time.Millisecond)
}

func (a *snapApp) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.fail
}

func (a *snapApp) NextSnapshot() (SnapshotJob, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.asked >= a.want || len(a.committed) < (a.asked+1)*a.every || a.end.Offset <= a.lastAsked {
		return SnapshotJob{}, false
	}
	a.asked++
	a.lastAsked = a.end.Offset
	offsets := append([]int64(nil), a.committed...)
	return SnapshotJob{ID: a.end, LastContainedMs: time.Now().UnixMilli(), Batches: func(yield func([][]byte) error) error {
		// Two records a batch, to see several batches.
		for i := 0; i < len(offsets); i += 2 {
			var recs [][]byte
			for _, o := range offsets[i:min(i+2, len(offsets))] {
				recs = append(recs, []byte(fmt.Sprintf("rec-%d", o)))
			}
			if err := yield(recs); err != nil {
				return err
			}
		}
		return nil
	}}, true
}

func (a *snapApp) SnapshotWritten(r SnapshotResult) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.written = append(a.written, r)
}

func (a *snapApp) results() []SnapshotResult {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]SnapshotResult(nil), a.written...)
}

// The snapshots an application asks for are written off the loop and
// frozen into the log: Kafka's header (with the voter set), the records in
// the batches the job yields at offsets after the header's, the footer.
// With two snapshots and tiny retention limits, log maintenance then moves
// the log start to the newer one and deletes the older.
func TestSnapshotsWrittenOffLoopAndRetained(t *testing.T) {
	cfg, _ := singleVoter(t)
	cfg.MaxRetentionBytes = 1
	app := &snapApp{every: 5, want: 2}
	core, logs := observer.New(zap.InfoLevel)
	n, err := New(cfg, Options{ClusterID: "MkU3OEVBNTcwNTJENDM2Qg", TopicName: topics.ClusterMetadata,
		App: app, ShutdownTimeout: time.Second, MaintainEvery: 50 * time.Millisecond, Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- n.Run(ctx) }()
	deadline := time.After(30 * time.Second)
	for len(app.results()) < 2 {
		select {
		case err := <-ran:
			t.Fatalf("Run ended: %v", err)
		case <-deadline:
			t.Fatalf("snapshots written: %+v", app.results())
		case <-time.After(20 * time.Millisecond):
		}
	}
	// Let maintenance run once more after the second freeze.
	time.Sleep(300 * time.Millisecond)
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	res := app.results()
	for _, r := range res {
		if r.Err != nil || r.Exists || r.Bytes <= 0 {
			t.Fatalf("snapshot result %+v", r)
		}
	}
	dir := topics.PartitionDir(cfg.MetadataLogDir, topics.ClusterMetadata)
	l, err := metadatalog.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	snaps := l.Snapshots()
	if len(snaps) != 1 || snaps[0] != res[1].ID {
		t.Fatalf("snapshots left %v, want only %v (retention deletes the older)", snaps, res[1].ID)
	}
	// (Reopened, the log starts at its first segment again, as Kafka's.)
	if logs.FilterMessage("deleted log and snapshot below a snapshot: retention bytes exceeded").Len() != 1 {
		t.Fatal("retention did not move the log start to the newer snapshot")
	}
	r, err := l.OpenSnapshot(snaps[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Size() != res[1].Bytes {
		t.Fatalf("file %d bytes, reported %d", r.Size(), res[1].Bytes)
	}
	checkSnapshotFile(t, r, snaps[0])
	if m, _ := filepath.Glob(filepath.Join(dir, "*.part")); len(m) != 0 {
		t.Fatalf("left over: %v", m)
	}
}

// checkSnapshotFile reads a snapshot written by snapApp back.
func checkSnapshotFile(t *testing.T, r raft.SnapshotReader, id raft.OffsetAndEpoch) {
	t.Helper()
	buf := make([]byte, r.Size())
	if _, err := r.ReadAt(buf, 0); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var values []string
	next := int64(0)
	for len(buf) > 0 {
		b, rest, err := protocol.DecodeBatch(buf)
		if err != nil {
			t.Fatal(err)
		}
		buf = rest
		if b.BaseOffset != next || b.PartitionLeaderEpoch != id.Epoch {
			t.Fatalf("batch at %d epoch %d, want %d epoch %d", b.BaseOffset, b.PartitionLeaderEpoch, next, id.Epoch)
		}
		next = b.LastOffset() + 1
		if b.Control {
			for _, rec := range b.Records {
				typ, _ := protocol.ControlType(rec.Key)
				kinds = append(kinds, fmt.Sprint(typ))
			}
			continue
		}
		kinds = append(kinds, "data")
		for _, rec := range b.Records {
			values = append(values, string(rec.Value))
		}
	}
	want := fmt.Sprint(protocol.ControlSnapshotHeader)
	if kinds[0] != want || kinds[len(kinds)-1] != fmt.Sprint(protocol.ControlSnapshotFooter) {
		t.Fatalf("batches %v: no header or footer", kinds)
	}
	if len(values) == 0 || !strings.HasPrefix(values[0], "rec-") {
		t.Fatalf("records %v", values)
	}
}

// An application's Err stops the node with that error.
func TestApplicationErrorStopsTheNode(t *testing.T) {
	cfg, _ := singleVoter(t)
	app := &snapApp{every: 1 << 30}
	app.fail = errors.New("image: PartitionRecord v0 at offset 7: no such topic")
	n, err := New(cfg, Options{ClusterID: "MkU3OEVBNTcwNTJENDM2Qg", TopicName: topics.ClusterMetadata,
		App: app, ShutdownTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- n.Run(context.Background()) }()
	select {
	case err = <-ran:
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not stop")
	}
	if err == nil || !strings.Contains(err.Error(), "offset 7: no such topic") {
		t.Fatalf("Run: %v", err)
	}
}

// blockingApp asks for one snapshot whose records wait for release; it
// counts its ticks.
type blockingApp struct {
	ignoreCommits
	release chan struct{}
	started chan struct{}
	asked   bool
	ticks   atomic.Int64
	mu      sync.Mutex
	results []SnapshotResult
	end     raft.OffsetAndEpoch
}

func (a *blockingApp) HandleCommit(bs []raft.CommittedBatch) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, b := range bs {
		a.end = raft.OffsetAndEpoch{Offset: b.LastOffset + 1, Epoch: b.Epoch}
	}
}

func (a *blockingApp) Tick(now time.Time, _ raft.Status, _ Writer) time.Time {
	a.ticks.Add(1)
	return now.Add(5 * time.Millisecond)
}

func (a *blockingApp) NextSnapshot() (SnapshotJob, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.asked || a.end.Offset == 0 {
		return SnapshotJob{}, false
	}
	a.asked = true
	return SnapshotJob{ID: a.end, Batches: func(yield func([][]byte) error) error {
		close(a.started)
		<-a.release
		return yield([][]byte{[]byte("late")})
	}}, true
}

func (a *blockingApp) SnapshotWritten(r SnapshotResult) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.results = append(a.results, r)
}

// While a snapshot's records are being produced the loop goes on ticking;
// a node stopped meanwhile waits for its writer and leaves no partial
// file.
func TestSnapshotDoesNotStallTheLoop(t *testing.T) {
	cfg, _ := singleVoter(t)
	app := &blockingApp{release: make(chan struct{}), started: make(chan struct{})}
	n, err := New(cfg, Options{ClusterID: "MkU3OEVBNTcwNTJENDM2Qg", TopicName: topics.ClusterMetadata,
		App: app, ShutdownTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- n.Run(ctx) }()
	select {
	case <-app.started:
	case err := <-ran:
		t.Fatalf("Run ended: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("no snapshot started")
	}
	before := app.ticks.Load()
	for deadline := time.Now().Add(20 * time.Second); app.ticks.Load() < before+5; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the loop stopped ticking while a snapshot was written")
		}
	}
	cancel()
	// The writer is released only after the stop began: Run waits for it.
	time.AfterFunc(100*time.Millisecond, func() { close(app.release) })
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	dir := topics.PartitionDir(cfg.MetadataLogDir, topics.ClusterMetadata)
	if m, _ := filepath.Glob(filepath.Join(dir, "*.part")); len(m) != 0 {
		t.Fatalf("left over: %v", m)
	}
	// (Had the shutdown taken longer than the release, the snapshot would
	// have been finished and frozen: either way nothing partial is left.)
}

// recordingWriter is a raft.SnapshotWriter that notes what is done to it.
type recordingWriter struct {
	ops     []string
	syncErr error
}

func (w *recordingWriter) ID() raft.OffsetAndEpoch { return raft.OffsetAndEpoch{} }
func (w *recordingWriter) Write(p []byte) (int, error) {
	w.ops = append(w.ops, "write")
	return len(p), nil
}
func (w *recordingWriter) Size() int64   { return 0 }
func (w *recordingWriter) Freeze() error { w.ops = append(w.ops, "freeze"); return nil }
func (w *recordingWriter) Close() error  { return nil }
func (w *recordingWriter) Sync() error   { w.ops = append(w.ops, "sync"); return w.syncErr }

// The writer's goroutine flushes the snapshot after its last batch (the
// footer), so Freeze on the loop has no fsync left to wait for; a failed
// flush is the goroutine's result.
func TestSnapshotBodySyncedOffLoop(t *testing.T) {
	job := SnapshotJob{ID: raft.OffsetAndEpoch{Offset: 5, Epoch: 1}, Batches: func(yield func([][]byte) error) error {
		return yield([][]byte{[]byte("a"), []byte("b")})
	}}
	w := &recordingWriter{}
	if err := writeSnapshotBody(w, []byte("head"), 1, job, func() bool { return false }); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(w.ops, ","); got != "write,write,write,sync" {
		t.Fatalf("writer saw %s, want the header, the batch and the footer written, then a sync", got)
	}
	w = &recordingWriter{syncErr: errors.New("EIO")}
	if err := writeSnapshotBody(w, []byte("head"), 1, job, func() bool { return false }); err == nil || err.Error() != "EIO" {
		t.Fatalf("a failed sync: %v", err)
	}
}
