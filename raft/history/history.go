// Package history keeps a value as a function of the log offset (Kafka's
// LogHistory): the raft replica's voter sets and kraft.version levels, each
// in force from the offset of the control record that set it. The log
// moves under it at both ends, so it is cut there too: TruncateNew when the
// log is truncated after a divergence, TruncateOld as the log start moves
// past old entries, Clear when a snapshot replaces the log.
//
// It is a plain data structure, with no knowledge of records or voters,
// and not safe for concurrent use (the driver's goroutine owns it).
package history

import (
	"errors"
	"fmt"
	"slices"
)

// History holds entries at strictly increasing offsets; the value in force
// at offset o is that of the entry at the largest offset <= o. Offset -1
// holds what a bootstrap snapshot (0-0) records. The zero value is empty.
type History[T any] struct {
	entries []Entry[T]
}

// Entry is a value and the offset it is in force from.
type Entry[T any] struct {
	Offset int64
	Value  T
}

// ErrOrder is returned by AddAt for an offset below -1 or not above the
// last entry's.
var ErrOrder = errors.New("raft: history entries must have increasing offsets >= -1")

// AddAt records value as in force from offset on.
func (h *History[T]) AddAt(offset int64, value T) error {
	if offset < -1 {
		return fmt.Errorf("%w: offset %d", ErrOrder, offset)
	}
	if n := len(h.entries); n > 0 && offset <= h.entries[n-1].Offset {
		return fmt.Errorf("%w: offset %d after %d", ErrOrder, offset, h.entries[n-1].Offset)
	}
	h.entries = append(h.entries, Entry[T]{offset, value})
	return nil
}

// At is the value in force at offset; false before the first entry.
func (h *History[T]) At(offset int64) (T, bool) {
	i, found := slices.BinarySearchFunc(h.entries, offset, func(e Entry[T], o int64) int {
		switch {
		case e.Offset < o:
			return -1
		case e.Offset > o:
			return 1
		}
		return 0
	})
	if found {
		return h.entries[i].Value, true
	}
	if i == 0 {
		var zero T
		return zero, false
	}
	return h.entries[i-1].Value, true
}

// Last is the latest entry; false when there is none.
func (h *History[T]) Last() (Entry[T], bool) {
	if len(h.entries) == 0 {
		return Entry[T]{}, false
	}
	return h.entries[len(h.entries)-1], true
}

// Len is the number of entries kept.
func (h *History[T]) Len() int { return len(h.entries) }

// TruncateNew removes the entries at offsets >= end (the log was truncated
// there).
func (h *History[T]) TruncateNew(end int64) {
	i := len(h.entries)
	for i > 0 && h.entries[i-1].Offset >= end {
		i--
	}
	clear(h.entries[i:])
	h.entries = h.entries[:i]
}

// TruncateOld drops entries below start that a later entry <= start
// supersedes: the value in force at start stays known.
func (h *History[T]) TruncateOld(start int64) {
	keep := 0
	for keep+1 < len(h.entries) && h.entries[keep+1].Offset <= start {
		keep++
	}
	if keep > 0 {
		h.entries = slices.Delete(h.entries, 0, keep)
	}
}

// Clear removes every entry.
func (h *History[T]) Clear() { h.entries = nil }
