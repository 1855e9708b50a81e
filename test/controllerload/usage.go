package controllerload

import (
	"context"
	"sync"
	"time"

	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// UsagePoint is a process's resource use at one moment.
type UsagePoint struct {
	At  time.Time
	CPU time.Duration // user + system so far
	RSS int64         // bytes
}

// Sampler reads a process's CPU time and RSS from /proc at an interval.
type Sampler struct {
	Pid    int
	mu     sync.Mutex
	points []UsagePoint
	cancel context.CancelFunc
	done   chan struct{}
}

// SampleUsage samples pid every interval until Stop (or the process exits).
func SampleUsage(ctx context.Context, pid int, every time.Duration) *Sampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &Sampler{Pid: pid, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			if !s.Sample() {
				return
			}
			select {
			case <-time.After(every):
			case <-ctx.Done():
				return
			}
		}
	}()
	return s
}

// Sample takes one point now; false once the process is gone.
func (s *Sampler) Sample() bool {
	u, err := kafkatest.PidUsage(s.Pid)
	if err != nil {
		return false
	}
	s.mu.Lock()
	s.points = append(s.points, UsagePoint{At: time.Now(), CPU: u.CPU, RSS: u.RSS})
	s.mu.Unlock()
	return true
}

// Stop ends the sampling.
func (s *Sampler) Stop() {
	s.cancel()
	<-s.done
}

// Points are the samples so far.
func (s *Sampler) Points() []UsagePoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]UsagePoint(nil), s.points...)
}

// UsageWindow is a process's use over a window.
type UsageWindow struct {
	Cores   float64 // CPU time over wall time, between the first and last sample in the window
	MaxRSS  int64
	LastRSS int64
}

// Window sums up the samples taken in [from, to].
func (s *Sampler) Window(from, to time.Time) UsageWindow {
	var in []UsagePoint
	for _, p := range s.Points() {
		if !p.At.Before(from) && !p.At.After(to) {
			in = append(in, p)
		}
	}
	var w UsageWindow
	if len(in) == 0 {
		return w
	}
	first, last := in[0], in[len(in)-1]
	if d := last.At.Sub(first.At); d > 0 {
		w.Cores = (last.CPU - first.CPU).Seconds() / d.Seconds()
	}
	for _, p := range in {
		w.MaxRSS = max(w.MaxRSS, p.RSS)
	}
	w.LastRSS = last.RSS
	return w
}
