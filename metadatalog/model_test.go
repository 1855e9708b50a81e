package metadatalog

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/vfs"
)

type modelBatch struct {
	data       []byte
	base, next int64
	epoch      int32
}

// TestModel runs random append / flush / truncate / reopen / crash sequences
// against an in-memory model. A crash drops an arbitrary part of what was
// not flushed (cutting the last segment anywhere at or after the durable
// point, sometimes adding junk, as a torn write would); after it the log must
// be a prefix of the model that keeps every flushed batch.
func TestModel(t *testing.T) {
	seeds, steps := 5, 250
	if testing.Short() {
		seeds, steps = 2, 120
	}
	for seed := 1; seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runModel(t, uint64(seed), steps) })
	}
}

func runModel(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, 0))
	dir := t.TempDir()
	opts := Options{Dir: dir, SegmentMinBytes: 512, SegmentBytes: 2048, FS: noSyncFS{vfs.OS}}
	l := openTest(t, opts)
	defer func() { l.Close() }()
	var model []modelBatch
	epoch := int32(1)
	hw := int64(0)
	end := func() int64 {
		if len(model) == 0 {
			return 0
		}
		return model[len(model)-1].next
	}
	check := func(step int, what string) {
		t.Helper()
		var want []byte
		for _, b := range model {
			want = append(want, b.data...)
		}
		if got := l.all(); !bytes.Equal(got, want) {
			t.Fatalf("seed %d step %d (%s): log content differs from the model (%d vs %d bytes)", seed, step, what, len(got), len(want))
		}
		if l.EndOffset().Offset != end() {
			t.Fatalf("seed %d step %d (%s): end %d, model %d", seed, step, what, l.EndOffset().Offset, end())
		}
		if f := l.FlushedOffset(); f < l.StartOffset() || f > end() {
			t.Fatalf("seed %d step %d: flushed offset %d outside [%d, %d]", seed, step, f, l.StartOffset(), end())
		}
	}
	for step := 0; step < steps; step++ {
		op := rng.IntN(100)
		switch {
		case op < 45: // append 1-3 batches in one call
			var buf []byte
			n := 1 + rng.IntN(3)
			if rng.IntN(8) == 0 {
				epoch++
			}
			off := end()
			for i := 0; i < n; i++ {
				recs := 1 + rng.IntN(4)
				b := mkBatch(off, epoch, recs, 1+rng.IntN(400))
				model = append(model, modelBatch{b, off, off + int64(recs), epoch})
				buf = append(buf, b...)
				off += int64(recs)
			}
			if _, err := l.Append(buf); err != nil {
				t.Fatalf("seed %d step %d: append: %v", seed, step, err)
			}
		case op < 60:
			if err := l.Flush(); err != nil {
				t.Fatal(err)
			}
			if l.FlushedOffset() != end() {
				t.Fatalf("flushed %d after flush, end %d", l.FlushedOffset(), end())
			}
		case op < 68: // advance the HW within the durable prefix
			f := l.FlushedOffset()
			if f > hw {
				hw += rng.Int64N(f - hw + 1)
				l.SetHighWatermark(hw)
			}
		case op < 78: // truncate to a batch boundary
			if len(model) == 0 {
				continue
			}
			i := rng.IntN(len(model))
			target := model[i].base
			err := l.TruncateTo(target)
			if target < hw {
				if err == nil {
					t.Fatalf("seed %d step %d: truncate to %d below HW %d accepted", seed, step, target, hw)
				}
				continue
			}
			if err != nil {
				t.Fatalf("seed %d step %d: truncate to %d: %v", seed, step, target, err)
			}
			model = model[:i]
			if len(model) > 0 {
				epoch = model[len(model)-1].epoch
			}
		case op < 88: // clean close and reopen: everything survives
			l.reopen()
			l.SetHighWatermark(hw)
		default: // crash
			flushed := l.FlushedOffset()
			act := l.active()
			var durablePos int64
			for _, b := range model {
				if b.base >= act.base && b.next <= flushed {
					durablePos += int64(len(b.data))
				}
			}
			size := act.size
			path := act.path
			l.Close()
			cut := durablePos + rng.Int64N(size-durablePos+1)
			if err := os.Truncate(path, cut); err != nil {
				t.Fatal(err)
			}
			if rng.IntN(3) == 0 {
				f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				junk := make([]byte, rng.IntN(200))
				for i := range junk {
					junk[i] = byte(rng.Uint32())
				}
				f.Write(junk)
				f.Close()
			}
			n := openTest(t, opts)
			*l = *n
			l.SetHighWatermark(hw)
			// Recovered = a prefix of the model holding every flushed batch.
			got := l.all()
			keep := 0
			for pos := 0; keep < len(model) && pos < len(got); keep++ {
				b := model[keep].data
				if !bytes.Equal(got[pos:min(pos+len(b), len(got))], b) {
					t.Fatalf("seed %d step %d: recovered log is not a prefix of the model at batch %d", seed, step, keep)
				}
				pos += len(b)
			}
			model = model[:keep]
			if end() < flushed {
				t.Fatalf("seed %d step %d: crash lost flushed data: end %d < flushed %d", seed, step, end(), flushed)
			}
			if len(model) > 0 {
				epoch = max(epoch, model[len(model)-1].epoch)
			}
		}
		// Reading everything back is O(log size): do it after the ops
		// that rebuild state, and now and then.
		if op >= 68 || step%10 == 0 {
			check(step, "after op")
		}
	}
	// Every batch reads back valid with its own epoch.
	for _, b := range model {
		data, err := l.Read(b.base, 1)
		if err != nil {
			t.Fatal(err)
		}
		h, err := protocol.CheckBatch(data)
		if err != nil || h.PartitionLeaderEpoch != b.epoch {
			t.Fatalf("batch %d: %v epoch %d", b.base, err, h.PartitionLeaderEpoch)
		}
	}
}
