//go:build interopbench

package interop

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// sustained reports whether a row is a sustained rate: an open loop that committed within
// 2% of its offered rate (one that falls further behind has a backlog growing without
// bound) with a p99 below bound (ms). A closed loop (unthrottled) is no offered rate, and a
// run that reported no latency window proves nothing.
func (r reportRow) sustained(bound float64) bool {
	return r.OpenLoop > 0 && !isBusy(r.System) && r.Committed >= 0.98*float64(r.OpenLoop) && !math.IsNaN(r.P99) && r.P99 < bound
}

// lingerOf is the linger a system's rows carry: etcd has none (-1).
func lingerOf(sys string, linger int) int {
	if sys == "etcd" {
		return -1
	}
	return linger
}

// find returns the quiet open-loop row of sys (a plain name: kraftd, kafka, etcd) at the
// linger and offered rate, the first run there.
func (c *reportRunner) find(sys string, linger, rate int) (reportRow, bool) {
	for _, r := range c.rows {
		if r.System == sys && r.Linger == lingerOf(sys, linger) && r.Offered == rate {
			return r, true
		}
	}
	return reportRow{}, false
}

// bounds are the highest offered rate sys sustained at the linger and the lowest one
// above it that it did not (0 for none), over every run so far.
func (c *reportRunner) bounds(sys string, linger int) (lo, hi reportRow) {
	for _, r := range c.rows {
		if r.System != sys || r.Linger != lingerOf(sys, linger) || r.Offered == 0 {
			continue
		}
		if r.sustained(c.p99Bound) && r.Offered > lo.Offered {
			lo = r
		}
	}
	for _, r := range c.rows {
		if r.System != sys || r.Linger != lingerOf(sys, linger) || r.Offered <= lo.Offered || r.sustained(c.p99Bound) {
			continue
		}
		if hi.Offered == 0 || r.Offered < hi.Offered {
			hi = r
		}
	}
	return lo, hi
}

// best is sys's highest sustained rate at the linger as its search found it (a later
// overload run that happened to commit its offered rate, on a machine whose load changed,
// does not move it).
func (c *reportRunner) best(sys string, linger int) (reportRow, bool) {
	r, ok := c.maxes[maxKey(sys, linger)]
	return r, ok
}

func maxKey(sys string, linger int) string { return fmt.Sprintf("%s %d", sys, lingerOf(sys, linger)) }

// searchMax finds sys's highest sustained rate at the linger: from the sweep's highest
// sustained rate lo and the lowest unsustained one above it hi, it runs at the midpoint
// (rounded to 1,000/s) and moves lo or hi there, at most steps times or until hi is within
// 5% of lo; with no unsustained rate above lo it tries 1.25 lo, and with nothing sustained
// half the lowest rate tried. The rows it runs stay in the report. ok is false when nothing
// was sustained.
func (c *reportRunner) searchMax(sys string, linger, steps int) (reportRow, bool) {
	for range steps {
		lo, hi := c.bounds(sys, linger)
		if lo.Offered == 0 {
			// Nothing sustained yet: halve the lowest rate that failed.
			if hi.Offered < 2000 {
				break
			}
			c.run(sys, roundRate(float64(hi.Offered)/2), linger, quiet, "search")
			continue
		}
		next := roundRate(1.25 * float64(lo.Offered))
		if hi.Offered > 0 {
			if float64(hi.Offered-lo.Offered) <= 0.05*float64(lo.Offered) {
				break
			}
			next = roundRate(float64(lo.Offered+hi.Offered) / 2)
		}
		if next <= lo.Offered || hi.Offered > 0 && next >= hi.Offered {
			break
		}
		c.run(sys, next, linger, quiet, "search")
	}
	lo, hi := c.bounds(sys, linger)
	if lo.Offered == 0 {
		c.searchNotes = append(c.searchNotes, fmt.Sprintf("%s at linger %d: no offered rate sustained", sys, linger))
		return lo, false
	}
	above := "none run above it"
	if hi.Offered > 0 {
		above = fmt.Sprintf("not sustained at %d/s (%.0f committed, p99 %s ms)", hi.Offered, hi.Committed, ms(hi.P99))
	}
	c.searchNotes = append(c.searchNotes, fmt.Sprintf("%s at linger %s: sustained %d/s, %s", sys, lingerText(lingerOf(sys, linger)), lo.Offered, above))
	if c.maxes == nil {
		c.maxes = map[string]reportRow{}
	}
	c.maxes[maxKey(sys, linger)] = lo
	return lo, true
}

