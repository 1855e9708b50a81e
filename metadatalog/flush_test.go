package metadatalog

import (
	"errors"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kraftd/kraftd/vfs"
	"github.com/kraftd/kraftd/vfs/faultfs"
)

// A flush job runs on another goroutine while the driver's goroutine keeps
// appending (run with -race): afterwards exactly its End is flushed, and
// what was appended meanwhile waits for the next flush.
func TestFlushJobRunsBesideAppends(t *testing.T) {
	l := openTest(t, smallOpts(t.TempDir()))
	defer l.Close()
	var next int64
	add := func() {
		next = l.mustAppend(mkBatch(next, 1, 2, 100)) + 1
	}
	for range 3 {
		add()
	}
	for round := range 20 {
		job, err := l.BeginFlush()
		if err != nil {
			t.Fatal(err)
		}
		if job.End() != next {
			t.Fatalf("round %d: job end %d, want the log end %d", round, job.End(), next)
		}
		var wg sync.WaitGroup
		wg.Add(1)
		var runErr error
		go func() { defer wg.Done(); runErr = job.Run() }()
		add() // beside the fsync; rolls segments now and then
		add()
		wg.Wait()
		if runErr != nil {
			t.Fatalf("round %d: run: %v", round, runErr)
		}
		if got := l.FlushedOffset(); got < job.End() || got > l.EndOffset().Offset {
			t.Fatalf("round %d: flushed %d after a job to %d (log end %d)", round, got, job.End(), l.EndOffset().Offset)
		}
		if err := job.Run(); err != nil { // runs once: a second call only reports
			t.Fatalf("round %d: second run: %v", round, err)
		}
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if l.FlushedOffset() != next {
		t.Fatalf("flushed %d after Flush, want %d", l.FlushedOffset(), next)
	}
}

// A job not run before a power cut made nothing durable; one run did. A
// roll, a truncation and Flush run the pending job first, so a segment
// left behind by a roll is never torn.
func TestFlushJobPowerLoss(t *testing.T) {
	const dir = "/d/p-0"
	open := func(t *testing.T, fs *vfs.MemFS) *testLog {
		o := smallOpts(dir)
		o.FS = fs
		return openTest(t, o)
	}
	t.Run("not run", func(t *testing.T) {
		fs := vfs.NewMemFS()
		l := open(t, fs)
		l.mustAppend(mkBatch(0, 1, 2, 100))
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
		l.mustAppend(mkBatch(2, 1, 2, 100))
		job, err := l.BeginFlush()
		if err != nil {
			t.Fatal(err)
		}
		l.Close() // abandons the job: Close does not flush
		if err := job.Run(); err == nil {
			t.Fatal("a job abandoned by Close ran")
		}
		r := open(t, fs.CrashClone(nil))
		defer r.Close()
		if r.EndOffset().Offset != 2 {
			t.Fatalf("after power loss the log ends at %d, want 2 (the unrun job's data lost)", r.EndOffset().Offset)
		}
	})
	t.Run("run", func(t *testing.T) {
		fs := vfs.NewMemFS()
		l := open(t, fs)
		l.mustAppend(mkBatch(0, 1, 2, 100))
		job, err := l.BeginFlush()
		if err != nil {
			t.Fatal(err)
		}
		l.mustAppend(mkBatch(2, 2, 2, 100)) // not covered
		if err := job.Run(); err != nil {
			t.Fatal(err)
		}
		if l.FlushedOffset() != 2 {
			t.Fatalf("flushed %d after a job to 2", l.FlushedOffset())
		}
		// The fsync may have covered the later append too (MemFS's does).
		r := open(t, fs.CrashClone(nil))
		defer r.Close()
		if r.EndOffset().Offset < 2 {
			t.Fatalf("after power loss the log ends at %d, below the job's end 2", r.EndOffset().Offset)
		}
		l.Close()
	})
	t.Run("roll", func(t *testing.T) {
		fs := vfs.NewMemFS()
		l := open(t, fs)
		var next int64
		next = l.mustAppend(mkBatch(0, 1, 10, 300)) + 1 // 3 KB of a 4 KB segment
		if _, err := l.BeginFlush(); err != nil {
			t.Fatal(err)
		}
		next = l.mustAppend(mkBatch(next, 1, 10, 300)) + 1 // rolls
		if n := len(l.SegmentBases()); n != 2 {
			t.Fatalf("%d segments, want a roll to 2", n)
		}
		r := open(t, fs.CrashClone(nil)) // would refuse a torn non-last segment
		defer r.Close()
		if r.EndOffset().Offset < 10 {
			t.Fatalf("after power loss the log ends at %d: the rolled segment lost data", r.EndOffset().Offset)
		}
		l.Close()
	})
	t.Run("truncate", func(t *testing.T) {
		fs := vfs.NewMemFS()
		l := open(t, fs)
		l.mustAppend(mkBatch(0, 1, 2, 100))
		l.mustAppend(mkBatch(2, 1, 2, 100))
		job, err := l.BeginFlush()
		if err != nil {
			t.Fatal(err)
		}
		if err := l.TruncateTo(2); err != nil {
			t.Fatal(err)
		}
		if l.FlushedOffset() != 2 {
			t.Fatalf("flushed %d after truncating to 2", l.FlushedOffset())
		}
		if err := job.Run(); err != nil { // already run by the truncation
			t.Fatal(err)
		}
		if l.FlushedOffset() != 2 {
			t.Fatalf("a settled job moved the flushed offset to %d past the cut at 2", l.FlushedOffset())
		}
		l.Close()
	})
}

// An fsync error in a job is its result, and the log refuses writes once
// it settles the job.
func TestFlushJobError(t *testing.T) {
	ffs := faultfs.Wrap(vfs.OS)
	o := smallOpts(t.TempDir())
	o.FS = ffs
	l := openTest(t, o)
	defer l.Close()
	l.mustAppend(mkBatch(0, 1, 2, 100))
	job, err := l.BeginFlush()
	if err != nil {
		t.Fatal(err)
	}
	ffs.Inject(faultfs.Fail(syscall.EIO, faultfs.OpSync))
	if err := job.Run(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("run: %v, want EIO", err)
	}
	if l.FlushedOffset() != 0 {
		t.Fatalf("flushed %d after a failed fsync", l.FlushedOffset())
	}
	if err := l.Flush(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("flush after a failed job: %v, want its EIO", err)
	}
	if _, err := l.Append(mkBatch(2, 1, 1, 10)); err == nil {
		t.Fatal("append accepted after a failed fsync")
	}
}

// The flush's duration is read from Options.Now: an fsync advances the
// test's clock by what the test says it took.
func TestSlowFlushIsLogged(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	ffs := faultfs.Wrap(vfs.OS)
	o := smallOpts(t.TempDir())
	o.FS = ffs
	o.SlowFlush = 20 * time.Millisecond
	o.Now = clock
	l := openTest(t, o)
	defer l.Close()

	l.mustAppend(mkBatch(0, 1, 2, 100))
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := l.logs.FilterMessage("slow flush").Len(); n != 0 {
		t.Fatalf("%d slow-flush warnings for a fast flush", n)
	}

	ffs.Inject(faultfs.InjectorFunc(func(op faultfs.Op) error {
		if op.Kind == faultfs.OpSync {
			mu.Lock()
			now = now.Add(50 * time.Millisecond)
			mu.Unlock()
		}
		return nil
	}))
	l.mustAppend(mkBatch(2, 1, 1, 10))
	job, err := l.BeginFlush()
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Run(); err != nil {
		t.Fatal(err)
	}
	warns := l.logs.FilterMessage("slow flush").All()
	if len(warns) != 1 {
		t.Fatalf("%d slow-flush warnings, want 1", len(warns))
	}
	f := warns[0].ContextMap()
	if took, _ := f["took"].(time.Duration); took < 50*time.Millisecond || f["end_offset"] != int64(3) {
		t.Fatalf("warning fields %v, want took >= 50ms and end_offset 3", f)
	}
}
