package purgatory

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"
)

var t0 = time.Unix(1_700_000_000, 0)

func collect(dst *[]string) func(string) { return func(s string) { *dst = append(*dst, s) } }

func TestCompleteUpToOrderByThresholdThenInsertion(t *testing.T) {
	p := New[string]()
	p.Add(5, t0.Add(time.Second), "a5")
	p.Add(3, t0.Add(time.Second), "b3")
	p.Add(5, t0.Add(time.Second), "c5")
	p.Add(3, t0.Add(time.Second), "d3")
	p.Add(9, t0.Add(time.Second), "e9")
	p.Add(6, time.Time{}, "f6")

	var got []string
	p.CompleteUpTo(3, collect(&got)) // strict: threshold < value
	if len(got) != 0 {
		t.Fatalf("CompleteUpTo(3) completed %v, want none (threshold 3 is not < 3)", got)
	}
	p.CompleteUpTo(6, collect(&got))
	want := []string{"b3", "d3", "a5", "c5"}
	if !slices.Equal(got, want) {
		t.Fatalf("CompleteUpTo(6) = %v, want %v", got, want)
	}
	if p.Len() != 2 {
		t.Fatalf("Len = %d, want 2", p.Len())
	}
	got = nil
	p.CompleteUpTo(100, collect(&got))
	if want := []string{"f6", "e9"}; !slices.Equal(got, want) {
		t.Fatalf("CompleteUpTo(100) = %v, want %v", got, want)
	}
	if p.Len() != 0 {
		t.Fatalf("Len = %d after completing everything", p.Len())
	}
	if _, ok := p.NextDeadline(); ok {
		t.Fatal("NextDeadline reports a deadline on an empty purgatory")
	}
}

func TestExpire(t *testing.T) {
	p := New[string]()
	p.Add(1, t0.Add(3*time.Second), "x3")
	p.Add(1, t0.Add(1*time.Second), "y1")
	p.Add(2, t0.Add(1*time.Second), "z1")
	p.Add(0, time.Time{}, "never")

	if d, ok := p.NextDeadline(); !ok || !d.Equal(t0.Add(time.Second)) {
		t.Fatalf("NextDeadline = %v %v, want %v", d, ok, t0.Add(time.Second))
	}
	var got []string
	p.Expire(t0.Add(999*time.Millisecond), collect(&got))
	if len(got) != 0 {
		t.Fatalf("Expire before any deadline completed %v", got)
	}
	p.Expire(t0.Add(time.Second), collect(&got)) // deadline <= now expires
	if want := []string{"y1", "z1"}; !slices.Equal(got, want) {
		t.Fatalf("Expire(t0+1s) = %v, want %v", got, want)
	}
	if d, ok := p.NextDeadline(); !ok || !d.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("NextDeadline = %v %v, want t0+3s", d, ok)
	}
	got = nil
	p.Expire(t0.Add(time.Hour), collect(&got))
	if want := []string{"x3"}; !slices.Equal(got, want) {
		t.Fatalf("Expire(t0+1h) = %v, want %v", got, want)
	}
	if _, ok := p.NextDeadline(); ok {
		t.Fatal("NextDeadline with only a deadline-less op left")
	}
	if p.Len() != 1 {
		t.Fatalf("Len = %d, want 1 (the op without deadline)", p.Len())
	}
	// Expired ops are gone from the threshold index too.
	got = nil
	p.CompleteUpTo(100, collect(&got))
	if want := []string{"never"}; !slices.Equal(got, want) {
		t.Fatalf("CompleteUpTo after expiry = %v, want %v", got, want)
	}
}

func TestCompleteAll(t *testing.T) {
	p := New[int]()
	rng := rand.New(rand.NewPCG(1, 2))
	type op struct {
		th  int64
		seq int
	}
	var ops []op
	for i := range 200 {
		th := int64(rng.IntN(20))
		ops = append(ops, op{th, i})
		p.Add(th, t0.Add(time.Duration(rng.IntN(1000))*time.Millisecond), i)
	}
	var got []int
	p.CompleteAll(func(v int) { got = append(got, v) })
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].th < ops[j].th })
	if len(got) != len(ops) {
		t.Fatalf("CompleteAll gave %d ops, want %d", len(got), len(ops))
	}
	for i := range ops {
		if got[i] != ops[i].seq {
			t.Fatalf("CompleteAll position %d = op %d, want op %d", i, got[i], ops[i].seq)
		}
	}
	if p.Len() != 0 {
		t.Fatalf("Len = %d after CompleteAll", p.Len())
	}
	if _, ok := p.NextDeadline(); ok {
		t.Fatal("NextDeadline after CompleteAll")
	}
	called := false
	p.CompleteAll(func(int) { called = true })
	p.Expire(t0.Add(time.Hour), func(int) { called = true })
	if called {
		t.Fatal("callback on an empty purgatory")
	}
}

