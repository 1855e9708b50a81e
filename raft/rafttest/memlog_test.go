package rafttest

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

// batch builds a data batch of n records at base with the given epoch.
func batch(base int64, epoch int32, n int) []byte {
	b := protocol.Batch{BaseOffset: base, PartitionLeaderEpoch: epoch, BaseTimestamp: 1, MaxTimestamp: 1}
	for i := range n {
		b.Records = append(b.Records, protocol.Record{OffsetDelta: int32(i), Value: fmt.Appendf(nil, "v%d", base+int64(i))})
	}
	return protocol.AppendBatch(nil, b)
}

func mustAppend(t *testing.T, l *MemLog, batches ...[]byte) int64 {
	t.Helper()
	last, err := l.Append(bytes.Join(batches, nil))
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return last
}

func TestMemLogAppendRead(t *testing.T) {
	l := NewMemLog()
	if got := l.EndOffset(); got != (raft.OffsetAndEpoch{}) {
		t.Fatalf("empty EndOffset = %v", got)
	}
	b1, b2, b3 := batch(0, 1, 3), batch(3, 1, 2), batch(5, 2, 4)
	if last := mustAppend(t, l, b1, b2); last != 4 {
		t.Fatalf("last offset = %d, want 4", last)
	}
	if last := mustAppend(t, l, b3); last != 8 {
		t.Fatalf("last offset = %d, want 8", last)
	}
	if got := l.EndOffset(); got != (raft.OffsetAndEpoch{Offset: 9, Epoch: 2}) {
		t.Fatalf("EndOffset = %v, want 9/2", got)
	}
	// From the middle of a batch: starts with the whole batch holding it.
	got, err := l.Read(4, 1<<20)
	if err != nil || !bytes.Equal(got, append(bytes.Clone(b2), b3...)) {
		t.Fatalf("Read(4) = %d bytes, %v; want b2+b3", len(got), err)
	}
	// maxBytes smaller than one batch still returns one whole batch.
	got, err = l.Read(0, 1)
	if err != nil || !bytes.Equal(got, b1) {
		t.Fatalf("Read(0, 1) = %d bytes, %v; want b1", len(got), err)
	}
	// maxBytes stops before a batch that would not fit.
	got, err = l.Read(0, len(b1)+len(b2)+len(b3)-1)
	if err != nil || !bytes.Equal(got, append(bytes.Clone(b1), b2...)) {
		t.Fatalf("Read(0, all-1) = %d bytes, %v; want b1+b2", len(got), err)
	}
	if got, err := l.Read(9, 100); err != nil || len(got) != 0 {
		t.Fatalf("Read(end) = %d bytes, %v; want empty", len(got), err)
	}
	if _, err := l.Read(10, 100); err == nil {
		t.Fatal("Read past the end succeeded")
	}
	if _, err := l.Read(-1, 100); err == nil {
		t.Fatal("Read below the start succeeded")
	}
	// The log copies: mutating the caller's buffer changes nothing.
	b1[len(b1)-1] ^= 0xff
	if got, _ := l.Read(0, 1); bytes.Equal(got, b1) {
		t.Fatal("log aliases the appended buffer")
	}
}

func TestMemLogAppendRejects(t *testing.T) {
	l := NewMemLog()
	mustAppend(t, l, batch(0, 3, 2))
	cases := map[string][]byte{
		"gap":          batch(5, 3, 1),
		"overlap":      batch(1, 3, 1),
		"older epoch":  batch(2, 2, 1),
		"bad crc":      func() []byte { b := batch(2, 3, 1); b[len(b)-1] ^= 1; return b }(),
		"torn":         batch(2, 3, 2)[:70],
		"empty":        nil,
		"second bad":   append(batch(2, 3, 1), batch(4, 3, 1)...),
		"second epoch": append(batch(2, 4, 1), batch(3, 3, 1)...),
	}
	for name, in := range cases {
		if _, err := l.Append(in); err == nil {
			t.Errorf("%s: append succeeded", name)
		}
		if got := l.EndOffset(); got != (raft.OffsetAndEpoch{Offset: 2, Epoch: 3}) {
			t.Fatalf("%s: EndOffset = %v after a rejected append (partial append?)", name, got)
		}
	}
	if _, err := l.Append(append(batch(2, 3, 1), batch(3, 5, 1)...)); err != nil {
		t.Fatalf("valid append: %v", err)
	}
}

