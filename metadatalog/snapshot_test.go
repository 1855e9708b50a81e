package metadatalog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/vfs"
)

// snapshotBytes builds snapshot content as Kafka writes it: header control
// batch, a data batch, footer control batch, base offsets from 0, batch
// epoch = snapshot epoch.
func snapshotBytes(epoch int32, ts int64, payload int) []byte {
	hdr := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	for i := 0; i < 8; i++ {
		hdr[2+i] = byte(uint64(ts) >> (56 - 8*i))
	}
	out := protocol.AppendBatch(nil, protocol.Batch{BaseOffset: 0, PartitionLeaderEpoch: epoch, Control: true, BaseTimestamp: ts,
		Records: []protocol.Record{{Key: []byte{0, 0, 0, 3}, Value: hdr}}})
	out = protocol.AppendBatch(out, protocol.Batch{BaseOffset: 1, PartitionLeaderEpoch: epoch, BaseTimestamp: ts,
		Records: []protocol.Record{{Value: bytes.Repeat([]byte{7}, payload)}}})
	return protocol.AppendBatch(out, protocol.Batch{BaseOffset: 2, PartitionLeaderEpoch: epoch, Control: true, BaseTimestamp: ts,
		Records: []protocol.Record{{Key: []byte{0, 0, 0, 4}, Value: []byte{0, 0, 0}}}})
}

