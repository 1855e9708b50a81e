package metrics

import (
	"math"
	"testing"
	"time"
)

// The windows behave as Kafka's SampledStat with two 30 s samples.
func TestKafkaStatWindow(t *testing.T) {
	c := newClock()
	var k kafkaStat
	if !math.IsNaN(k.avg(c.now())) || !math.IsNaN(k.maximum(c.now())) {
		t.Fatal("an empty window is not NaN")
	}
	if r := k.rate(c.now()); r != 0 {
		t.Fatalf("empty rate %v", r)
	}
	k.record(10, c.now())
	c.add(10 * time.Second)
	k.record(30, c.now())
	if a, m := k.avg(c.now()), k.maximum(c.now()); a != 20 || m != 30 {
		t.Fatalf("avg %v max %v, want 20 30", a, m)
	}
	// Rate: 40 records over 10 s elapsed, counted as at least one full
	// window plus the elapsed part of the next (Kafka's Rate.windowSize).
	if r := k.rate(c.now()); math.Abs(r-40.0/40) > 1e-9 {
		t.Fatalf("rate %v, want 1", r)
	}
	// A second sample starts after 30 s; the first still counts.
	c.add(25 * time.Second)
	k.record(2, c.now())
	if a := k.avg(c.now()); math.Abs(a-14) > 1e-9 {
		t.Fatalf("avg %v over two samples, want 14", a)
	}
	// 60 s after their last events the samples are dropped.
	c.add(60 * time.Second)
	if !math.IsNaN(k.avg(c.now())) || !math.IsNaN(k.maximum(c.now())) || k.rate(c.now()) != 0 {
		t.Fatalf("old samples kept: avg %v max %v rate %v", k.avg(c.now()), k.maximum(c.now()), k.rate(c.now()))
	}
}

// poll-idle-ratio: the share of idle time since the previous measurement.
func TestTimeRatio(t *testing.T) {
	c := newClock()
	var r timeRatio
	if v := r.measure(); v != 1 {
		t.Fatalf("no data: %v, want 1", v)
	}
	r.record(time.Second, c.now()) // dropped: it began before the interval
	c.add(time.Second)
	r.record(250*time.Millisecond, c.now())
	c.add(time.Second)
	r.record(250*time.Millisecond, c.now())
	if v := r.measure(); math.Abs(v-0.25) > 1e-9 {
		t.Fatalf("ratio %v, want 0.25", v)
	}
	// The next interval starts at the last record.
	c.add(time.Second)
	r.record(time.Second, c.now())
	if v := r.measure(); v != 1 {
		t.Fatalf("fully idle interval: %v", v)
	}
}
