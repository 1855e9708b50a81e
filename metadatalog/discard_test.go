package metadatalog

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/vfs"
)

// blockingRemoveFS holds every Remove of a *.deleted file until release is
// closed.
type blockingRemoveFS struct {
	vfs.FS
	started chan string
	release chan struct{}
}

func (f *blockingRemoveFS) Remove(name string) error {
	if !strings.HasSuffix(name, ".deleted") {
		return f.FS.Remove(name)
	}
	f.started <- name
	<-f.release
	return f.FS.Remove(name)
}

// TestBackgroundDelete: with BackgroundDelete, retention and truncation take
// segments out of the log at once (renamed *.deleted) while their unlinks
// wait on the discarder's goroutine; Close waits for the unlinks.
func TestBackgroundDelete(t *testing.T) {
	dir := t.TempDir()
	fs := &blockingRemoveFS{FS: vfs.OS, started: make(chan string, 100), release: make(chan struct{})}
	opts := smallOpts(dir)
	opts.FS, opts.RetentionBytes, opts.RetentionMs, opts.BackgroundDelete = fs, 1, -1, true
	l := openTest(t, opts)
	for i := int64(0); i < 60; i++ {
		l.mustAppend(mkBatch(i, 1, 1, 300))
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	l.SetHighWatermark(40)
	writeSnapshot(t, l, raft.OffsetAndEpoch{Offset: 20, Epoch: 1}, snapshotBytes(1, 1000, 10))
	writeSnapshot(t, l, raft.OffsetAndEpoch{Offset: 30, Epoch: 1}, snapshotBytes(1, 2000, 10))
	segs := len(segFiles(t, dir))

	// MaybeClean returns while the discarder's first unlink is held.
	if cleaned, err := l.MaybeClean(time.Unix(0, 0)); err != nil || !cleaned {
		t.Fatalf("clean: %v %v", cleaned, err)
	}
	var first string
	select {
	case first = <-fs.started:
	case <-time.After(10 * time.Second):
		t.Fatal("no segment file reached the discarder")
	}
	if !strings.HasSuffix(first, ".log.deleted") {
		t.Fatalf("discarder removes %s, want a *.log.deleted file", first)
	}
	left := len(segFiles(t, dir))
	if left >= segs || left != len(l.SegmentBases()) {
		t.Fatalf("%d segment files after the clean (%d before), log has %v", left, segs, l.SegmentBases())
	}
	// Truncation renames the dropped segments in the caller too.
	before := len(l.SegmentBases())
	if err := l.TruncateTo(45); err != nil {
		t.Fatal(err)
	}
	if got := len(segFiles(t, dir)); got != len(l.SegmentBases()) || got >= before {
		t.Fatalf("%d segment files after truncation to 45 (%d before), log has %v", got, before, l.SegmentBases())
	}

	close(fs.release)
	start, bases := l.StartOffset(), l.SegmentBases()
	l.Close()
	if m, _ := filepath.Glob(filepath.Join(dir, "*.deleted")); len(m) != 0 {
		t.Fatalf("*.deleted files left after Close: %v", m)
	}
	l.reopen()
	if l.StartOffset() != start || l.EndOffset().Offset != 45 || !slices.Equal(l.SegmentBases(), bases) {
		t.Fatalf("reopen: start %d end %d segments %v, want %d, 45, %v", l.StartOffset(), l.EndOffset().Offset, l.SegmentBases(), start, bases)
	}
}

// truncLogFS records the sizes *.deleted files are cut to, and their
// removal, in order.
type truncLogFS struct {
	vfs.FS
	mu  sync.Mutex
	ops []string
}

type truncLogFile struct {
	vfs.File
	fs   *truncLogFS
	name string
}

func (f *truncLogFS) note(op string) {
	f.mu.Lock()
	f.ops = append(f.ops, op)
	f.mu.Unlock()
}

func (f *truncLogFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil || !strings.HasSuffix(name, ".deleted") {
		return file, err
	}
	return truncLogFile{File: file, fs: f, name: filepath.Base(name)}, nil
}

func (f *truncLogFS) Remove(name string) error {
	if strings.HasSuffix(name, ".deleted") {
		f.note("remove " + filepath.Base(name))
	}
	return f.FS.Remove(name)
}

func (f truncLogFile) Truncate(size int64) error {
	f.fs.note(fmt.Sprintf("truncate %s %d", f.name, size))
	return f.File.Truncate(size)
}

// The discarder frees a file's blocks a chunk at a time from its end, then
// unlinks it; Close cuts the pacing short and still removes every file.
func TestDiscardPaced(t *testing.T) {
	dir := t.TempDir()
	fs := &truncLogFS{FS: vfs.OS}
	opts := smallOpts(dir)
	opts.FS, opts.BackgroundDelete = fs, true
	l := openTest(t, opts)
	l.discarder.chunk, l.discarder.pause = 1000, time.Millisecond
	mk := func(name string, size int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	l.discarder.add(mk("a.log.deleted", 3500))
	l.discarder.add(mk("b.log.deleted", 800))
	deadline := time.Now().Add(10 * time.Second)
	for {
		fs.mu.Lock()
		n := len(fs.ops)
		fs.mu.Unlock()
		if n >= 5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	want := []string{"truncate a.log.deleted 2500", "truncate a.log.deleted 1500", "truncate a.log.deleted 500",
		"remove a.log.deleted", "remove b.log.deleted"}
	fs.mu.Lock()
	got := slices.Clone(fs.ops)
	fs.ops = nil
	fs.mu.Unlock()
	if !slices.Equal(got, want) {
		t.Fatalf("discarder ops %q, want %q", got, want)
	}

	// Close does not wait out the pace.
	l.discarder.pause = time.Hour
	l.discarder.add(mk("c.log.deleted", 5000))
	start := time.Now()
	l.Close()
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("Close took %v with an hour's pause pending", d)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.deleted")); len(m) != 0 {
		t.Fatalf("*.deleted files left after Close: %v", m)
	}
}
