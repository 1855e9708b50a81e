package metrics

import (
	"math"
	"sync"
	"time"
)

// Kafka's MetricConfig defaults: each windowed stat keeps two samples of
// 30 s (metrics.num.samples, metrics.sample.window.ms).
const (
	kafkaSamples  = 2
	kafkaWindowMs = 30_000
)

// kafkaSample is one of Kafka's SampledStat.Sample, holding what Avg, Max
// and WindowedSum keep (they are recorded together, so one sample serves
// the three).
type kafkaSample struct {
	start, last int64 // ms
	count       int64
	sum, max    float64
}

func (s *kafkaSample) reset(now int64) {
	*s = kafkaSample{start: now, last: now, max: math.Inf(-1)}
}

// kafkaStat reproduces a Kafka sensor's windowed Avg, Max and Rate
// (org.apache.kafka.common.metrics.stats): samples advance when the current
// one is 30 s old, and at measure time a sample whose last event is older
// than the whole window (60 s) is reset. Safe for concurrent use.
type kafkaStat struct {
	mu      sync.Mutex
	samples []kafkaSample // at most kafkaSamples+1: Kafka keeps an overlapping one
	current int
}

func (k *kafkaStat) record(v float64, now time.Time) {
	ms := now.UnixMilli()
	k.mu.Lock()
	defer k.mu.Unlock()
	s := k.currentSample(ms)
	if ms-s.start >= kafkaWindowMs {
		s = k.advance(ms)
	}
	s.sum += v
	s.max = max(s.max, v)
	s.count++
	s.last = ms
}

func (k *kafkaStat) currentSample(ms int64) *kafkaSample {
	if len(k.samples) == 0 {
		k.samples = append(k.samples, kafkaSample{})
		k.samples[0].reset(ms)
	}
	return &k.samples[k.current]
}

func (k *kafkaStat) advance(ms int64) *kafkaSample {
	k.current = (k.current + 1) % (kafkaSamples + 1)
	if k.current >= len(k.samples) {
		k.samples = append(k.samples, kafkaSample{})
	}
	s := &k.samples[k.current]
	s.reset(ms)
	return s
}

func (k *kafkaStat) purge(ms int64) {
	for i := range k.samples {
		if ms-k.samples[i].last >= kafkaSamples*kafkaWindowMs {
			k.samples[i].reset(ms)
		}
	}
}

// avg is Kafka's Avg: the mean of the window's values, NaN when empty.
func (k *kafkaStat) avg(now time.Time) float64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.purge(now.UnixMilli())
	var sum float64
	var n int64
	for _, s := range k.samples {
		sum += s.sum
		n += s.count
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// maximum is Kafka's Max: the window's largest value, NaN when empty.
func (k *kafkaStat) maximum(now time.Time) float64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.purge(now.UnixMilli())
	m := math.Inf(-1)
	var n int64
	for _, s := range k.samples {
		m = max(m, s.max)
		n += s.count
	}
	if n == 0 {
		return math.NaN()
	}
	return m
}

// rate is Kafka's Rate(SECONDS, WindowedSum): the window's sum per second,
// the window counted as at least samples-1 full windows (Rate.windowSize).
func (k *kafkaStat) rate(now time.Time) float64 {
	ms := now.UnixMilli()
	k.mu.Lock()
	defer k.mu.Unlock()
	k.purge(ms)
	k.currentSample(ms)
	oldest := k.samples[0].start
	var sum float64
	for _, s := range k.samples {
		oldest = min(oldest, s.start)
		sum += s.sum
	}
	elapsed := ms - oldest
	if full := elapsed / kafkaWindowMs; full < kafkaSamples-1 {
		elapsed += (kafkaSamples - 1 - full) * kafkaWindowMs
	}
	return sum / (float64(max(elapsed, 1)) / 1000)
}

// timeRatio is Kafka raft's TimeRatio (poll-idle-ratio-avg): the share of
// time spent in the recorded durations since the previous measurement;
// each measurement starts a new interval, as in Kafka. 1 before any data.
type timeRatio struct {
	mu          sync.Mutex
	start, last int64   // ms: the interval's start, the latest record
	recorded    float64 // ms recorded in the interval
	started     bool    // the first record set start
	seen        bool    // a record followed it
}

func (r *timeRatio) record(d time.Duration, now time.Time) {
	ms := now.UnixMilli()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.started {
		// The first value is dropped: it began before the interval.
		r.start, r.started = ms, true
		return
	}
	r.recorded += float64(d.Microseconds()) / 1000
	r.last, r.seen = ms, true
}

func (r *timeRatio) measure() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.seen {
		return 1
	}
	interval := float64(max(r.last-r.start, 0))
	ratio := 1.0
	switch {
	case interval == 0:
	case r.recorded > interval:
	default:
		ratio = r.recorded / interval
	}
	r.start, r.recorded = r.last, 0
	return ratio
}