func TestMemLogCrashDropsUnflushed(t *testing.T) {
	l := NewMemLog()
	mustAppend(t, l, batch(0, 1, 2), batch(2, 1, 2))
	if l.FlushedOffset() != 0 {
		t.Fatalf("FlushedOffset = %d before any flush", l.FlushedOffset())
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, batch(4, 2, 3))
	if l.FlushedOffset() != 4 {
		t.Fatalf("FlushedOffset = %d, want 4", l.FlushedOffset())
	}
	l.SetHighWatermark(3)
	l.Crash()
	if got := l.EndOffset(); got != (raft.OffsetAndEpoch{Offset: 4, Epoch: 1}) {
		t.Fatalf("EndOffset after crash = %v, want 4/1", got)
	}
	if l.HighWatermark() != 0 {
		t.Fatalf("HighWatermark after crash = %d, want 0 (in-memory only)", l.HighWatermark())
	}
	// The log continues normally.
	mustAppend(t, l, batch(4, 3, 1))
	l.Crash() // nothing flushed since: lost again
	if got := l.EndOffset().Offset; got != 4 {
		t.Fatalf("EndOffset after second crash = %d, want 4", got)
	}
}

func TestMemLogTruncate(t *testing.T) {
	l := NewMemLog()
	mustAppend(t, l, batch(0, 1, 2), batch(2, 1, 2), batch(4, 2, 2))
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	l.SetHighWatermark(3)
	if err := l.TruncateTo(2); err == nil {
		t.Fatal("TruncateTo(2) below the high watermark 3 succeeded")
	}
	// 3 is not below HW, but the batch 2-3 holding it would go: refuse.
	if err := l.TruncateTo(3); err == nil {
		t.Fatal("TruncateTo(3) removing batch 2-3 below HW 3 succeeded")
	}
	if got := l.EndOffset().Offset; got != 6 {
		t.Fatalf("EndOffset = %d after refused truncations, want 6", got)
	}
	if err := l.TruncateTo(5); err != nil { // removes batch 4-5 whole
		t.Fatal(err)
	}
	if got := l.EndOffset(); got != (raft.OffsetAndEpoch{Offset: 4, Epoch: 1}) {
		t.Fatalf("EndOffset = %v, want 4/1", got)
	}
	if l.FlushedOffset() != 4 {
		t.Fatalf("FlushedOffset = %d after truncation, want 4", l.FlushedOffset())
	}
	if err := l.TruncateTo(100); err != nil { // past the end: no-op
		t.Fatal(err)
	}
	if got := l.EndOffset().Offset; got != 4 {
		t.Fatalf("EndOffset = %d after no-op truncation", got)
	}
	// Epochs may restart at a lower value after truncation removed them.
	mustAppend(t, l, batch(4, 1, 1))
}

func TestMemLogEndOffsetForEpoch(t *testing.T) {
	l := NewMemLog()
	if _, ok := l.EndOffsetForEpoch(5); ok {
		t.Fatal("empty log knows an epoch")
	}
	// epochs: 2 at [0,3), 4 at [3,7), 7 at [7,9)
	mustAppend(t, l, batch(0, 2, 3), batch(3, 4, 2), batch(5, 4, 2), batch(7, 7, 2))
	cases := []struct {
		epoch int32
		want  raft.OffsetAndEpoch
		ok    bool
	}{
		{1, raft.OffsetAndEpoch{}, false},
		{2, raft.OffsetAndEpoch{Offset: 3, Epoch: 2}, true},
		{3, raft.OffsetAndEpoch{Offset: 3, Epoch: 2}, true},
		{4, raft.OffsetAndEpoch{Offset: 7, Epoch: 4}, true},
		{6, raft.OffsetAndEpoch{Offset: 7, Epoch: 4}, true},
		{7, raft.OffsetAndEpoch{Offset: 9, Epoch: 7}, true},
		{9, raft.OffsetAndEpoch{Offset: 9, Epoch: 7}, true},
	}
	for _, c := range cases {
		got, ok := l.EndOffsetForEpoch(c.epoch)
		if got != c.want || ok != c.ok {
			t.Errorf("EndOffsetForEpoch(%d) = %v %v, want %v %v", c.epoch, got, ok, c.want, c.ok)
		}
	}
}