func TestNextDeadlineAfterRemovals(t *testing.T) {
	p := New[string]()
	p.Add(10, t0.Add(1*time.Second), "early-high")
	p.Add(1, t0.Add(2*time.Second), "mid-low")
	p.Add(20, t0.Add(3*time.Second), "late-high")
	var got []string
	p.CompleteUpTo(11, collect(&got)) // removes early-high and mid-low
	if want := []string{"mid-low", "early-high"}; !slices.Equal(got, want) {
		t.Fatalf("CompleteUpTo(11) = %v, want %v", got, want)
	}
	if d, ok := p.NextDeadline(); !ok || !d.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("NextDeadline after removals = %v %v, want t0+3s", d, ok)
	}
}

// Callbacks may park new ops; those are not completed by the running call.
func TestReentrantAdd(t *testing.T) {
	p := New[int]()
	p.Add(1, t0.Add(time.Second), 1)
	var got []int
	p.CompleteUpTo(10, func(v int) {
		got = append(got, v)
		if v == 1 {
			p.Add(2, t0.Add(time.Second), 2)
		}
	})
	if !slices.Equal(got, []int{1}) || p.Len() != 1 {
		t.Fatalf("got %v len %d, want [1] and one parked op", got, p.Len())
	}
	p.Expire(t0.Add(time.Second), func(v int) {
		got = append(got, v)
		p.Add(3, t0.Add(time.Second), 3) // same deadline, added during expiry
	})
	if !slices.Equal(got, []int{1, 2}) || p.Len() != 1 {
		t.Fatalf("got %v len %d, want [1 2] and one parked op", got, p.Len())
	}
}

// A random mix of operations against a trivially correct model.
type modelOp struct {
	th       int64
	deadline time.Time
	seq      int
}

func TestRandomAgainstModel(t *testing.T) {
	type op = modelOp
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 7))
		p := New[int]()
		var model []op
		now := t0
		seq := 0
		for step := range 2000 {
			switch r := rng.IntN(10); {
			case r < 5:
				var d time.Time
				if rng.IntN(5) > 0 {
					d = now.Add(time.Duration(rng.IntN(100)) * time.Millisecond)
				}
				th := int64(rng.IntN(50))
				p.Add(th, d, seq)
				model = append(model, op{th, d, seq})
				seq++
			case r < 7:
				v := int64(rng.IntN(50))
				var want []op
				var keep []op
				for _, o := range model {
					if o.th < v {
						want = append(want, o)
					} else {
						keep = append(keep, o)
					}
				}
				sort.SliceStable(want, func(i, j int) bool { return want[i].th < want[j].th })
				model = keep
				var got []int
				p.CompleteUpTo(v, func(x int) { got = append(got, x) })
				check(t, seed, step, "CompleteUpTo", got, want)
			case r < 9:
				now = now.Add(time.Duration(rng.IntN(30)) * time.Millisecond)
				var want, keep []op
				for _, o := range model {
					if !o.deadline.IsZero() && !o.deadline.After(now) {
						want = append(want, o)
					} else {
						keep = append(keep, o)
					}
				}
				sort.SliceStable(want, func(i, j int) bool { return want[i].deadline.Before(want[j].deadline) })
				model = keep
				var got []int
				p.Expire(now, func(x int) { got = append(got, x) })
				check(t, seed, step, "Expire", got, want)
			default:
				var want time.Time
				for _, o := range model {
					if !o.deadline.IsZero() && (want.IsZero() || o.deadline.Before(want)) {
						want = o.deadline
					}
				}
				got, ok := p.NextDeadline()
				if ok != !want.IsZero() || !got.Equal(want) {
					t.Fatalf("seed %d step %d: NextDeadline = %v %v, want %v", seed, step, got, ok, want)
				}
			}
			if p.Len() != len(model) {
				t.Fatalf("seed %d step %d: Len = %d, want %d", seed, step, p.Len(), len(model))
			}
		}
	}
}

func check(t *testing.T, seed uint64, step int, what string, got []int, want []modelOp) {
	t.Helper()
	ws := make([]int, 0, len(want))
	for _, o := range want {
		ws = append(ws, o.seq)
	}
	if !slices.Equal(got, ws) {
		t.Fatalf("seed %d step %d: %s = %v, want %v", seed, step, what, got, ws)
	}
}

