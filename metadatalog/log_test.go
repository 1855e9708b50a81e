package metadatalog

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/vfs"
	"github.com/kraftd/kraftd/vfs/faultfs"
)

// Golden batches of docs/design/storage.md 6.1 and 6.2: a LeaderChange control
// batch at offset 0 and a data batch at offset 1, epoch 1.
const goldenHex = `
00 00 00 00 00 00 00 00 00 00 00 5e 00 00 00 01
02 17 35 ab 2b 00 20 00 00 00 00 00 00 01 8b cf
e5 68 00 00 00 01 8b cf e5 68 00 ff ff ff ff ff
ff ff ff ff ff ff ff ff ff 00 00 00 01 58 00 00
00 08 00 00 00 02 44 00 00 00 00 00 01 04 00 00
00 01 00 00 00 00 02 00 00 00 00 03 00 03 00 00
00 01 00 00 00 00 02 00 00 00
00 00 00 00 00 00 00 01 00 00 00 47 00 00 00 01
02 46 27 12 21 00 00 00 00 00 01 00 00 01 8b cf
e5 68 00 00 00 01 8b cf e5 68 00 ff ff ff ff ff
ff ff ff ff ff ff ff ff ff 00 00 00 02 14 00 00
00 01 08 ab ab ab ab 00 14 00 00 02 01 08 cd cd
cd cd 00`