func writeSnapshot(t *testing.T, l *MemLog, id raft.OffsetAndEpoch, data []byte) {
	t.Helper()
	w, err := l.CreateSnapshot(id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Freeze(); err != nil {
		t.Fatal(err)
	}
}

func TestMemLogSnapshots(t *testing.T) {
	l := NewMemLog()
	mustAppend(t, l, batch(0, 1, 3), batch(3, 2, 3))
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	id := raft.OffsetAndEpoch{Offset: 3, Epoch: 1}
	w, err := l.CreateSnapshot(id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("snap")); err != nil {
		t.Fatal(err)
	}
	if _, ok := l.LatestSnapshot(); ok {
		t.Fatal("snapshot visible before Freeze")
	}
	if err := w.Freeze(); err != nil {
		t.Fatal(err)
	}
	if got, ok := l.LatestSnapshot(); !ok || got != id {
		t.Fatalf("LatestSnapshot = %v %v", got, ok)
	}
	r, err := l.OpenSnapshot(id)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, r.Size())
	if _, err := r.ReadAt(buf, 0); err != nil || string(buf) != "snap" {
		t.Fatalf("ReadAt = %q %v", buf, err)
	}
	if _, err := l.OpenSnapshot(raft.OffsetAndEpoch{Offset: 9, Epoch: 9}); !errors.Is(err, raft.ErrSnapshotNotFound) {
		t.Fatalf("OpenSnapshot(unknown) = %v, want ErrSnapshotNotFound", err)
	}

	// Retention: not before the HW reaches the snapshot.
	if l.DeleteBeforeSnapshot() {
		t.Fatal("deleted below a snapshot above the high watermark")
	}
	l.SetHighWatermark(4)
	if !l.DeleteBeforeSnapshot() {
		t.Fatal("DeleteBeforeSnapshot did nothing")
	}
	if l.StartOffset() != 3 {
		t.Fatalf("StartOffset = %d, want 3", l.StartOffset())
	}
	if _, err := l.Read(2, 100); err == nil {
		t.Fatal("read below the log start succeeded")
	}
	// Epoch 1 now only survives as the snapshot's epoch.
	if got, ok := l.EndOffsetForEpoch(1); !ok || got != id {
		t.Fatalf("EndOffsetForEpoch(1) after retention = %v %v, want %v", got, ok, id)
	}
	if _, ok := l.EndOffsetForEpoch(0); ok {
		t.Fatal("EndOffsetForEpoch(0) known after retention")
	}

	// A partial snapshot writer is lost on crash; frozen ones survive.
	w2, err := l.CreateSnapshot(raft.OffsetAndEpoch{Offset: 6, Epoch: 2})
	if err != nil {
		t.Fatal(err)
	}
	l.Crash()
	if _, err := w2.Write([]byte("x")); err == nil {
		t.Fatal("write to a snapshot writer after crash succeeded")
	}
	if err := w2.Freeze(); err == nil {
		t.Fatal("freeze after crash succeeded")
	}
	if got, _ := l.LatestSnapshot(); got != id {
		t.Fatalf("LatestSnapshot after crash = %v, want %v", got, id)
	}

	// Follower path: a downloaded snapshot past the log end replaces the log.
	far := raft.OffsetAndEpoch{Offset: 50, Epoch: 5}
	writeSnapshot(t, l, far, []byte("far"))
	if err := l.TruncateToSnapshot(raft.OffsetAndEpoch{Offset: 60, Epoch: 5}); err == nil {
		t.Fatal("TruncateToSnapshot to an unknown snapshot succeeded")
	}
	if err := l.TruncateToSnapshot(far); err != nil {
		t.Fatal(err)
	}
	if got, _ := l.EarliestSnapshot(); got != far {
		t.Fatalf("EarliestSnapshot after TruncateToSnapshot = %v, want %v (older ones deleted)", got, far)
	}
	if l.StartOffset() != 50 || l.EndOffset() != far || l.FlushedOffset() != 50 {
		t.Fatalf("after TruncateToSnapshot: start %d end %v flushed %d", l.StartOffset(), l.EndOffset(), l.FlushedOffset())
	}
	mustAppend(t, l, batch(50, 6, 1))
	if got, ok := l.EndOffsetForEpoch(5); !ok || got != far {
		t.Fatalf("EndOffsetForEpoch(5) = %v %v, want %v", got, ok, far)
	}
	if got, ok := l.EndOffsetForEpoch(6); !ok || got != (raft.OffsetAndEpoch{Offset: 51, Epoch: 6}) {
		t.Fatalf("EndOffsetForEpoch(6) = %v %v", got, ok)
	}
}

