package raft

import (
	"errors"
	"fmt"
	"slices"
)

// logHistory is a value as a function of the log offset (Kafka's
// LogHistory): entries at strictly increasing offsets; the value at offset o
// is the entry at the largest offset <= o. Offset -1 holds what a bootstrap
// snapshot (0-0) records.
type logHistory[T any] struct {
	entries []historyEntry[T]
}

type historyEntry[T any] struct {
	offset int64
	value  T
}

var errHistoryOrder = errors.New("raft: history entries must have increasing offsets >= -1")

// addAt records value from offset on.
func (h *logHistory[T]) addAt(offset int64, value T) error {
	if offset < -1 {
		return fmt.Errorf("%w: offset %d", errHistoryOrder, offset)
	}
	if n := len(h.entries); n > 0 && offset <= h.entries[n-1].offset {
		return fmt.Errorf("%w: offset %d after %d", errHistoryOrder, offset, h.entries[n-1].offset)
	}
	h.entries = append(h.entries, historyEntry[T]{offset, value})
	return nil
}

// at is the value in force at offset.
func (h *logHistory[T]) at(offset int64) (T, bool) {
	i, found := slices.BinarySearchFunc(h.entries, offset, func(e historyEntry[T], o int64) int {
		switch {
		case e.offset < o:
			return -1
		case e.offset > o:
			return 1
		}
		return 0
	})
	if found {
		return h.entries[i].value, true
	}
	if i == 0 {
		var zero T
		return zero, false
	}
	return h.entries[i-1].value, true
}

// last is the latest entry.
func (h *logHistory[T]) last() (historyEntry[T], bool) {
	if len(h.entries) == 0 {
		return historyEntry[T]{}, false
	}
	return h.entries[len(h.entries)-1], true
}

// truncateNew removes the entries at offsets >= end (the log was truncated
// there).
func (h *logHistory[T]) truncateNew(end int64) {
	i := len(h.entries)
	for i > 0 && h.entries[i-1].offset >= end {
		i--
	}
	clear(h.entries[i:])
	h.entries = h.entries[:i]
}

// truncateOld drops entries below start that a later entry <= start
// supersedes: the value in force at start stays known.
func (h *logHistory[T]) truncateOld(start int64) {
	keep := 0
	for keep+1 < len(h.entries) && h.entries[keep+1].offset <= start {
		keep++
	}
	if keep > 0 {
		h.entries = slices.Delete(h.entries, 0, keep)
	}
}

func (h *logHistory[T]) clear() { h.entries = nil }