func goldenBatches(t *testing.T) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(goldenHex), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGoldenBatchesStoredByteExact(t *testing.T) {
	dir := t.TempDir()
	l := openTest(t, Options{Dir: dir})
	g := goldenBatches(t)
	if _, err := protocol.CheckBatch(g); err != nil {
		t.Fatalf("golden batch: %v", err)
	}
	if last := l.mustAppend(g); last != 2 {
		t.Fatalf("last offset %d", last)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	l.Close()
	data, err := os.ReadFile(filepath.Join(dir, "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, g) {
		t.Fatalf("segment bytes differ from the appended batches")
	}
	ck, _ := os.ReadFile(filepath.Join(dir, LeaderEpochCheckpointFile))
	if string(ck) != "0\n1\n1 0\n" {
		t.Fatalf("leader-epoch-checkpoint %q", ck)
	}
}

func TestAppendReadAcrossSegments(t *testing.T) {
	dir := t.TempDir()
	l := openTest(t, smallOpts(dir))
	var want []byte
	var bounds []int64 // base offsets
	off := int64(0)
	for i := 0; i < 60; i++ {
		n := 1 + i%5
		b := mkBatch(off, int32(1+i/20), n, 10+i*7%300)
		bounds = append(bounds, off)
		if last := l.mustAppend(b); last != off+int64(n)-1 {
			t.Fatalf("last offset %d, want %d", last, off+int64(n)-1)
		}
		want = append(want, b...)
		off += int64(n)
	}
	if len(segFiles(t, dir)) < 3 {
		t.Fatalf("expected segment rolls at 4096 bytes, got %d segments", len(segFiles(t, dir)))
	}
	for _, f := range segFiles(t, dir) {
		if fileSize(t, f) > 4096 {
			t.Fatalf("%s exceeds the segment size", f)
		}
	}
	check := func() {
		t.Helper()
		if got := l.all(); !bytes.Equal(got, want) {
			t.Fatal("log content differs")
		}
		if eo := l.EndOffset(); eo.Offset != off || eo.Epoch != 3 {
			t.Fatalf("end offset %+v", eo)
		}
		// Every offset reads the batch containing it first.
		for o := int64(0); o < off; o++ {
			data, err := l.Read(o, 1)
			if err != nil {
				t.Fatal(err)
			}
			h, err := protocol.CheckBatch(data)
			if err != nil || h.BaseOffset > o || h.LastOffset() < o || len(data) != h.Size() {
				t.Fatalf("Read(%d): %+v %v (len %d)", o, h, err, len(data))
			}
		}
		if data, err := l.Read(off, 100); err != nil || len(data) != 0 {
			t.Fatalf("read at end: %d bytes, %v", len(data), err)
		}
		if _, err := l.Read(off+1, 100); !errors.Is(err, ErrOffsetOutOfRange) {
			t.Fatalf("read past end: %v", err)
		}
	}
	check()
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	l.reopen()
	check()
	// The epoch cache survives reopen (rebuilt from batches).
	if oe, ok := l.EndOffsetForEpoch(1); !ok || oe != (raft.OffsetAndEpoch{Offset: bounds[20], Epoch: 1}) {
		t.Fatalf("EndOffsetForEpoch(1) = %+v %v", oe, ok)
	}
}

func TestReadMaxBytesWholeBatches(t *testing.T) {
	l := openTest(t, Options{Dir: t.TempDir()})
	b0, b1, b2 := mkBatch(0, 1, 2, 100), mkBatch(2, 1, 1, 100), mkBatch(3, 1, 3, 100)
	l.mustAppend(append(append(append([]byte(nil), b0...), b1...), b2...))
	got, err := l.Read(0, len(b0)+len(b1)+10)
	if err != nil || !bytes.Equal(got, append(append([]byte(nil), b0...), b1...)) {
		t.Fatalf("Read: %d bytes %v", len(got), err)
	}
	// Below one batch: still the whole first batch.
	got, _ = l.Read(1, 5)
	if !bytes.Equal(got, b0) {
		t.Fatalf("Read with tiny max: %d bytes", len(got))
	}
	// Sequential reads (hint path) continue correctly.
	got, _ = l.Read(3, 1<<20)
	if !bytes.Equal(got, b2) {
		t.Fatal("Read(3)")
	}
	// The returned buffer is the caller's: a later read must not change it.
	keep, _ := l.Read(0, 1<<20)
	snapshot := append([]byte(nil), keep...)
	l.mustAppend(mkBatch(6, 1, 1, 100))
	if again, err := l.Read(0, 1<<20); err != nil || len(again) <= len(keep) {
		t.Fatalf("read after an append: %d bytes (%v), before it %d", len(again), err, len(keep))
	}
	if !bytes.Equal(keep, snapshot) {
		t.Fatal("a Read result was modified by later calls")
	}
}

func TestAppendRefusesAndChangesNothing(t *testing.T) {
	dir := t.TempDir()
	l := openTest(t, Options{Dir: dir, MaxBatchBytes: 2000})
	l.mustAppend(mkBatch(0, 3, 2, 10))
	size := l.Size()
	corrupt := mkBatch(2, 3, 1, 10)
	corrupt[len(corrupt)-1] ^= 1
	truncated := mkBatch(2, 3, 1, 10)
	good := mkBatch(2, 3, 1, 10)
	// A forged header with a valid CRC: last offset delta -5, or no records
	// for two offsets (the log's own rules are protocol.ValidateBatch's).
	resealed := func(at int, v uint32) []byte {
		b := mkBatch(2, 3, 2, 10)
		binary.BigEndian.PutUint32(b[at:], v)
		binary.BigEndian.PutUint32(b[17:], protocol.CRC32C(b[21:]))
		return b
	}
	for _, tc := range []struct {
		name  string
		data  []byte
		words []string
	}{
		{"gap", mkBatch(3, 3, 1, 10), []string{"base offset 3", "expected offset 2"}},
		{"overlap", mkBatch(1, 3, 1, 10), []string{"base offset 1", "expected offset 2"}},
		{"epoch goes back", mkBatch(2, 2, 1, 10), []string{"epoch 2", "last epoch 3"}},
		{"negative epoch", mkBatch(2, -1, 1, 10), []string{"no leader epoch"}},
		{"crc", corrupt, []string{"CRC"}},
		{"short", truncated[:len(truncated)-3], []string{"short"}},
		{"too large", mkBatch(2, 3, 1, 3000), []string{"above the limit"}},
		{"second batch bad", append(append([]byte(nil), good...), mkBatch(9, 3, 1, 10)...), []string{"base offset 9", "expected offset 3"}},
		{"empty", nil, []string{"no batches"}},
		{"negative last offset delta", resealed(23, 0xfffffffb), []string{"last offset delta -5"}},
		{"no records", resealed(57, 0), []string{"holds 0 records"}},
		{"undecodable record", resealed(61, 0x7f), []string{"record 0"}},
	} {
		_, err := l.Append(tc.data)
		if !errors.Is(err, ErrInvalidAppend) || !errors.Is(err, raft.ErrInvalidBatch) {
			t.Errorf("%s: err %v, want ErrInvalidAppend and raft.ErrInvalidBatch", tc.name, err)
			continue
		}
		for _, w := range tc.words {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not mention %q", tc.name, err, w)
			}
		}
		if l.EndOffset().Offset != 2 || l.Size() != size {
			t.Fatalf("%s: log changed (end %d, size %d)", tc.name, l.EndOffset().Offset, l.Size())
		}
	}
	// Still usable after refusals.
	l.mustAppend(good)
	// AppendAsLeader stamps offsets and epoch.
	b := mkBatch(100, 0, 2, 10)
	if last, err := l.AppendAsLeader(b, 4); err != nil || last != 4 {
		t.Fatalf("AppendAsLeader: %d %v", last, err)
	}
	if eo := l.EndOffset(); eo != (raft.OffsetAndEpoch{Offset: 5, Epoch: 4}) {
		t.Fatalf("end %+v", eo)
	}
}

func TestEpochCache(t *testing.T) {
	l := openTest(t, Options{Dir: t.TempDir()})
	if _, ok := l.EndOffsetForEpoch(0); ok {
		t.Fatal("empty cache must be undefined")
	}
	// epochs: 2 at [0,3), 4 at [3,5), 5 at [5,6)
	l.mustAppend(mkBatch(0, 2, 3, 5))
	l.mustAppend(mkBatch(3, 4, 1, 5))
	l.mustAppend(mkBatch(4, 4, 1, 5))
	l.mustAppend(mkBatch(5, 5, 1, 5))
	for _, tc := range []struct {
		epoch int32
		want  raft.OffsetAndEpoch
		ok    bool
	}{
		{-1, raft.OffsetAndEpoch{}, false},
		{1, raft.OffsetAndEpoch{}, false}, // below the first epoch, no snapshot
		{2, raft.OffsetAndEpoch{Offset: 3, Epoch: 2}, true},
		{3, raft.OffsetAndEpoch{Offset: 3, Epoch: 2}, true},
		{4, raft.OffsetAndEpoch{Offset: 5, Epoch: 4}, true},
		{5, raft.OffsetAndEpoch{Offset: 6, Epoch: 5}, true},
		{6, raft.OffsetAndEpoch{Offset: 6, Epoch: 5}, true}, // above the latest: log end
	} {
		got, ok := l.EndOffsetForEpoch(tc.epoch)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("EndOffsetForEpoch(%d) = %+v %v, want %+v %v", tc.epoch, got, ok, tc.want, tc.ok)
		}
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	ck, _ := os.ReadFile(filepath.Join(l.Dir(), LeaderEpochCheckpointFile))
	if string(ck) != "0\n3\n2 0\n4 3\n5 5\n" {
		t.Fatalf("checkpoint %q", ck)
	}
	entries, err := decodeEpochCheckpoint(ck)
	if err != nil || len(entries) != 3 {
		t.Fatalf("decode: %v %v", entries, err)
	}
	if err := l.TruncateTo(4); err != nil {
		t.Fatal(err)
	}
	ck, _ = os.ReadFile(filepath.Join(l.Dir(), LeaderEpochCheckpointFile))
	if string(ck) != "0\n2\n2 0\n4 3\n" {
		t.Fatalf("checkpoint after truncation %q", ck)
	}
	if got, ok := l.EndOffsetForEpoch(4); !ok || got != (raft.OffsetAndEpoch{Offset: 4, Epoch: 4}) {
		t.Fatalf("after truncate: %+v", got)
	}
	var c epochCache
	c.assign(1, 0)
	c.assign(3, 10)
	c.assign(2, 5) // non-monotonic: 3@10 goes
	if len(c.entries) != 2 || c.entries[1] != (epochEntry{2, 5}) {
		t.Fatalf("assign non-monotonic: %+v", c.entries)
	}
	c.truncateFromStart(7)
	if len(c.entries) != 1 || c.entries[0] != (epochEntry{2, 7}) {
		t.Fatalf("truncateFromStart: %+v", c.entries)
	}
}

func TestTruncate(t *testing.T) {
	dir := t.TempDir()
	l := openTest(t, smallOpts(dir))
	off := int64(0)
	for i := 0; i < 40; i++ {
		l.mustAppend(mkBatch(off, int32(1+i/10), 2, 200))
		off += 2
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	nseg := len(segFiles(t, dir))
	l.SetHighWatermark(30)
	if err := l.TruncateTo(29); err == nil || !strings.Contains(err.Error(), "high watermark 30") {
		t.Fatalf("truncate below HW: %v", err)
	}
	if err := l.TruncateTo(33); err != nil { // inside batch [32,33]: end 32
		t.Fatal(err)
	}
	if l.EndOffset().Offset != 32 || l.FlushedOffset() != 32 {
		t.Fatalf("end %d flushed %d", l.EndOffset().Offset, l.FlushedOffset())
	}
	if err := l.TruncateTo(31); err != nil { // batch [30,31] starts at the HW: allowed
		t.Fatal(err)
	}
	if l.EndOffset().Offset != 30 {
		t.Fatalf("end %d", l.EndOffset().Offset)
	}
	l.SetHighWatermark(29)
	if err := l.TruncateTo(29); err == nil || !strings.Contains(err.Error(), "starts at 28, below the high watermark 29") {
		t.Fatalf("mid-batch cut below HW: %v", err)
	}
	if len(segFiles(t, dir)) >= nseg {
		t.Fatalf("segments after the cut were not deleted: %d", len(segFiles(t, dir)))
	}
	if err := l.TruncateTo(100); err != nil || l.EndOffset().Offset != 30 {
		t.Fatalf("truncate beyond end must be a no-op: %v", err)
	}
	l.mustAppend(mkBatch(30, 9, 3, 10))
	l.mustFlush()
	want := l.all()
	l.reopen()
	if !bytes.Equal(l.all(), want) || l.EndOffset() != (raft.OffsetAndEpoch{Offset: 33, Epoch: 9}) {
		t.Fatalf("after reopen: %+v", l.EndOffset())
	}
}

func TestFlushedOffsetAndDeferredFlush(t *testing.T) {
	ffs := faultfs.Wrap(vfs.OS)
	l := openTest(t, Options{Dir: t.TempDir(), FS: ffs})
	base := ffs.Count(faultfs.OpSync)
	for i := int64(0); i < 10; i++ {
		l.mustAppend(mkBatch(i, 1, 1, 10))
	}
	if l.FlushedOffset() != 0 || ffs.Count(faultfs.OpSync) != base {
		t.Fatalf("append must not fsync: flushed %d, syncs %d", l.FlushedOffset(), ffs.Count(faultfs.OpSync)-base)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if l.FlushedOffset() != 10 {
		t.Fatalf("flushed %d", l.FlushedOffset())
	}
	// One segment fsync plus the epoch checkpoint (file + dir) the first time.
	n := ffs.Count(faultfs.OpSync)
	l.mustAppend(mkBatch(10, 1, 1, 10))
	l.mustFlush()
	if ffs.Count(faultfs.OpSync)-n != 1 {
		t.Fatalf("a flush with no new epoch should fsync once, did %d", ffs.Count(faultfs.OpSync)-n)
	}
	n = ffs.Count(faultfs.OpSync)
	if err := l.Flush(); err != nil || ffs.Count(faultfs.OpSync) != n {
		t.Fatalf("an idle flush must not fsync: %v %d", err, ffs.Count(faultfs.OpSync)-n)
	}
}

func TestDiskFull(t *testing.T) {
	dir := t.TempDir()
	ffs := faultfs.Wrap(vfs.OS)
	l := openTest(t, Options{Dir: dir, FS: ffs})
	var flushed []byte
	for i := int64(0); i < 5; i++ {
		b := mkBatch(i, 1, 1, 100)
		l.mustAppend(b)
		flushed = append(flushed, b...)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	ffs.Inject(faultfs.DiskFull(50)) // the next batch is torn after 50 bytes
	_, err := l.Append(mkBatch(5, 1, 1, 100))
	if err == nil || !strings.Contains(err.Error(), "no space left") || !strings.Contains(err.Error(), "offset 5") {
		t.Fatalf("append on a full disk: %v", err)
	}
	if l.EndOffset().Offset != 5 || l.FlushedOffset() != 5 {
		t.Fatalf("failed append changed offsets: %+v", l.EndOffset())
	}
	if _, err := l.Append(mkBatch(5, 1, 1, 100)); err == nil || !strings.Contains(err.Error(), "failed earlier") {
		t.Fatalf("log must refuse writes after a write error: %v", err)
	}
	if err := l.Flush(); err == nil {
		t.Fatal("flush after a write error must fail")
	}
	// Still readable.
	if !bytes.Equal(l.all(), flushed) {
		t.Fatal("acknowledged data unreadable after disk full")
	}
	l.Close()
	ffs.Reset()
	l2 := openTest(t, Options{Dir: dir})
	if !bytes.Equal(l2.all(), flushed) || l2.EndOffset().Offset != 5 {
		t.Fatalf("after restart: end %d", l2.EndOffset().Offset)
	}
	l2.mustAppend(mkBatch(5, 1, 1, 100))

	// A full disk at roll time (creating the next segment's content).
	dir2 := t.TempDir()
	ffs2 := faultfs.Wrap(vfs.OS)
	l3 := openTest(t, Options{Dir: dir2, FS: ffs2, SegmentMinBytes: 1024, SegmentBytes: 1024})
	l3.mustAppend(mkBatch(0, 1, 1, 900))
	ffs2.Inject(faultfs.DiskFull(0))
	if _, err := l3.Append(mkBatch(1, 1, 1, 900)); err == nil {
		t.Fatal("append into a new segment on a full disk must fail")
	}
	l3.Close()
	l4 := openTest(t, Options{Dir: dir2, SegmentMinBytes: 1024, SegmentBytes: 1024})
	if l4.EndOffset().Offset != 1 {
		t.Fatalf("after roll failure: end %d", l4.EndOffset().Offset)
	}
}

func TestFsyncFailureIsFinal(t *testing.T) {
	ffs := faultfs.Wrap(vfs.OS)
	l := openTest(t, Options{Dir: t.TempDir(), FS: ffs})
	l.mustAppend(mkBatch(0, 1, 1, 10))
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	l.mustAppend(mkBatch(1, 1, 1, 10))
	ffs.Inject(faultfs.Fail(&os.PathError{Op: "fsync", Path: "x", Err: errors.New("input/output error")}, faultfs.OpSync))
	err := l.Flush()
	if err == nil || !strings.Contains(err.Error(), "fsync") || !strings.Contains(err.Error(), "00000000000000000000.log") {
		t.Fatalf("flush: %v", err)
	}
	if l.FlushedOffset() != 1 {
		t.Fatalf("flushed offset moved past a failed fsync: %d", l.FlushedOffset())
	}
	ffs.Reset()
	if err := l.Flush(); err == nil {
		t.Fatal("a flush after a failed fsync must not succeed (no retry)")
	}
	if _, err := l.Append(mkBatch(2, 1, 1, 10)); err == nil {
		t.Fatal("append after a failed fsync must fail")
	}
}

func TestOpenOptions(t *testing.T) {
	if _, err := Open(Options{Dir: t.TempDir(), SegmentBytes: 1 << 20}); err == nil || !strings.Contains(err.Error(), "below 8388608") {
		t.Fatalf("segment bytes below the minimum: %v", err)
	}
	dir := t.TempDir()
	l := openTest(t, Options{Dir: dir, TopicID: [16]byte{15: 1}})
	l.Close()
	pm, err := os.ReadFile(filepath.Join(dir, PartitionMetadataFile))
	if err != nil || string(pm) != "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ" {
		t.Fatalf("partition.metadata %q %v", pm, err)
	}
}

// readCountFS counts ReadAt calls on the files it opens.
type readCountFS struct {
	vfs.FS
	reads *int
}

type readCountFile struct {
	vfs.File
	reads *int
}

func (f readCountFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return readCountFile{File: file, reads: f.reads}, nil
}

func (f readCountFile) ReadAt(p []byte, off int64) (int, error) {
	*f.reads++
	return f.File.ReadAt(p, off)
}

// Readers near the log end (two followers and the listener of a leader)
// are served from the in-memory tail: no pread, the same bytes as the
// file, and truncation with re-append at other batch boundaries never
// serves a stale position or changes bytes already handed out.
func TestReadsNearTheEndFromMemory(t *testing.T) {
	reads := 0
	l := openTest(t, Options{Dir: t.TempDir(), FS: readCountFS{FS: vfs.OS, reads: &reads}})
	off := int64(0)
	for i := 0; i < 50; i++ {
		l.mustAppend(mkBatch(off, 1, 3, 300))
		off += 3
	}
	want := l.all()
	next := [3]int64{0, 0, 60} // the third reader starts mid-log
	before := reads
	for round := 0; round < 5; round++ {
		for r := range next {
			data, err := l.Read(next[r], 3000) // three batches
			if err != nil {
				t.Fatal(err)
			}
			if len(data) == 0 || len(data) > 3000 {
				t.Fatalf("read at %d: %d bytes", next[r], len(data))
			}
			for len(data) > 0 {
				h := parseMini(data)
				if h.base != next[r] || !bytes.Contains(want, data[:h.size]) {
					t.Fatalf("read at %d: batch [%d, %d) differs from the log's", next[r], h.base, h.next)
				}
				next[r], data = h.next, data[h.size:]
			}
		}
	}
	if preads := reads - before; preads != 0 {
		t.Fatalf("%d preads for reads within the in-memory tail", preads)
	}
	// Cut to 30 and append batches of another size: a position remembered
	// at offset 33 would now point inside a batch.
	old, err := l.Read(30, 900) // ends at 33
	if err != nil {
		t.Fatal(err)
	}
	kept := bytes.Clone(old)
	if err := l.TruncateTo(30); err != nil {
		t.Fatal(err)
	}
	l.mustAppend(mkBatch(30, 2, 2, 100))
	l.mustAppend(mkBatch(32, 2, 5, 10))
	got, err := l.Read(33, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if h := parseMini(got); h.base != 32 || h.next != 37 || len(got) != h.size {
		t.Fatalf("read at 33 after truncation: batch [%d, %d) of %d bytes in %d", h.base, h.next, h.size, len(got))
	}
	if !bytes.Equal(old, kept) {
		t.Fatal("bytes handed out before the truncation changed")
	}
	wantAfter := l.all()
	l.reopen()
	if got := l.all(); !bytes.Equal(got, wantAfter) {
		t.Fatal("the file differs from what was served from memory")
	}
}

// Reads across many memory chunks, and of batches larger than a chunk,
// return exactly the bytes appended (whatever the caller does with its
// buffer afterwards); a batch too large for memory costs one
// pread per Read (the tail remembers its position).
func TestReadsAcrossMemoryChunks(t *testing.T) {
	reads := 0
	l := openTest(t, Options{Dir: t.TempDir(), FS: readCountFS{FS: vfs.OS, reads: &reads}})
	off := int64(0)
	var sizes []int
	for i := 0; len(sizes) < 200; i++ {
		n := 1 + i%7
		size := 100 + (i*7919)%9000
		if i%50 == 49 {
			n, size = 2, memChunkBytes/2+100 // larger than a chunk
		}
		b := mkBatch(off, 1, n, size)
		before := reads
		in := bytes.Clone(b)
		l.mustAppend(in)
		clear(in) // Append keeps no reference to its input
		got, err := l.Read(off, len(b))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, b) {
			t.Fatalf("read back batch at %d: %d bytes, want %d", off, len(got), len(b))
		}
		preads := reads - before
		if big := len(b) > memChunkBytes; (big && preads != 1) || (!big && preads != 0) {
			t.Fatalf("batch at %d of %d bytes: %d preads", off, len(b), preads)
		}
		sizes = append(sizes, len(b))
		off += int64(n)
	}
	all := l.all()
	// Every read, at every batch start and in the middle, is a prefix of
	// the rest of the log, whole batches within maxBytes.
	pos := 0
	for _, size := range sizes {
		h := parseMini(all[pos:])
		for _, from := range []int64{h.base, h.next - 1} {
			for _, max := range []int{1, 5000, 1 << 20} {
				got, err := l.Read(from, max)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) < size || (len(got) > size && len(got) > max) || !bytes.Equal(got, all[pos:pos+len(got)]) {
					t.Fatalf("read at %d max %d: %d bytes do not match the log at byte %d", from, max, len(got), pos)
				}
			}
		}
		pos += size
	}
}
