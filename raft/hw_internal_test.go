package raft

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

func TestEndQuorumBackoffPositions(t *testing.T) {
	d := &Driver{cfg: Config{NodeID: 3, ElectionBackoffMax: 1000 * time.Millisecond}}
	cases := []struct {
		preferred []int32
		want      time.Duration
	}{
		{[]int32{3, 1, 2}, 0},
		{[]int32{1, 3, 2}, 250 * time.Millisecond}, // (1000 >> 2) << 0
		{[]int32{1, 2, 3}, 500 * time.Millisecond}, // (1000 >> 2) << 1
		{[]int32{1, 2}, 1000 * time.Millisecond},   // not listed
	}
	for _, tc := range cases {
		if got := d.endQuorumBackoff(tc.preferred); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.preferred, got, tc.want)
		}
	}
}

func TestElectionBackoffBounds(t *testing.T) {
	d := &Driver{cfg: Config{ElectionBackoffMax: 1000 * time.Millisecond}, rng: rand.New(rand.NewPCG(1, 2))}
	for retries := 1; retries <= 30; retries++ {
		d.retries = retries
		seen := map[time.Duration]bool{}
		for i := 0; i < 200; i++ {
			b := d.electionBackoff()
			if b < 0 || b >= d.cfg.ElectionBackoffMax {
				t.Fatalf("retries %d: backoff %v out of range", retries, b)
			}
			if retries <= 3 && b%(100*time.Millisecond) != 0 {
				t.Fatalf("retries %d: backoff %v is not Kafka's 100 ms multiple", retries, b)
			}
			if retries == 1 && b != 0 && b != 100*time.Millisecond {
				t.Fatalf("retries 1: backoff %v, want 0 or 100ms", b)
			}
			seen[b] = true
		}
		if retries == 1 && len(seen) != 2 {
			t.Fatalf("retries 1: saw %v", seen)
		}
		if retries >= 10 && len(seen) < 150 {
			t.Fatalf("retries %d: only %d distinct backoffs in 200 draws: candidates would stay in step", retries, len(seen))
		}
	}
}

func TestAccumulatorBatching(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxBatchBytes = 1024
	cfg.MaxUndrainedBatches = 2
	var a accumulator
	a.reset(10, 1)
	now := time.Unix(0, 0)
	last, err := a.add(now, [][]byte{make([]byte, 400)}, cfg, 0)
	if err != nil || last != 10 {
		t.Fatalf("add: %d %v", last, err)
	}
	if a.shouldDrain(now) || !a.shouldDrain(now.Add(cfg.AppendLinger)) {
		t.Fatalf("linger not respected")
	}
	// Does not fit with the first: closes the batch, drainable at once.
	if last, err = a.add(now, [][]byte{make([]byte, 400), make([]byte, 100)}, cfg, 0); err != nil || last != 12 {
		t.Fatalf("add 2: %d %v", last, err)
	}
	if !a.shouldDrain(now) {
		t.Fatalf("a full batch must drain at once")
	}
	if _, err := a.add(now, [][]byte{make([]byte, 2000)}, cfg, 0); err == nil {
		t.Fatalf("oversized append accepted")
	}
	bs := a.drain()
	if len(bs) != 2 || bs[0].base != 10 || len(bs[0].records) != 1 || bs[1].base != 11 || len(bs[1].records) != 2 {
		t.Fatalf("drained %+v", bs)
	}
	if !a.empty() {
		t.Fatalf("not empty after drain")
	}
}

// A batch that reaches AppendFlushBytes drains before its linger ends; a
// smaller one waits for the linger. The backlog bound counts what the log
// holds uncommitted and what waits in the accumulator, and always lets an
// append into an empty backlog through.
func TestAccumulatorFlushBytesAndBacklog(t *testing.T) {
	cfg := DefaultConfig()
	cfg.AppendFlushBytes = 1000
	cfg.MaxUncommittedBytes = 3000
	var a accumulator
	a.reset(0, 1)
	now := time.Unix(0, 0)
	if _, err := a.add(now, [][]byte{make([]byte, 500)}, cfg, 0); err != nil {
		t.Fatal(err)
	}
	if a.shouldDrain(now) {
		t.Fatalf("a batch below the flush size drained before its linger")
	}
	if _, err := a.add(now, [][]byte{make([]byte, 500)}, cfg, 0); err != nil {
		t.Fatal(err)
	}
	if !a.shouldDrain(now) {
		t.Fatalf("a batch of %d bytes (flush size %d) waits for the linger", a.bytes(), cfg.AppendFlushBytes)
	}
	if d, ok := a.drainDeadline(); !ok || !d.Before(now) {
		t.Fatalf("drain deadline %v %v: want at once", d, ok)
	}
	held := a.bytes()
	// 2000 bytes uncommitted in the log plus what waits here: the next
	// record does not fit under 3000.
	if _, err := a.add(now, [][]byte{make([]byte, 10)}, cfg, 2000); !errors.Is(err, ErrBufferFull) {
		t.Fatalf("append over the backlog bound: %v, want ErrBufferFull", err)
	}
	if a.bytes() != held {
		t.Fatalf("a refused append changed the accumulator: %d bytes, had %d", a.bytes(), held)
	}
	if _, err := a.add(now, [][]byte{make([]byte, 10)}, cfg, 1000); err != nil {
		t.Fatalf("append under the bound refused: %v", err)
	}
	a.drain()
	// An empty backlog takes any batch that fits MaxBatchBytes, however
	// large against the bound.
	if _, err := a.add(now, [][]byte{make([]byte, 5000)}, cfg, 0); err != nil {
		t.Fatalf("append into an empty backlog refused: %v", err)
	}
	// 0 turns both off: Kafka's linger-only batching and no bound.
	cfg.AppendFlushBytes, cfg.MaxUncommittedBytes = 0, 0
	a.drain()
	if _, err := a.add(now, [][]byte{make([]byte, 5000)}, cfg, 1<<30); err != nil {
		t.Fatalf("unbounded backlog refused: %v", err)
	}
	if a.shouldDrain(now) {
		t.Fatalf("flush size 0 drained before the linger")
	}
}