// roundRate rounds a rate to 1,000 records/s.
func roundRate(r float64) int { return int(math.Round(r/1000)) * 1000 }

// envList parses a comma-separated list of integers >= min ("-" for none).
func envList(t *testing.T, key, def string, min int) []int {
	var out []int
	for _, f := range strings.Split(envString(key, def), ",") {
		f = strings.TrimSpace(f)
		if f == "-" || f == "" {
			break
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < min {
			t.Fatalf("%s: %q is not an integer >= %d", key, f, min)
		}
		out = append(out, n)
	}
	return out
}

// envFactors parses a comma-separated list of factors > 1 ("-" for none).
func envFactors(t *testing.T, key, def string) []float64 {
	var out []float64
	for _, f := range strings.Split(envString(key, def), ",") {
		f = strings.TrimSpace(f)
		if f == "-" || f == "" {
			break
		}
		x, err := strconv.ParseFloat(f, 64)
		if err != nil || !(x > 1) || x > 10 {
			t.Fatalf("%s: %q is not a factor in (1, 10]", key, f)
		}
		out = append(out, x)
	}
	return out
}

// sampleLoad samples the 1-minute load average every 2 s until the returned function is
// called, which returns their mean (the machine's load during a run, the run included).
func sampleLoad() (stop func() float64) {
	var mu sync.Mutex
	var sum float64
	var n int
	add := func() {
		if l, ok := load1(); ok {
			mu.Lock()
			sum += l
			n++
			mu.Unlock()
		}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				add()
			}
		}
	}()
	return func() float64 {
		close(done)
		<-finished
		add()
		mu.Lock()
		defer mu.Unlock()
		return sum / float64(n)
	}
}

func load1() (float64, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil
}

// probeDisk measures the disk the logs go to as the runs find it: 3 s of 4 KiB appends
// each fdatasync'd (a lone record's commit), then 3 s of 1 MiB appends each fdatasync'd
// (a loaded quorum's: three nodes at 400,000 records/s of 256 B write about 350 MB/s
// between them).
func probeDisk() string {
	f, err := os.CreateTemp("", "kraftd-bench-disk-")
	if err != nil {
		return "unknown: " + err.Error()
	}
	defer os.Remove(f.Name())
	defer f.Close()
	small := make([]byte, 4<<10)
	var lat []float64
	end := time.Now().Add(3 * time.Second)
	for time.Now().Before(end) {
		s := time.Now()
		if _, err := f.Write(small); err != nil {
			return "unknown: " + err.Error()
		}
		if err := f.Sync(); err != nil {
			return "unknown: " + err.Error()
		}
		lat = append(lat, float64(time.Since(s).Microseconds())/1000)
	}
	big := make([]byte, 1<<20)
	var written int
	start := time.Now()
	for time.Since(start) < 3*time.Second {
		if _, err := f.Write(big); err != nil {
			return "unknown: " + err.Error()
		}
		if err := f.Sync(); err != nil {
			return "unknown: " + err.Error()
		}
		written += len(big)
	}
	mbps := float64(written) / (1 << 20) / time.Since(start).Seconds()
	slices.Sort(lat)
	return fmt.Sprintf("4 KiB append+fsync p50 %.2f ms, p99 %.2f ms; 1 MiB append+fsync %.0f MB/s", lat[len(lat)/2], lat[len(lat)*99/100], mbps)
}

// ran reports whether sys ran quiet at the linger and offered rate.
func (c *reportRunner) ran(sys string, linger, rate int) bool {
	_, ok := c.find(sys, linger, rate)
	return ok
}
