package metadatalog

import (
	"bytes"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/vfs"
	"github.com/kraftd/kraftd/vfs/faultfs"
)

// syncer is what the node calls off its loop before Freeze.
type syncer interface{ Sync() error }

// Sync flushes a snapshot before Freeze; the frozen snapshot holds what was
// written.
func TestSnapshotSyncThenFreeze(t *testing.T) {
	l := openTest(t, smallOpts(t.TempDir()))
	defer l.Close()
	l.mustAppend(mkBatch(0, 1, 20, 100))
	l.mustFlush()
	id := raft.OffsetAndEpoch{Offset: 10, Epoch: 1}
	content := snapshotBytes(1, 1700000000000, 50)
	w, err := l.CreateSnapshot(id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(content); err != nil {
		t.Fatal(err)
	}
	if err := w.(syncer).Sync(); err != nil {
		t.Fatal(err)
	}
	if err := w.Freeze(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	r, err := l.OpenSnapshot(id)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, r.Size())
	if _, err := r.ReadAt(buf, 0); err != nil || !bytes.Equal(buf, content) {
		t.Fatalf("snapshot content after Sync and Freeze: %v", err)
	}
}

// A failed Sync fails the snapshot, and the log once the snapshot is
// closed (or frozen) on the loop, as a failed fsync in Freeze does.
func TestSnapshotSyncErrorFailsLogOnClose(t *testing.T) {
	ffs := faultfs.Wrap(vfs.OS)
	o := smallOpts(t.TempDir())
	o.FS = ffs
	l := openTest(t, o)
	defer l.Close()
	l.mustAppend(mkBatch(0, 1, 20, 100))
	l.mustFlush()
	w, err := l.CreateSnapshot(raft.OffsetAndEpoch{Offset: 10, Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(snapshotBytes(1, 1700000000000, 50)); err != nil {
		t.Fatal(err)
	}
	ffs.Inject(faultfs.If(func(op faultfs.Op) bool { return strings.HasSuffix(op.Path, ".part") },
		faultfs.Fail(syscall.EIO, faultfs.OpSync)))
	if err := w.(syncer).Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Sync: %v, want EIO", err)
	}
	ffs.Reset()
	if _, err := l.Append(mkBatch(20, 1, 1, 10)); err != nil {
		t.Fatalf("append before the snapshot is closed: %v (Sync must not touch the log)", err)
	}
	if err := w.Close(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Close after a failed Sync: %v, want EIO", err)
	}
	if _, err := l.Append(mkBatch(21, 1, 1, 10)); err == nil {
		t.Fatal("append accepted after a snapshot's failed fsync")
	}
	if _, ok := l.LatestSnapshot(); ok {
		t.Fatal("a snapshot whose fsync failed is visible")
	}
}
