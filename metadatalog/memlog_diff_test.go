package metadatalog

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/raft/rafttest"
	"github.com/kraftd/kraftd/vfs"
)

// TestAgainstMemLog runs the same random operations on Log and on the raft
// package's reference in-memory log and requires the same answers: the raft
// core is tested against MemLog, so the disk log must not differ from it.
func TestAgainstMemLog(t *testing.T) {
	seeds, steps := 6, 300
	if testing.Short() {
		seeds, steps = 2, 150
	}
	for seed := 1; seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			disk := openTest(t, Options{Dir: t.TempDir(), FS: noSyncFS{vfs.OS}, SegmentMinBytes: 512, SegmentBytes: 1500})
			defer disk.Close()
			mem := rafttest.NewMemLog()
			var logs = []raft.Log{disk, mem}
			maxEpoch := int32(1)
			for step := 0; step < steps; step++ {
				what := ""
				switch op := rng.IntN(100); {
				case op < 40:
					end := mem.EndOffset()
					epoch := end.Epoch + int32(rng.IntN(2))
					if rng.IntN(10) == 0 {
						epoch = max(0, end.Epoch-1) // sometimes invalid
					}
					maxEpoch = max(maxEpoch, epoch+1)
					base := end.Offset
					if rng.IntN(15) == 0 {
						base++ // gap
					}
					b := mkBatch(base, epoch, 1+rng.IntN(3), 1+rng.IntN(300))
					what = fmt.Sprintf("append %d@%d", base, epoch)
					_, e1 := disk.Append(b)
					_, e2 := mem.Append(b)
					if (e1 == nil) != (e2 == nil) {
						t.Fatalf("step %d %s: disk err %v, memlog err %v", step, what, e1, e2)
					}
				case op < 50:
					what = "flush"
					if e1, e2 := disk.Flush(), mem.Flush(); e1 != nil || e2 != nil {
						t.Fatal(e1, e2)
					}
				case op < 60:
					f := mem.FlushedOffset()
					hw := mem.StartOffset() + rng.Int64N(f-mem.StartOffset()+1)
					what = fmt.Sprintf("hw %d", hw)
					for _, l := range logs {
						l.SetHighWatermark(hw)
					}
				case op < 72:
					s, e := mem.StartOffset(), mem.EndOffset().Offset
					off := s + rng.Int64N(e-s+2) - 1
					if latest, ok := mem.LatestSnapshot(); ok && off < latest.Offset {
						// Raft never truncates committed data, and snapshots
						// are committed; a log cut below its newest snapshot
						// restarts at the snapshot on reopen (Kafka's rule),
						// which MemLog does not model.
						continue
					}
					what = fmt.Sprintf("truncate %d", off)
					e1, e2 := disk.TruncateTo(off), mem.TruncateTo(off)
					if (e1 == nil) != (e2 == nil) {
						t.Fatalf("step %d %s: disk err %v, memlog err %v", step, what, e1, e2)
					}
				case op < 80:
					// A snapshot at a batch boundary at or below the HW.
					hw := mem.HighWatermark()
					if hw <= mem.StartOffset() {
						continue
					}
					data, err := disk.Read(hw-1, 1)
					if err != nil {
						t.Fatal(err)
					}
					h, _ := protocol.ParseBatchHeader(data)
					id := raft.OffsetAndEpoch{Offset: h.NextOffset(), Epoch: h.PartitionLeaderEpoch}
					if id.Offset > hw {
						continue
					}
					what = fmt.Sprintf("snapshot %+v", id)
					createBoth(t, logs, id)
				case op < 85:
					// Install a snapshot past the log end (follower catch-up).
					end := mem.EndOffset()
					id := raft.OffsetAndEpoch{Offset: end.Offset + 1 + rng.Int64N(20), Epoch: end.Epoch + int32(rng.IntN(2))}
					if latest, ok := mem.LatestSnapshot(); ok && latest.Offset >= id.Offset {
						// Two snapshots at one offset: Kafka (and Log) drop
						// the lower epoch on install, MemLog keeps it.
						continue
					}
					maxEpoch = max(maxEpoch, id.Epoch+1)
					what = fmt.Sprintf("install %+v", id)
					createBoth(t, logs, id)
					e1, e2 := disk.TruncateToSnapshot(id), mem.TruncateToSnapshot(id)
					if e1 != nil || e2 != nil {
						t.Fatalf("step %d %s: %v / %v", step, what, e1, e2)
					}
				case op < 92:
					what = "reopen"
					hw := disk.HighWatermark()
					disk.reopen()
					disk.SetHighWatermark(hw)
					logs[0] = disk
					mem.Flush() // reopen keeps everything written (page cache)
				default:
					continue
				}
				compare(t, step, what, disk, mem, maxEpoch, rng)
			}
		})
	}
}

func createBoth(t *testing.T, logs []raft.Log, id raft.OffsetAndEpoch) {
	t.Helper()
	content := snapshotBytes(id.Epoch, 1, 10)
	for _, l := range logs {
		if _, ok := l.LatestSnapshot(); ok {
			found := false
			for _, s := range []func() (raft.OffsetAndEpoch, bool){l.LatestSnapshot, l.EarliestSnapshot} {
				if got, _ := s(); got == id {
					found = true
				}
			}
			if found {
				return
			}
		}
		w, err := l.CreateSnapshot(id)
		if err != nil {
			return // both refuse an existing id
		}
		w.Write(content)
		if err := w.Freeze(); err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
}

func compare(t *testing.T, step int, what string, disk *testLog, mem *rafttest.MemLog, maxEpoch int32, rng *rand.Rand) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("step %d after %s: %s", step, what, fmt.Sprintf(format, args...))
	}
	if a, b := disk.StartOffset(), mem.StartOffset(); a != b {
		fail("start offset %d vs memlog %d", a, b)
	}
	if a, b := disk.EndOffset(), mem.EndOffset(); a != b {
		fail("end offset %+v vs memlog %+v", a, b)
	}
	if a, b := disk.FlushedOffset(), mem.FlushedOffset(); a != b {
		fail("flushed offset %d vs memlog %d", a, b)
	}
	a1, ok1 := disk.LatestSnapshot()
	b1, ok2 := mem.LatestSnapshot()
	if a1 != b1 || ok1 != ok2 {
		fail("latest snapshot %+v %v vs memlog %+v %v", a1, ok1, b1, ok2)
	}
	a1, ok1 = disk.EarliestSnapshot()
	b1, ok2 = mem.EarliestSnapshot()
	if a1 != b1 || ok1 != ok2 {
		fail("earliest snapshot %+v %v vs memlog %+v %v", a1, ok1, b1, ok2)
	}
	for e := int32(-1); e <= maxEpoch+1; e++ {
		a, okA := disk.EndOffsetForEpoch(e)
		b, okB := mem.EndOffsetForEpoch(e)
		if okA != okB || (okA && a != b) {
			fail("EndOffsetForEpoch(%d) = %+v %v vs memlog %+v %v", e, a, okA, b, okB)
		}
	}
	s, e := mem.StartOffset(), mem.EndOffset().Offset
	for i := 0; i < 3 && e > s; i++ {
		off := s + rng.Int64N(e-s)
		a, errA := disk.Read(off, 1)
		b, errB := mem.Read(off, 1)
		if errA != nil || errB != nil {
			fail("read %d: %v / %v", off, errA, errB)
		}
		ha, _ := protocol.ParseBatchHeader(a)
		if !bytes.Equal(a[:ha.Size()], b[:ha.Size()]) {
			fail("read %d: different first batch", off)
		}
	}
}
