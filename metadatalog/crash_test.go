package metadatalog

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/vfs"
)

// TestQuorumStateCrashAtEveryStep crashes (power loss, MemFS.CrashClone)
// after every file system operation of a quorum-state write: the file must
// then hold the old or the new state, never an error or a mix.
func TestQuorumStateCrashAtEveryStep(t *testing.T) {
	mfs := vfs.NewMemFS()
	if err := vfs.MkdirAll(mfs, "/d", 0o755); err != nil {
		t.Fatal(err)
	}
	s := NewQuorumStateStore(mfs, "/d")
	old := raft.ElectionState{Epoch: 4, LeaderID: -1, VotedID: 2, VotedDirectoryID: [16]byte{1}}
	next := raft.ElectionState{Epoch: 5, LeaderID: 3, VotedID: -1, Voters: []int32{1, 2, 3}}
	if err := s.Write(old); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var clones []*vfs.MemFS
	mfs.SetAfterOp(func() {
		clones = append(clones, mfs.CrashClone(nil), mfs.CrashClone(rng))
	})
	if err := s.Write(next); err != nil {
		t.Fatal(err)
	}
	mfs.SetAfterOp(nil)
	if len(clones) < 8 {
		t.Fatalf("only %d crash points", len(clones))
	}
	sawNew := false
	for i, c := range clones {
		st, ok, err := NewQuorumStateStore(c, "/d").Read()
		if err != nil || !ok {
			t.Fatalf("crash point %d: %v %v", i/2, ok, err)
		}
		switch {
		case reflect.DeepEqual(st, old):
		case reflect.DeepEqual(st, next):
			sawNew = true
		default:
			t.Fatalf("crash point %d: state %+v is neither old nor new", i/2, st)
		}
	}
	if !sawNew {
		t.Fatal("the new state never became durable")
	}
	if st, _, _ := NewQuorumStateStore(mfs.CrashClone(nil), "/d").Read(); !reflect.DeepEqual(st, next) {
		t.Fatal("a completed write must survive a crash")
	}
}

// TestFreshNodeVoteSurvivesPowerLoss: a fresh node opens its log, which
// creates the partition dir and its parent, and casts a vote. A power loss
// at any step leaves a dir that opens and a quorum-state that reads, and once
// the vote was written it survives: a new directory's entry is durable only
// when its parent is fsynced, and the vote would vanish with the directory.
func TestFreshNodeVoteSurvivesPowerLoss(t *testing.T) {
	const dir = "/var/kraft/meta/__cluster_metadata-0"
	mfs := vfs.NewMemFS()
	var images []*vfs.MemFS
	mfs.SetAfterOp(func() { images = append(images, mfs.CrashClone(nil)) })
	l, err := Open(Options{Dir: dir, FS: mfs})
	if err != nil {
		t.Fatal(err)
	}
	vote := raft.ElectionState{Epoch: 1, LeaderID: -1, VotedID: 2}
	if err := NewQuorumStateStore(mfs, dir).Write(vote); err != nil {
		t.Fatal(err)
	}
	mfs.SetAfterOp(nil)
	l.Close()
	for i, img := range images {
		l, err := Open(Options{Dir: dir, FS: img})
		if err != nil {
			t.Fatalf("crash after operation %d: open: %v", i+1, err)
		}
		l.Close()
		if _, _, err := NewQuorumStateStore(img, dir).Read(); err != nil {
			t.Fatalf("crash after operation %d: %v", i+1, err)
		}
	}
	st, ok, err := NewQuorumStateStore(mfs.CrashClone(nil), dir).Read()
	if err != nil || !ok || !reflect.DeepEqual(st, vote) {
		t.Fatalf("the vote did not survive a power loss: %+v %v %v", st, ok, err)
	}
}

// logState is what the log must look like after recovery from a crash at
// some moment: its start, a model of batches it may hold a prefix of, and
// the offset below which nothing may be lost.
type logState struct {
	start    int64
	batches  []modelBatch
	required int64
}

func (s logState) accepts(l *Log, content []byte) error {
	if l.StartOffset() != s.start {
		return fmt.Errorf("start %d, want %d", l.StartOffset(), s.start)
	}
	pos, end := 0, s.start
	for _, b := range s.batches {
		if pos == len(content) {
			break
		}
		if pos+len(b.data) > len(content) || !bytes.Equal(content[pos:pos+len(b.data)], b.data) {
			return fmt.Errorf("content diverges at offset %d", b.base)
		}
		pos += len(b.data)
		end = b.next
	}
	if pos != len(content) {
		return fmt.Errorf("content longer than the model")
	}
	if end < s.required {
		return fmt.Errorf("lost durable data: end %d < required %d", end, s.required)
	}
	return nil
}

// TestLogCrashAtEveryStep runs appends (with segment rolls), flushes, a
// truncation, snapshot creation and a snapshot install on MemFS, crashing
// after every file system operation. Every crash image must open without
// error and hold the state from just before or just after the operation
// that was running, with nothing flushed lost.
func TestLogCrashAtEveryStep(t *testing.T) {
	seeds := 4
	if testing.Short() {
		seeds = 2
	}
	for seed := 1; seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runCrashSteps(t, uint64(seed)) })
	}
}

