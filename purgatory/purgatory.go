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
	byThreshold []*entry[T] // min-heap on (threshold, seq)
	byDeadline  []*entry[T] // min-heap on (deadline, seq); entries without a deadline are absent
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
	ti, di    int // positions in byThreshold / byDeadline; di is -1 when absent
	v         T
}

// New returns an empty purgatory.
func New[T any]() *Purgatory[T] { return &Purgatory[T]{} }

// Len is the number of parked operations.
func (p *Purgatory[T]) Len() int { return len(p.byThreshold) }

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
	*e = entry[T]{threshold: threshold, deadline: deadline, seq: p.seq, v: v, di: -1}
	e.ti = len(p.byThreshold)
	p.byThreshold = append(p.byThreshold, e)
	p.upT(e.ti)
	if !deadline.IsZero() {
		e.di = len(p.byDeadline)
		p.byDeadline = append(p.byDeadline, e)
		p.upD(e.di)
	}
}

// CompleteUpTo removes and passes to fn, in (threshold, insertion) order,
// every op with threshold < value.
func (p *Purgatory[T]) CompleteUpTo(value int64, fn func(T)) {
	if len(p.byThreshold) == 0 || p.byThreshold[0].threshold >= value {
		return
	}
	done := p.takeScratch()
	for len(p.byThreshold) > 0 && p.byThreshold[0].threshold < value {
		e := p.byThreshold[0]
		p.removeT(0)
		if e.di >= 0 {
			p.removeD(e.di)
		}
		done = append(done, e)
	}
	p.finish(done, fn)
}

// Expire removes and passes to fn, in (deadline, insertion) order, every op
// whose deadline is at or before now.
func (p *Purgatory[T]) Expire(now time.Time, fn func(T)) {
	if len(p.byDeadline) == 0 || p.byDeadline[0].deadline.After(now) {
		return
	}
	done := p.takeScratch()
	for len(p.byDeadline) > 0 && !p.byDeadline[0].deadline.After(now) {
		e := p.byDeadline[0]
		p.removeD(0)
		p.removeT(e.ti)
		done = append(done, e)
	}
	p.finish(done, fn)
}

// CompleteAll removes and passes to fn every parked op, in (threshold,
// insertion) order. The leader calls it when it resigns or shuts down.
func (p *Purgatory[T]) CompleteAll(fn func(T)) {
	if len(p.byThreshold) == 0 {
		return
	}
	done := append(p.takeScratch(), p.byThreshold...)
	clear(p.byThreshold)
	p.byThreshold = p.byThreshold[:0]
	clear(p.byDeadline)
	p.byDeadline = p.byDeadline[:0]
	slices.SortFunc(done, func(a, b *entry[T]) int {
		if lessT(a, b) {
			return -1
		}
		return 1 // seq is unique, so never equal
	})
	p.finish(done, fn)
}

// NextDeadline returns the earliest deadline among parked ops; ok is false
// when none has a deadline.
func (p *Purgatory[T]) NextDeadline() (time.Time, bool) {
	if len(p.byDeadline) == 0 {
		return time.Time{}, false
	}
	return p.byDeadline[0].deadline, true
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

func lessT[T any](a, b *entry[T]) bool {
	if a.threshold != b.threshold {
		return a.threshold < b.threshold
	}
	return a.seq < b.seq
}

func lessD[T any](a, b *entry[T]) bool {
	if !a.deadline.Equal(b.deadline) {
		return a.deadline.Before(b.deadline)
	}
	return a.seq < b.seq
}

// Heap on byThreshold.

func (p *Purgatory[T]) swapT(i, j int) {
	h := p.byThreshold
	h[i], h[j] = h[j], h[i]
	h[i].ti = i
	h[j].ti = j
}

func (p *Purgatory[T]) upT(i int) {
	h := p.byThreshold
	for i > 0 {
		parent := (i - 1) / 2
		if !lessT(h[i], h[parent]) {
			return
		}
		p.swapT(i, parent)
		i = parent
	}
}

func (p *Purgatory[T]) downT(i int) {
	h := p.byThreshold
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && lessT(h[r], h[l]) {
			m = r
		}
		if !lessT(h[m], h[i]) {
			return
		}
		p.swapT(i, m)
		i = m
	}
}

func (p *Purgatory[T]) removeT(i int) {
	last := len(p.byThreshold) - 1
	if i != last {
		p.swapT(i, last)
	}
	p.byThreshold[last] = nil
	p.byThreshold = p.byThreshold[:last]
	if i != last {
		p.downT(i)
		p.upT(i)
	}
}

// Heap on byDeadline.

func (p *Purgatory[T]) swapD(i, j int) {
	h := p.byDeadline
	h[i], h[j] = h[j], h[i]
	h[i].di = i
	h[j].di = j
}

func (p *Purgatory[T]) upD(i int) {
	h := p.byDeadline
	for i > 0 {
		parent := (i - 1) / 2
		if !lessD(h[i], h[parent]) {
			return
		}
		p.swapD(i, parent)
		i = parent
	}
}

func (p *Purgatory[T]) downD(i int) {
	h := p.byDeadline
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && lessD(h[r], h[l]) {
			m = r
		}
		if !lessD(h[m], h[i]) {
			return
		}
		p.swapD(i, m)
		i = m
	}
}

func (p *Purgatory[T]) removeD(i int) {
	h := p.byDeadline
	e := h[i]
	last := len(h) - 1
	if i != last {
		p.swapD(i, last)
	}
	p.byDeadline[last] = nil
	p.byDeadline = p.byDeadline[:last]
	e.di = -1
	if i != last {
		p.downD(i)
		p.upD(i)
	}
}
