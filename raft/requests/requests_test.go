package requests

import (
	"testing"
	"time"
)

var t0 = time.Unix(1000, 0)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// kind is a test payload: the api of the request.
type kind string

func TestDestinationStates(t *testing.T) {
	var m Manager[int32, kind]
	if !m.Ready(1, t0) || m.BackingOff(1, t0) || m.AnyInFlight() {
		t.Fatal("the zero manager is not all ready")
	}
	m.Sent(1, 7, "Vote")
	if m.Ready(1, t0) || m.BackingOff(1, t0) || !m.AnyInFlight() {
		t.Fatal("in flight: neither ready nor backing off")
	}
	if !m.Ready(2, t0) {
		t.Fatal("another destination is not ready")
	}
	if _, ok := m.Take(1, 8); ok {
		t.Fatal("took an answer with another correlation id")
	}
	if _, ok := m.Take(2, 7); ok {
		t.Fatal("took an answer from another destination")
	}
	p, ok := m.Take(1, 7)
	if !ok || p != "Vote" || !m.Ready(1, t0) {
		t.Fatalf("Take = %q/%v, ready %v", p, ok, m.Ready(1, t0))
	}
	if _, ok := m.Take(1, 7); ok {
		t.Fatal("took the same answer twice")
	}
	m.Backoff(1, at(100))
	for _, c := range []struct {
		now               time.Time
		ready, backingOff bool
	}{
		{t0, false, true},
		{at(99), false, true},
		{at(100), true, false}, // the backoff ends at its deadline
		{at(500), true, false},
	} {
		if m.Ready(1, c.now) != c.ready || m.BackingOff(1, c.now) != c.backingOff {
			t.Errorf("at %v: ready %v backing off %v, want %v %v", c.now.Sub(t0), m.Ready(1, c.now), m.BackingOff(1, c.now), c.ready, c.backingOff)
		}
	}
	m.Sent(1, 9, "Fetch") // a send ends the backoff
	if _, ok := m.Take(1, 9); !ok || !m.Ready(1, t0) {
		t.Fatal("a send did not clear the backoff")
	}
}

func TestResetForgetsInFlightRequests(t *testing.T) {
	var m Manager[int32, kind]
	m.Sent(1, 1, "Vote")
	m.Sent(2, 2, "Vote")
	m.Backoff(3, at(100))
	gen := m.Generation()
	m.Reset()
	if m.Generation() == gen {
		t.Fatal("Reset did not start a new generation")
	}
	if _, ok := m.Take(1, 1); ok {
		t.Fatal("an answer to a request sent before Reset was taken")
	}
	if !m.Ready(2, t0) || !m.Ready(3, t0) || m.AnyInFlight() || !m.NextBackoffEnd(t0).IsZero() {
		t.Fatal("Reset left requests or backoffs")
	}
}

func TestInFlightMatchesPayloads(t *testing.T) {
	var m Manager[int32, kind]
	isFetch := func(k kind) bool { return k == "Fetch" || k == "FetchSnapshot" }
	m.Sent(1, 1, "Vote")
	if m.InFlight(isFetch) {
		t.Fatal("a Vote matched")
	}
	m.Sent(-2, 2, "FetchSnapshot")
	if !m.InFlight(isFetch) {
		t.Fatal("the FetchSnapshot did not match")
	}
	m.Take(-2, 2)
	if m.InFlight(isFetch) || !m.AnyInFlight() {
		t.Fatal("a taken request still matches, or the Vote is gone")
	}
}

func TestNextBackoffEnd(t *testing.T) {
	var m Manager[int32, kind]
	if !m.NextBackoffEnd(t0).IsZero() {
		t.Fatal("a backoff end with none running")
	}
	m.Backoff(1, at(300))
	m.Backoff(2, at(100))
	m.Backoff(3, at(50))
	m.Sent(3, 1, "Vote") // sending ends 3's backoff
	m.Backoff(4, at(-10))
	for _, c := range []struct {
		now  time.Time
		want time.Time
	}{
		{t0, at(100)},
		{at(99), at(100)},
		{at(100), at(300)}, // ended backoffs do not count
		{at(300), time.Time{}},
	} {
		if got := m.NextBackoffEnd(c.now); !got.Equal(c.want) {
			t.Errorf("NextBackoffEnd(%v) = %v, want %v", c.now.Sub(t0), got, c.want)
		}
	}
}
