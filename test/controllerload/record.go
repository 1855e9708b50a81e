package controllerload

import (
	"math"
	"slices"
	"sync"
	"time"
)

// Sample is one request and its answer.
type Sample struct {
	ID    int32     // the broker (heartbeats, registrations); -1 for the admin's requests
	Due   time.Time // when it fell due (an open loop's schedule; Start otherwise)
	Start time.Time // sent
	End   time.Time // answered, or failed
	Code  int16     // the answer's error code; -1 when the request failed without one
	Parts int       // partitions the request created or deleted when it succeeded
}

// OK reports whether the request was answered without an error.
func (s Sample) OK() bool { return s.Code == 0 }

// Latency runs from the request's due time to its answer.
func (s Sample) Latency() time.Duration { return s.End.Sub(s.Due) }

// Recorder keeps samples from many goroutines.
type Recorder struct {
	mu      sync.Mutex
	samples []Sample
}

// Add keeps s.
func (r *Recorder) Add(s Sample) {
	r.mu.Lock()
	r.samples = append(r.samples, s)
	r.mu.Unlock()
}

// Samples returns the samples answered in [from, to), in the order kept.
func (r *Recorder) Samples(from, to time.Time) []Sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Sample
	for _, s := range r.samples {
		if !s.End.Before(from) && s.End.Before(to) {
			out = append(out, s)
		}
	}
	return out
}

// Window sums up samples (usually one window's).
type Window struct {
	Seconds  float64
	Requests int           // answered or failed
	OK       int           // answered without an error
	Errors   map[int16]int // error code -> count (-1: no answer)
	Parts    int           // partitions of the successful requests
	P50, P99 time.Duration // latency of the successful requests
	Max      time.Duration // of the successful requests
}

// Summarize sums up the samples answered in [from, to).
func (r *Recorder) Summarize(from, to time.Time) Window {
	return Summarize(r.Samples(from, to), to.Sub(from))
}

// Summarize sums up samples over a window of length d.
func Summarize(samples []Sample, d time.Duration) Window {
	w := Window{Seconds: d.Seconds(), Errors: map[int16]int{}}
	var lat []time.Duration
	for _, s := range samples {
		w.Requests++
		if !s.OK() {
			w.Errors[s.Code]++
			continue
		}
		w.OK++
		w.Parts += s.Parts
		lat = append(lat, s.Latency())
	}
	w.P50, w.P99, w.Max = Percentile(lat, 0.50), Percentile(lat, 0.99), Percentile(lat, 1)
	return w
}

// PerSecond is the rate of successful requests.
func (w Window) PerSecond() float64 { return float64(w.OK) / w.Seconds }

// PartsPerSecond is the rate of partitions created (or deleted).
func (w Window) PartsPerSecond() float64 { return float64(w.Parts) / w.Seconds }

// Percentile is the q-quantile of d (nearest rank; q 1 is the largest); 0
// for none.
func Percentile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}
