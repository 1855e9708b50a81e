package metadatalog

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/metadatalog/vfs"
	"github.com/kraftd/kraftd/raft"
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
