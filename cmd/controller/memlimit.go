package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// memoryLimitFor is the soft memory limit for a process whose live heap is live bytes
// and whose other Go memory (goroutine stacks, the runtime's structures) is other
// bytes: floor while that leaves the heap room to double, else room for exactly that
// (GOGC 100's heap goal). A fixed limit below what the process needs does not bound its
// memory, it only makes the collector run again as soon as it ends: an active
// controller with 1,000 brokers (two goroutines and their stacks per connection, the
// sessions) passed 32 MiB and collected 32 times a second, each time scanning every
// goroutine's stack, for 70% of its CPU; a million partitions' image is hundreds of MB.
func memoryLimitFor(floor int64, live, other uint64) int64 {
	need := 2*live + other
	if need > uint64(floor) && need < 1<<62 {
		return int64(need)
	}
	return floor
}

// limiter is the process's memory limiter (nil when GOMEMLIMIT is set).
var limiter *memoryLimiter

// memoryLimiter keeps the soft memory limit at memoryLimitFor after every collection.
type memoryLimiter struct {
	floor   int64
	stopped atomic.Bool
	samples []metrics.Sample
}

// The runtime metrics memoryLimitFor reads: the live heap, and all memory less the
// heap's classes.
var limiterMetrics = []string{
	"/gc/heap/live:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/released:bytes",
}

// startMemoryLimiter sets the limit to floor and recomputes it after each collection
// until stop.
func startMemoryLimiter(floor int64) *memoryLimiter {
	m := &memoryLimiter{floor: floor}
	for _, name := range limiterMetrics {
		m.samples = append(m.samples, metrics.Sample{Name: name})
	}
	debug.SetMemoryLimit(floor)
	m.arm()
	return m
}

// gcSentinel is garbage from birth: its cleanup runs once a collection has found it so,
// and arms the next one. It holds a pointer so that it is not batched with other small
// objects by the tiny allocator, whose blocks are freed together.
type gcSentinel struct{ _ *byte }

func (m *memoryLimiter) arm() {
	runtime.AddCleanup(new(gcSentinel), func(m *memoryLimiter) { m.afterGC() }, m)
}

// afterGC runs on the runtime's cleanup goroutine after a collection.
func (m *memoryLimiter) afterGC() {
	if m.stopped.Load() {
		return
	}
	metrics.Read(m.samples)
	v := make([]uint64, len(m.samples))
	for i, s := range m.samples {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	live, total := v[0], v[1]
	heap := v[2] + v[3] + v[4] + v[5]
	var other uint64
	if total > heap {
		other = total - heap
	}
	debug.SetMemoryLimit(memoryLimitFor(m.floor, live, other))
	m.arm()
}

// stop leaves the limit as it is and recomputes it no more (nil: nothing to stop).
func (m *memoryLimiter) stop() {
	if m != nil {
		m.stopped.Store(true)
	}
}
