package purgatory

// The purgatory's two heaps: every entry is in the threshold heap, ordered by
// (threshold, seq); entries with a deadline are in the deadline heap too, ordered by
// (deadline, seq). An entry keeps its position in heap k at pos[k].
const (
	byThreshold = iota
	byDeadline
)

// heap is a binary min-heap of entries in order k (byThreshold or byDeadline) that keeps
// each entry's position current, so an entry anywhere in it is removed in O(log n).
type heap[T any] struct {
	h []*entry[T]
	k int
}

func (x *heap[T]) less(a, b *entry[T]) bool {
	if x.k == byThreshold {
		if a.threshold != b.threshold {
			return a.threshold < b.threshold
		}
	} else if !a.deadline.Equal(b.deadline) {
		return a.deadline.Before(b.deadline)
	}
	return a.seq < b.seq
}

func (x *heap[T]) len() int { return len(x.h) }

// min is the least entry; the heap must not be empty.
func (x *heap[T]) min() *entry[T] { return x.h[0] }

func (x *heap[T]) push(e *entry[T]) {
	e.pos[x.k] = len(x.h)
	x.h = append(x.h, e)
	x.up(len(x.h) - 1)
}

// remove takes out the entry at position i and marks it absent (position -1).
func (x *heap[T]) remove(i int) {
	e := x.h[i]
	last := len(x.h) - 1
	if i != last {
		x.swap(i, last)
	}
	x.h[last] = nil
	x.h = x.h[:last]
	e.pos[x.k] = -1
	if i != last {
		x.down(i)
		x.up(i)
	}
}

// clear empties the heap, keeping its storage; positions are left as they were.
func (x *heap[T]) clear() {
	clear(x.h)
	x.h = x.h[:0]
}

func (x *heap[T]) swap(i, j int) {
	x.h[i], x.h[j] = x.h[j], x.h[i]
	x.h[i].pos[x.k] = i
	x.h[j].pos[x.k] = j
}

func (x *heap[T]) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !x.less(x.h[i], x.h[parent]) {
			return
		}
		x.swap(i, parent)
		i = parent
	}
}

func (x *heap[T]) down(i int) {
	n := len(x.h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && x.less(x.h[r], x.h[l]) {
			m = r
		}
		if !x.less(x.h[m], x.h[i]) {
			return
		}
		x.swap(i, m)
		i = m
	}
}
