package history

import (
	"errors"
	"testing"
)

// build is a history of value i at offsets[i].
func build(t *testing.T, offsets ...int64) *History[int] {
	t.Helper()
	var h History[int]
	for i, o := range offsets {
		if err := h.AddAt(o, i); err != nil {
			t.Fatalf("AddAt(%d): %v", o, err)
		}
	}
	return &h
}

// at renders the value at o, -100 for none.
func at(h *History[int], o int64) int {
	v, ok := h.At(o)
	if !ok {
		return -100
	}
	return v
}

func TestAddAtRefusesOffsetsOutOfOrder(t *testing.T) {
	h := build(t, -1, 10, 30)
	for _, o := range []int64{30, 29, -1, -2} {
		if err := h.AddAt(o, 9); !errors.Is(err, ErrOrder) {
			t.Errorf("AddAt(%d) after 30: %v, want ErrOrder", o, err)
		}
	}
	var empty History[int]
	if err := empty.AddAt(-2, 0); !errors.Is(err, ErrOrder) {
		t.Errorf("AddAt(-2) on an empty history: %v, want ErrOrder", err)
	}
	if h.Len() != 3 {
		t.Fatalf("refused entries were kept: %d entries", h.Len())
	}
}

func TestAt(t *testing.T) {
	h := build(t, -1, 10, 20, 30) // values 0..3
	for _, c := range []struct {
		offset int64
		want   int
	}{
		{-5, -100}, // before the first entry
		{-1, 0},    // the bootstrap entry
		{0, 0},
		{9, 0},
		{10, 1}, // an entry's own offset
		{25, 2},
		{30, 3},
		{1000, 3}, // past the last: the latest value
	} {
		if got := at(h, c.offset); got != c.want {
			t.Errorf("At(%d) = %d, want %d", c.offset, got, c.want)
		}
	}
	var empty History[int]
	if got := at(&empty, 5); got != -100 {
		t.Errorf("At on an empty history = %d", got)
	}
}

func TestTruncateNew(t *testing.T) {
	for _, c := range []struct {
		end      int64
		wantLen  int
		wantLast int64 // -100: no entry left
	}{
		{1000, 4, 30},
		{31, 4, 30},
		{30, 3, 20}, // an entry at end goes
		{11, 2, 10},
		{0, 1, -1},
		{-1, 0, -100},
	} {
		h := build(t, -1, 10, 20, 30)
		h.TruncateNew(c.end)
		last := int64(-100)
		if e, ok := h.Last(); ok {
			last = e.Offset
		}
		if h.Len() != c.wantLen || last != c.wantLast {
			t.Errorf("TruncateNew(%d): %d entries, last at %d; want %d, %d", c.end, h.Len(), last, c.wantLen, c.wantLast)
		}
	}
	// Offsets at or above a truncation point can be written again.
	h := build(t, -1, 10, 20)
	h.TruncateNew(20)
	if err := h.AddAt(20, 7); err != nil || at(h, 25) != 7 {
		t.Fatalf("AddAt after TruncateNew: %v, At(25) = %d", err, at(h, 25))
	}
}

func TestTruncateOldKeepsTheValueInForce(t *testing.T) {
	for _, c := range []struct {
		start   int64
		wantLen int
	}{
		{-5, 4},
		{5, 4},  // the entry at -1 is still in force at 5
		{10, 3}, // -1 is superseded by 10
		{15, 3},
		{25, 2},
		{1000, 1}, // the last entry always stays
	} {
		h := build(t, -1, 10, 20, 30)
		want := at(h, c.start)
		h.TruncateOld(c.start)
		if h.Len() != c.wantLen {
			t.Errorf("TruncateOld(%d): %d entries, want %d", c.start, h.Len(), c.wantLen)
		}
		if got := at(h, c.start); got != want {
			t.Errorf("TruncateOld(%d): At(start) = %d, was %d", c.start, got, want)
		}
		if got := at(h, 1000); got != 3 {
			t.Errorf("TruncateOld(%d): latest value %d, want 3", c.start, got)
		}
	}
}

func TestClear(t *testing.T) {
	h := build(t, -1, 10)
	h.Clear()
	if _, ok := h.Last(); ok || h.Len() != 0 || at(h, 10) != -100 {
		t.Fatal("entries after Clear")
	}
	if err := h.AddAt(-1, 5); err != nil || at(h, 0) != 5 {
		t.Fatalf("AddAt after Clear: %v", err)
	}
}
