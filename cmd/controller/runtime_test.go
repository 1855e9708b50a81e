package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// The GC target and soft memory limit default to kraftd's values and leave
// the ones GOGC and GOMEMLIMIT set alone.
func TestRuntimeDefaults(t *testing.T) {
	gc, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(gc); debug.SetMemoryLimit(limit) })

	m := runtimeDefaults(func(string) (string, bool) { return "", false })
	m.stop()
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Errorf("GC percent %d without GOGC, want %d", got, defaultGCPercent)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != defaultMemoryLimit {
		t.Errorf("memory limit %d without GOMEMLIMIT, want %d", got, defaultMemoryLimit)
	}

	if m := runtimeDefaults(func(string) (string, bool) { return "set", true }); m != nil {
		m.stop()
		t.Error("a memory limiter with GOMEMLIMIT set")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d with GOGC set, want it untouched (100)", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("memory limit %d with GOMEMLIMIT set, want it untouched", got)
	}
}

// The limit is the floor until the live heap and the runtime's other memory need more,
// then twice the live heap above the other memory.
func TestMemoryLimitFor(t *testing.T) {
	const floor = 32 << 20
	for _, c := range []struct {
		live, other uint64
		want        int64
	}{
		{0, 0, floor},
		{4 << 20, 8 << 20, floor},  // the raft workload's node
		{12 << 20, 8 << 20, floor}, // exactly the floor
		{15 << 20, 10 << 20, 40 << 20},
		{300 << 20, 20 << 20, 620 << 20}, // a million partitions' image
		{1 << 62, 0, floor},              // beyond int64: the floor rather than a wrapped limit
	} {
		if got := memoryLimitFor(floor, c.live, c.other); got != c.want {
			t.Errorf("memoryLimitFor(%d, %d, %d) = %d, want %d", floor, c.live, c.other, got, c.want)
		}
	}
}

// The limiter raises the limit after a collection that found a live heap the floor has no
// room for, and lowers it back to the floor once that heap is garbage.
func TestMemoryLimiterFollowsLiveHeap(t *testing.T) {
	const floor = 32 << 20
	prev := debug.SetMemoryLimit(math.MaxInt64)
	m := startMemoryLimiter(floor)
	t.Cleanup(func() { m.stop(); debug.SetMemoryLimit(prev) })
	live := make([]byte, 64<<20)
	waitLimit(t, func(l int64) bool { return l >= 2*int64(len(live)) }, "at least twice the 64 MiB live heap")
	runtime.KeepAlive(live)
	live = nil
	waitLimit(t, func(l int64) bool { return l == floor }, "back at the floor")
}

// waitLimit collects until the memory limit satisfies ok (a hang bound of a minute).
func waitLimit(t *testing.T, ok func(int64) bool, want string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		runtime.GC()
		l := debug.SetMemoryLimit(-1)
		if ok(l) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("memory limit %d, want %s", l, want)
		}
	}
}
