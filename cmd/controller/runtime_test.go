package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// The GC target and soft memory limit default to kraftd's values and leave
// the ones GOGC and GOMEMLIMIT set alone.
func TestRuntimeDefaults(t *testing.T) {
	gc, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(gc); debug.SetMemoryLimit(limit) })

	runtimeDefaults(func(string) (string, bool) { return "", false })
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Errorf("GC percent %d without GOGC, want %d", got, defaultGCPercent)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != defaultMemoryLimit {
		t.Errorf("memory limit %d without GOMEMLIMIT, want %d", got, defaultMemoryLimit)
	}

	runtimeDefaults(func(string) (string, bool) { return "set", true })
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d with GOGC set, want it untouched (100)", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("memory limit %d with GOMEMLIMIT set, want it untouched", got)
	}
}
