//go:build faults

package faults

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// TestNemesisLong (rows 1, 2, 3, 5, 9, 10, 11, 13, 16, 18, 32): seeded fault
// rounds on three voters for FAULT_MINUTES (default 1), the history checked
// after every FAULT_CHECK_EVERY rounds (default 1) and at the end. The seed
// is FAULT_SEED or the clock; it is printed with the replay command (the
// same schedule of faults; real processes are not deterministic).
func TestNemesisLong(t *testing.T) {
	minutes := envFloat(t, "FAULT_MINUTES", 1)
	seed := int64(envFloat(t, "FAULT_SEED", float64(time.Now().UnixNano()%1_000_000_000)))
	every := int(envFloat(t, "FAULT_CHECK_EVERY", 1))
	t.Logf("seed %d; replay: make faults FAULT_SEED=%d FAULT_MINUTES=%g", seed, seed, minutes)
	c, _ := start(t, Options{Throughput: 200})
	rep := c.RunNemesis(seed, time.Duration(minutes*float64(time.Minute)), max(every, 1))
	t.Logf("report: %v", rep)
	if t.Failed() {
		t.Logf("replay: make faults FAULT_SEED=%d FAULT_MINUTES=%g", seed, minutes)
	}
}

func envFloat(t *testing.T, key string, def float64) float64 {
	v := os.Getenv(key)
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", key, v, err)
	}
	return f
}
