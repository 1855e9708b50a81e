package purgatory

import (
	"slices"
	"time"
)

// Purgatory holds delayed operations waiting for a threshold (e.g. "log end
// offset passed X") or a deadline, whichever comes first. Not safe for
// concurrent use: the driver goroutine calls it and passes the time in.
//
// Callbacks may call Add on the same purgatory; operations added from a
// callback are not completed by the call that is running.
type Purgatory[T any] struct {
	byThreshold heap[T] // every entry
	byDeadline  heap[T] // the entries with a deadline
	seq         uint64
	scratch     []*entry[T] // reused between completions to avoid allocating
	free        []*entry[T] // recycled entries, at most maxFree
}

// maxFree caps the recycled entries kept after a burst of completions, so
// memory follows the parked count rather than its historical peak.
const maxFree = 256

type entry[T any] struct {
	threshold int64
	deadline  time.Time // zero: never expires
	seq       uint64
	pos       [2]int // positions in byThreshold and byDeadline; -1 when absent
	v         T
}

// New returns an empty purgatory.
func New[T any]() *Purgatory[T] {
	return &Purgatory[T]{byThreshold: heap[T]{k: byThreshold}, byDeadline: heap[T]{k: byDeadline}}
}

// Len is the number of parked operations.
func (p *Purgatory[T]) Len() int { return p.byThreshold.len() }

// Add parks v until a CompleteUpTo with a value above threshold, an Expire at
// or after deadline, or CompleteAll. A zero deadline never expires.
func (p *Purgatory[T]) Add(threshold int64, deadline time.Time, v T) {
	var e *entry[T]
	if n := len(p.free); n > 0 {
		e = p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
	} else {
		e = new(entry[T])
	}
	p.seq++
	*e = entry[T]{threshold: threshold, deadline: deadline, seq: p.seq, v: v, pos: [2]int{-1, -1}}
	p.byThreshold.push(e)
	if !deadline.IsZero() {
		p.byDeadline.push(e)
	}
}

// CompleteUpTo removes and passes to fn, in (threshold, insertion) order,
// every op with threshold < value.
func (p *Purgatory[T]) CompleteUpTo(value int64, fn func(T)) {
	if p.byThreshold.len() == 0 || p.byThreshold.min().threshold >= value {
		return
	}
	done := p.takeScratch()
	for p.byThreshold.len() > 0 && p.byThreshold.min().threshold < value {
		e := p.byThreshold.min()
		p.byThreshold.remove(0)
		if i := e.pos[byDeadline]; i >= 0 {
			p.byDeadline.remove(i)
		}
		done = append(done, e)
	}
	p.finish(done, fn)
}

// Expire removes and passes to fn, in (deadline, insertion) order, every op
// whose deadline is at or before now.
func (p *Purgatory[T]) Expire(now time.Time, fn func(T)) {
	if p.byDeadline.len() == 0 || p.byDeadline.min().deadline.After(now) {
		return
	}
	done := p.takeScratch()
	for p.byDeadline.len() > 0 && !p.byDeadline.min().deadline.After(now) {
		e := p.byDeadline.min()
		p.byDeadline.remove(0)
		p.byThreshold.remove(e.pos[byThreshold])
		done = append(done, e)
	}
	p.finish(done, fn)
}

// CompleteAll removes and passes to fn every parked op, in (threshold,
// insertion) order. The leader calls it when it resigns or shuts down.
func (p *Purgatory[T]) CompleteAll(fn func(T)) {
	if p.byThreshold.len() == 0 {
		return
	}
	done := append(p.takeScratch(), p.byThreshold.h...)
	p.byThreshold.clear()
	p.byDeadline.clear()
	slices.SortFunc(done, func(a, b *entry[T]) int {
		if p.byThreshold.less(a, b) {
			return -1
		}
		return 1 // seq is unique, so never equal
	})
	p.finish(done, fn)
}

// NextDeadline returns the earliest deadline among parked ops; ok is false
// when none has a deadline.
func (p *Purgatory[T]) NextDeadline() (time.Time, bool) {
	if p.byDeadline.len() == 0 {
		return time.Time{}, false
	}
	return p.byDeadline.min().deadline, true
}

// takeScratch borrows the scratch slice; a callback that re-enters the
// purgatory then finds none and allocates its own.
func (p *Purgatory[T]) takeScratch() []*entry[T] {
	s := p.scratch[:0]
	p.scratch = nil
	return s
}

// finish runs fn over the removed entries, then recycles them. Entries are
// detached before any callback runs, so a callback sees a consistent
// purgatory.
func (p *Purgatory[T]) finish(done []*entry[T], fn func(T)) {
	for i, e := range done {
		v := e.v
		var zero T
		e.v = zero // drop the reference before fn can park it again
		done[i] = nil
		if len(p.free) < maxFree {
			p.free = append(p.free, e)
		}
		fn(v)
	}
	if cap(done) <= maxFree && (p.scratch == nil || cap(done) > cap(p.scratch)) {
		p.scratch = done[:0]
	}
}