func writeSnapshot(t *testing.T, l *testLog, id raft.OffsetAndEpoch, content []byte) {
	t.Helper()
	w, err := l.CreateSnapshot(id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(content); err != nil {
		t.Fatal(err)
	}
	if w.Size() != int64(len(content)) {
		t.Fatalf("size %d", w.Size())
	}
	if err := w.Freeze(); err != nil {
		t.Fatal(err)
	}
	w.Close()
}

func TestSnapshotLifecycle(t *testing.T) {
	dir := t.TempDir()
	l := openTest(t, smallOpts(dir))
	for i := int64(0); i < 20; i++ {
		l.mustAppend(mkBatch(i, 1, 1, 300))
	}
	l.mustFlush()
	id := raft.OffsetAndEpoch{Offset: 10, Epoch: 1}
	content := snapshotBytes(1, 1700000000000, 50)

	w, err := l.CreateSnapshot(id)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(content[:20])
	if _, ok := l.LatestSnapshot(); ok {
		t.Fatal("unfrozen snapshot visible")
	}
	parts, _ := filepath.Glob(filepath.Join(dir, "00000000000000000010-0000000001-*.checkpoint.part"))
	if len(parts) != 1 {
		t.Fatalf("part files: %v", parts)
	}
	w.Close() // discard
	if parts, _ = filepath.Glob(filepath.Join(dir, "*.part")); len(parts) != 0 {
		t.Fatalf("Close without Freeze left %v", parts)
	}

	writeSnapshot(t, l, id, content)
	p := filepath.Join(dir, "00000000000000000010-0000000001.checkpoint")
	if st, err := os.Stat(p); err != nil || st.Mode().Perm()&0o222 != 0 {
		t.Fatalf("frozen snapshot file: %v %v", st, err)
	}
	if _, err := l.CreateSnapshot(id); !errors.Is(err, ErrSnapshotExists) {
		t.Fatalf("duplicate: %v", err)
	}
	r, err := l.OpenSnapshot(id)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, r.Size())
	if _, err := r.ReadAt(buf, 0); err != nil || !bytes.Equal(buf, content) || r.ID() != id {
		t.Fatalf("snapshot content: %v", err)
	}
	r.Close()
	if _, err := l.OpenSnapshot(raft.OffsetAndEpoch{Offset: 3, Epoch: 1}); !errors.Is(err, raft.ErrSnapshotNotFound) {
		t.Fatalf("unknown snapshot: %v", err)
	}
	if ts, err := l.snapshotTimestamp(id); err != nil || ts != 1700000000000 {
		t.Fatalf("header timestamp %d %v", ts, err)
	}
	// A crash while writing a snapshot leaves a .part that open removes.
	if w, err = l.CreateSnapshot(raft.OffsetAndEpoch{Offset: 15, Epoch: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(content); err != nil {
		t.Fatal(err)
	}
	l.reopen()
	if parts, _ = filepath.Glob(filepath.Join(dir, "*.part")); len(parts) != 0 {
		t.Fatalf("open left %v", parts)
	}
	if got := l.Snapshots(); len(got) != 1 || got[0] != id {
		t.Fatalf("snapshots after reopen: %v", got)
	}

	// Follower installing a snapshot past its log end.
	id2 := raft.OffsetAndEpoch{Offset: 50, Epoch: 3}
	writeSnapshot(t, l, id2, snapshotBytes(3, 1700000000001, 10))
	if err := l.TruncateToSnapshot(raft.OffsetAndEpoch{Offset: 60, Epoch: 3}); !errors.Is(err, raft.ErrSnapshotNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	if err := l.TruncateToSnapshot(id2); err != nil {
		t.Fatal(err)
	}
	if l.StartOffset() != 50 || l.EndOffset() != (raft.OffsetAndEpoch{Offset: 50, Epoch: 3}) || l.FlushedOffset() != 50 {
		t.Fatalf("after install: start %d end %+v", l.StartOffset(), l.EndOffset())
	}
	if got := l.Snapshots(); len(got) != 1 || got[0] != id2 {
		t.Fatalf("older snapshots must go: %v", got)
	}
	if _, err := l.Read(49, 10); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below start: %v", err)
	}
	if oe, ok := l.EndOffsetForEpoch(3); !ok || oe != id2 {
		t.Fatalf("empty log after a snapshot: EndOffsetForEpoch(3) = %+v %v, want the snapshot id", oe, ok)
	}
	if _, err := l.Append(mkBatch(50, 2, 1, 10)); !errors.Is(err, ErrInvalidAppend) {
		t.Fatalf("an epoch below the snapshot's must be refused: %v", err)
	}
	l.mustAppend(mkBatch(50, 4, 1, 10))
	l.mustFlush()
	l.reopen()
	if l.StartOffset() != 50 || l.EndOffset().Offset != 51 {
		t.Fatalf("reopen after install: %d %+v", l.StartOffset(), l.EndOffset())
	}
	// Below the first epoch, the snapshot at the log start answers.
	if oe, ok := l.EndOffsetForEpoch(3); !ok || oe != id2 {
		t.Fatalf("EndOffsetForEpoch(3) = %+v %v, want the snapshot id", oe, ok)
	}
	if _, ok := l.EndOffsetForEpoch(2); ok {
		t.Fatal("EndOffsetForEpoch(2): no epoch <= 2 is known")
	}
}

func TestOpenSnapshotStates(t *testing.T) {
	// A snapshot past the log end (crash during install): the log restarts
	// at it.
	dir := t.TempDir()
	l := openTest(t, Options{Dir: dir})
	l.mustAppend(mkBatch(0, 1, 5, 10))
	l.mustFlush()
	l.Close()
	os.WriteFile(filepath.Join(dir, "00000000000000000100-0000000002.checkpoint"), snapshotBytes(2, 1, 1), 0o444)
	l = openTest(t, Options{Dir: dir})
	if l.StartOffset() != 100 || l.EndOffset() != (raft.OffsetAndEpoch{Offset: 100, Epoch: 2}) {
		t.Fatalf("start %d end %+v", l.StartOffset(), l.EndOffset())
	}
	if segs := segFiles(t, dir); len(segs) != 1 || filepath.Base(segs[0]) != "00000000000000000100.log" {
		t.Fatalf("segments %v", segs)
	}
	l.Close()
	// Log start > 0 with no snapshot at or above it is refused.
	os.Remove(filepath.Join(dir, "00000000000000000100-0000000002.checkpoint"))
	if _, err := Open(Options{Dir: dir}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "no snapshot") {
		t.Fatalf("start without snapshot: %v", err)
	}
}

func TestRetention(t *testing.T) {
	dir := t.TempDir()
	opts := smallOpts(dir)
	opts.RetentionBytes = 6000
	opts.RetentionMs = -1
	l := openTest(t, opts)
	for i := int64(0); i < 60; i++ {
		l.mustAppend(mkBatch(i, 1, 1, 300))
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	l.SetHighWatermark(40)
	ids := []raft.OffsetAndEpoch{{Offset: 20, Epoch: 1}, {Offset: 35, Epoch: 1}, {Offset: 50, Epoch: 1}}
	for _, id := range ids {
		writeSnapshot(t, l, id, snapshotBytes(1, 1000, 100))
	}
	nseg := len(segFiles(t, dir))
	cleaned, err := l.MaybeClean(time.Unix(0, 0))
	if err != nil || !cleaned {
		t.Fatalf("clean: %v %v", cleaned, err)
	}
	// The start may move to 35 (<= HW 40) but not to 50 (above the HW).
	if l.StartOffset() != 35 {
		t.Fatalf("start offset %d", l.StartOffset())
	}
	if got := l.Snapshots(); len(got) != 2 || got[0] != ids[1] {
		t.Fatalf("snapshots %v", got)
	}
	if len(segFiles(t, dir)) >= nseg {
		t.Fatal("no segment deleted")
	}
	for _, s := range l.segs[1:] {
		if s.base > 35 && l.segs[0].base > 35 {
			t.Fatal("segment holding the start deleted")
		}
	}
	if _, err := l.Read(35, 100); err != nil {
		t.Fatalf("read at the new start: %v", err)
	}
	l.SetHighWatermark(60)
	if cleaned, err := l.MaybeClean(time.Unix(0, 0)); err != nil || !cleaned {
		t.Fatalf("clean past snapshot 35: %v %v", cleaned, err)
	}
	if got := l.Snapshots(); len(got) != 1 || got[0] != ids[2] || l.StartOffset() != 50 {
		t.Fatalf("newest snapshot must stay: %v start %d", got, l.StartOffset())
	}
	l.reopen()
	if l.StartOffset() > 50 || l.EndOffset().Offset != 60 {
		t.Fatalf("reopen: start %d end %d", l.StartOffset(), l.EndOffset().Offset)
	}

	// Retention by time: the oldest snapshot's header timestamp.
	dir2 := t.TempDir()
	opts2 := smallOpts(dir2)
	opts2.RetentionBytes = -1
	opts2.RetentionMs = 1000
	l2 := openTest(t, opts2)
	for i := int64(0); i < 30; i++ {
		l2.mustAppend(mkBatch(i, 1, 1, 300))
	}
	l2.SetHighWatermark(30)
	writeSnapshot(t, l2, raft.OffsetAndEpoch{Offset: 10, Epoch: 1}, snapshotBytes(1, 10_000, 1))
	writeSnapshot(t, l2, raft.OffsetAndEpoch{Offset: 20, Epoch: 1}, snapshotBytes(1, 20_000, 1))
	if c, err := l2.MaybeClean(time.UnixMilli(10_500)); c || err != nil {
		t.Fatalf("cleaned before retention.ms (%v)", err)
	}
	if c, err := l2.MaybeClean(time.UnixMilli(11_001)); !c || err != nil || l2.StartOffset() != 20 {
		t.Fatalf("time retention: %v %v start %d", c, err, l2.StartOffset())
	}
}

// TestCrashAfterCleanKeepsLogStart: retention deletes only whole segments,
// so after MaybeClean the log start lies inside the first segment left. A
// power loss, at any file system operation of the clean or after it, must
// not move the log start below the earliest snapshot: on reopen the log
// starts at 0 or exactly at a snapshot (the pre-clean start, or the new
// one), and reads below the start are refused.
// With BackgroundDelete the segments are renamed to *.deleted in the clean
// and unlinked on the discarder's goroutine.
func TestCrashAfterCleanKeepsLogStart(t *testing.T) {
	for _, bg := range []bool{false, true} {
		t.Run(fmt.Sprintf("BackgroundDelete=%v", bg), func(t *testing.T) { testCrashAfterClean(t, bg) })
	}
}

func testCrashAfterClean(t *testing.T, bg bool) {
	mfs := vfs.NewMemFS()
	opts := Options{Dir: "/log/__cluster_metadata-0", FS: mfs, SegmentMinBytes: 1024, SegmentBytes: 4096, RetentionBytes: 1, RetentionMs: -1, BackgroundDelete: bg}
	l := openTest(t, opts)
	for i := int64(0); i < 60; i++ {
		epoch := int32(1)
		if i >= 25 {
			epoch = 2
		}
		l.mustAppend(mkBatch(i, epoch, 1, 300))
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	l.SetHighWatermark(60)
	old, snap := raft.OffsetAndEpoch{Offset: 20, Epoch: 1}, raft.OffsetAndEpoch{Offset: 30, Epoch: 2}
	writeSnapshot(t, l, old, snapshotBytes(old.Epoch, 1000, 10))
	writeSnapshot(t, l, snap, snapshotBytes(snap.Epoch, 2000, 10))
	seg := l.segmentFor(snap.Offset)
	if seg.base >= snap.Offset || seg.base <= old.Offset {
		t.Fatalf("test setup: snapshot %d must lie inside a segment starting above %d, segment base %d", snap.Offset, old.Offset, seg.base)
	}

	var (
		mu      sync.Mutex // the discarder's unlinks are file system operations too
		crashes []*vfs.MemFS
	)
	mfs.SetAfterOp(func() {
		c := mfs.CrashClone(nil)
		mu.Lock()
		crashes = append(crashes, c)
		mu.Unlock()
	})
	if cleaned, err := l.MaybeClean(time.Unix(0, 0)); err != nil || !cleaned {
		t.Fatalf("clean: %v %v", cleaned, err)
	}
	if l.StartOffset() != snap.Offset || l.SegmentBases()[0] != seg.base {
		t.Fatalf("after clean: start %d, segments %v", l.StartOffset(), l.SegmentBases())
	}
	mu.Lock()
	n := len(crashes)
	mu.Unlock()
	if n == 0 {
		t.Fatal("clean did no file system operation")
	}
	type answer struct {
		raft.OffsetAndEpoch
		ok bool
	}
	var wantEpochs []answer
	for ep := int32(0); ep <= 3; ep++ {
		oe, ok := l.EndOffsetForEpoch(ep)
		wantEpochs = append(wantEpochs, answer{oe, ok})
	}
	if !wantEpochs[2].ok || wantEpochs[2].Offset != 60 {
		t.Fatalf("end offset for epoch 2: %v", wantEpochs[2])
	}
	l.Close() // waits for the discarder's unlinks
	mfs.SetAfterOp(nil)
	crashes = append(crashes, mfs.CrashClone(nil))

	for i, fs := range crashes {
		o := opts
		o.FS = fs
		r, err := Open(o)
		if err != nil {
			t.Fatalf("crash %d: open: %v", i, err)
		}
		start := r.StartOffset()
		e, _ := r.EarliestSnapshot()
		if start != 0 && e != old && e != snap {
			t.Fatalf("crash %d: earliest snapshot %v", i, e)
		}
		if start != 0 && start != e.Offset {
			t.Fatalf("crash %d: log start %d, earliest snapshot %v (segments %v)", i, start, e, r.SegmentBases())
		}
		if r.EndOffset().Offset != 60 {
			t.Fatalf("crash %d: log end %d", i, r.EndOffset().Offset)
		}
		if start > 0 {
			if _, err := r.Read(start-1, 100); !errors.Is(err, ErrOffsetOutOfRange) {
				t.Fatalf("crash %d: read below the log start %d: %v", i, start, err)
			}
		}
		if _, err := r.Read(start, 100); err != nil {
			t.Fatalf("crash %d: read at the log start %d: %v", i, start, err)
		}
		if i == len(crashes)-1 {
			// Crash after the clean finished: the start must be the one
			// the clean set, not the first segment's base.
			if start != snap.Offset || r.SegmentBases()[0] != seg.base {
				t.Fatalf("crash after clean: start %d (want %d), segments %v", start, snap.Offset, r.SegmentBases())
			}
			for ep := int32(0); ep <= 3; ep++ {
				got, ok := r.EndOffsetForEpoch(ep)
				if w := wantEpochs[ep]; got != w.OffsetAndEpoch || ok != w.ok {
					t.Fatalf("crash after clean: end offset for epoch %d: %v %v, before the crash %v %v", ep, got, ok, w.OffsetAndEpoch, w.ok)
				}
			}
		}
		r.Close()
	}

	// A read-only open (tools) sees the same start and changes nothing.
	last := crashes[len(crashes)-1]
	before, _ := last.List(opts.Dir)
	o := opts
	o.FS, o.ReadOnly = last, true
	ro, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	if ro.StartOffset() != snap.Offset {
		t.Fatalf("read-only open: start %d", ro.StartOffset())
	}
	ro.Close()
	if after, _ := last.List(opts.Dir); !reflect.DeepEqual(before, after) {
		t.Fatalf("read-only open changed the dir: %v -> %v", before, after)
	}
}