func TestMemStateStore(t *testing.T) {
	s := NewMemStateStore()
	if _, ok, err := s.Read(); ok || err != nil {
		t.Fatalf("fresh store Read = %v %v", ok, err)
	}
	st := raft.ElectionState{Epoch: 3, LeaderID: -1, VotedID: 2, Voters: []int32{1, 2, 3}}
	if err := s.Write(st); err != nil {
		t.Fatal(err)
	}
	st.Voters[0] = 99 // the store keeps its own copy
	got, ok, err := s.Read()
	if err != nil || !ok || got.Epoch != 3 || got.VotedID != 2 || got.Voters[0] != 1 {
		t.Fatalf("Read = %+v %v %v", got, ok, err)
	}
	s.FailWrites = ErrInjected
	if err := s.Write(raft.ElectionState{Epoch: 4}); !errors.Is(err, ErrInjected) {
		t.Fatalf("Write with failure = %v", err)
	}
	if got, _, _ := s.Read(); got.Epoch != 3 {
		t.Fatalf("failed write changed the state to epoch %d", got.Epoch)
	}
}

func TestFailingLog(t *testing.T) {
	m := NewMemLog()
	f := NewFailingLog(m)
	f.FailFlushAfter = 1
	if _, err := f.Append(batch(0, 1, 1)); err != nil {
		t.Fatal(err)
	}
	if err := f.Flush(); err != nil {
		t.Fatalf("first flush: %v", err)
	}
	if _, err := f.Append(batch(1, 1, 1)); err != nil {
		t.Fatal(err)
	}
	if err := f.Flush(); !errors.Is(err, ErrInjected) {
		t.Fatalf("second flush = %v, want injected failure", err)
	}
	if m.FlushedOffset() != 1 {
		t.Fatalf("failed flush moved FlushedOffset to %d", m.FlushedOffset())
	}
	f.FailAppend = true
	if _, err := f.Append(batch(2, 1, 1)); !errors.Is(err, ErrInjected) {
		t.Fatalf("append = %v, want injected failure", err)
	}
	if m.EndOffset().Offset != 2 || f.AppendFailures != 1 || f.FlushFailures != 1 {
		t.Fatalf("end %d, failures %d/%d", m.EndOffset().Offset, f.AppendFailures, f.FlushFailures)
	}
}

func TestMemLogLyingFsync(t *testing.T) {
	l := NewMemLog()
	mustAppend(t, l, batch(0, 1, 2))
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	l.LyingFsync = true
	mustAppend(t, l, batch(2, 1, 2))
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if l.FlushedOffset() != 4 {
		t.Fatalf("FlushedOffset = %d, a lying disk claims 4", l.FlushedOffset())
	}
	l.Crash()
	if got := l.EndOffset().Offset; got != 2 {
		t.Fatalf("EndOffset after crash = %d, want 2 (the lie is exposed)", got)
	}
}

func TestMemLogTakeLowestEnd(t *testing.T) {
	l := NewMemLog()
	mustAppend(t, l, batch(0, 1, 2), batch(2, 1, 2), batch(4, 1, 2))
	if _, ok := l.TakeLowestEnd(); ok {
		t.Fatal("lowest end reported without any truncation")
	}
	if err := l.TruncateTo(4); err != nil {
		t.Fatal(err)
	}
	if err := l.TruncateTo(2); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, batch(2, 2, 5))
	if got, ok := l.TakeLowestEnd(); !ok || got != 2 {
		t.Fatalf("TakeLowestEnd = %d %v, want 2 (the lowest end, not the current one)", got, ok)
	}
	if _, ok := l.TakeLowestEnd(); ok {
		t.Fatal("TakeLowestEnd did not reset")
	}
	l.Crash() // nothing flushed: everything goes
	if got, ok := l.TakeLowestEnd(); !ok || got != 0 {
		t.Fatalf("TakeLowestEnd after crash = %d %v, want 0", got, ok)
	}
	if len(l.Batches()) != 0 {
		t.Fatalf("%d batches left after a crash with nothing flushed", len(l.Batches()))
	}
}