func runCrashSteps(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	mfs := vfs.NewMemFS()
	opts := Options{Dir: "/log/__cluster_metadata-0", FS: mfs, SegmentMinBytes: 512, SegmentBytes: 1200}
	l, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	var model []modelBatch
	start := int64(0)
	epoch := int32(1)
	end := func() int64 {
		if len(model) == 0 {
			return start
		}
		return model[len(model)-1].next
	}
	type crash struct {
		fs     *vfs.MemFS
		before logState
		op     string
	}
	var crashes []crash
	var before logState
	var opName string
	mfs.SetAfterOp(func() {
		crashes = append(crashes, crash{mfs.CrashClone(rng), before, opName})
	})
	// runCapped executes one operation, recording the states a crash during
	// it may leave. A truncation to offset cap may lose anything from cap
	// up, flushed or not.
	runCapped := func(name string, cap int64, fn func()) {
		opName = name
		required := l.FlushedOffset()
		if cap >= 0 {
			required = min(required, cap)
		}
		before = logState{start, append([]modelBatch(nil), model...), required}
		n := len(crashes)
		fn()
		after := logState{start, append([]modelBatch(nil), model...), l.FlushedOffset()}
		for i := n; i < len(crashes); i++ {
			c := crashes[i]
			checkCrash(t, opts, c.fs, c.op, []logState{c.before, after})
		}
		crashes = crashes[:0]
	}
	run := func(name string, fn func()) { runCapped(name, -1, fn) }
	appendN := func(n int) {
		run(fmt.Sprintf("append %d batches at %d", n, end()), func() {
			var buf []byte
			off := end()
			for i := 0; i < n; i++ {
				recs := 1 + rng.IntN(3)
				b := mkBatch(off, epoch, recs, 20+rng.IntN(200))
				model = append(model, modelBatch{b, off, off + int64(recs), epoch})
				buf = append(buf, b...)
				off += int64(recs)
			}
			if _, err := l.Append(buf); err != nil {
				t.Fatal(err)
			}
		})
	}
	flush := func() {
		run("flush", func() {
			if err := l.Flush(); err != nil {
				t.Fatal(err)
			}
		})
	}
	for i := 0; i < 6; i++ {
		appendN(1 + rng.IntN(3))
		if rng.IntN(2) == 0 {
			flush()
		}
	}
	flush()
	epoch++
	appendN(3)
	// Truncate back into the unflushed and flushed region.
	cut := len(model) / 2
	l.SetHighWatermark(model[cut].base)
	runCapped(fmt.Sprintf("truncate to %d", model[cut].base), model[cut].base, func() {
		if err := l.TruncateTo(model[cut].base); err != nil {
			t.Fatal(err)
		}
		model = model[:cut]
	})
	epoch++
	appendN(4)
	flush()
	// A snapshot below the HW, then a snapshot install past the end.
	l.SetHighWatermark(end())
	sid := raft.OffsetAndEpoch{Offset: end(), Epoch: epoch}
	run("create snapshot", func() {
		w, err := l.CreateSnapshot(sid)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(snapshotBytes(sid.Epoch, 1, 300)); err != nil {
			t.Fatal(err)
		}
		if err := w.Freeze(); err != nil {
			t.Fatal(err)
		}
	})
	epoch += 2
	iid := raft.OffsetAndEpoch{Offset: end() + 50, Epoch: epoch}
	run("download snapshot", func() {
		w, err := l.CreateSnapshot(iid)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(snapshotBytes(iid.Epoch, 1, 300)); err != nil {
			t.Fatal(err)
		}
		if err := w.Freeze(); err != nil {
			t.Fatal(err)
		}
	})
	run("truncate to snapshot", func() {
		if err := l.TruncateToSnapshot(iid); err != nil {
			t.Fatal(err)
		}
		model, start = nil, iid.Offset
	})
	appendN(3)
	flush()
	mfs.SetAfterOp(nil)
	l.Close()
}

func checkCrash(t *testing.T, opts Options, fs *vfs.MemFS, op string, states []logState) {
	t.Helper()
	opts.FS = fs
	l, err := Open(opts)
	if err != nil {
		t.Fatalf("crash during %s: open: %v", op, err)
	}
	defer l.Close()
	var content []byte
	if err := l.Batches(l.StartOffset(), func(b []byte) error { content = append(content, b...); return nil }); err != nil {
		t.Fatalf("crash during %s: read: %v", op, err)
	}
	var errs []error
	for _, s := range states {
		err := s.accepts(l, content)
		if err == nil {
			return
		}
		// A snapshot past the log end restarts the log there (Kafka's
		// rule); the state after a crash during a download may be that.
		errs = append(errs, err)
	}
	if latest, ok := l.LatestSnapshot(); ok && l.StartOffset() == latest.Offset && len(content) == 0 {
		return
	}
	t.Fatalf("crash during %s: recovered log (start %d, end %d) matches neither state: %v", op, l.StartOffset(), l.EndOffset().Offset, errs)
}