// After a burst is completed, the purgatory keeps no reference to the values
// (they may hold response buffers) and only a bounded free list.
func TestMemoryBounded(t *testing.T) {
	p := New[*[1024]byte]()
	for i := range 10000 {
		p.Add(int64(i), t0.Add(time.Hour), new([1024]byte))
	}
	n := 0
	p.CompleteUpTo(1<<62, func(*[1024]byte) { n++ })
	if n != 10000 {
		t.Fatalf("completed %d, want 10000", n)
	}
	if len(p.free) > maxFree {
		t.Fatalf("free list holds %d entries, cap %d", len(p.free), maxFree)
	}
	for _, e := range p.free {
		if e.v != nil {
			t.Fatal("recycled entry still references its value")
		}
	}
	if cap(p.scratch) > maxFree {
		t.Fatalf("scratch kept with capacity %d", cap(p.scratch))
	}
}

func BenchmarkAddComplete(b *testing.B) {
	p := New[int]()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p.Add(int64(i), t0.Add(time.Duration(i%500)*time.Millisecond), i)
		if p.Len() >= 64 {
			p.CompleteUpTo(int64(i+1), func(int) {})
		}
	}
}

func BenchmarkAddExpire(b *testing.B) {
	p := New[int]()
	b.ReportAllocs()
	now := t0
	for i := 0; b.Loop(); i++ {
		p.Add(int64(i%100), now.Add(500*time.Millisecond), i)
		now = now.Add(time.Millisecond)
		p.Expire(now, func(int) {})
	}
}

// FuzzPurgatory drives the purgatory with an operation stream decoded from
// the input and compares every completion with a sorted-slice model.
func FuzzPurgatory(f *testing.F) {
	f.Add([]byte{0, 5, 10, 0, 3, 2, 1, 4, 2, 7, 3})
	f.Add([]byte{0, 1, 1, 0, 1, 1, 0, 1, 0, 3, 2, 200, 1, 255})
	f.Fuzz(func(t *testing.T, ops []byte) {
		p := New[int]()
		var model []modelOp
		now := t0
		seq := 0
		for i := 0; i+2 < len(ops); i += 3 {
			op, a, b := ops[i]%4, int64(ops[i+1]), ops[i+2]
			switch op {
			case 0: // add: threshold a, deadline now+b ms (0: none)
				var d time.Time
				if b > 0 {
					d = now.Add(time.Duration(b) * time.Millisecond)
				}
				p.Add(a, d, seq)
				model = append(model, modelOp{a, d, seq})
				seq++
			case 1: // complete up to a
				var want, keep []modelOp
				for _, o := range model {
					if o.th < a {
						want = append(want, o)
					} else {
						keep = append(keep, o)
					}
				}
				sort.SliceStable(want, func(i, j int) bool { return want[i].th < want[j].th })
				model = keep
				var got []int
				p.CompleteUpTo(a, func(x int) { got = append(got, x) })
				check(t, 0, i, "CompleteUpTo", got, want)
			case 2: // advance time by b ms and expire
				now = now.Add(time.Duration(b) * time.Millisecond)
				var want, keep []modelOp
				for _, o := range model {
					if !o.deadline.IsZero() && !o.deadline.After(now) {
						want = append(want, o)
					} else {
						keep = append(keep, o)
					}
				}
				sort.SliceStable(want, func(i, j int) bool { return want[i].deadline.Before(want[j].deadline) })
				model = keep
				var got []int
				p.Expire(now, func(x int) { got = append(got, x) })
				check(t, 0, i, "Expire", got, want)
			case 3:
				if b%8 == 0 { // occasionally drain everything
					want := slices.Clone(model)
					sort.SliceStable(want, func(i, j int) bool { return want[i].th < want[j].th })
					model = nil
					var got []int
					p.CompleteAll(func(x int) { got = append(got, x) })
					check(t, 0, i, "CompleteAll", got, want)
				}
			}
			if p.Len() != len(model) {
				t.Fatalf("op %d: Len = %d, want %d", i, p.Len(), len(model))
			}
			var wantNext time.Time
			for _, o := range model {
				if !o.deadline.IsZero() && (wantNext.IsZero() || o.deadline.Before(wantNext)) {
					wantNext = o.deadline
				}
			}
			if got, ok := p.NextDeadline(); ok != !wantNext.IsZero() || !got.Equal(wantNext) {
				t.Fatalf("op %d: NextDeadline = %v %v, want %v", i, got, ok, wantNext)
			}
		}
	})
}
