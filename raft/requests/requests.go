// Package requests tracks a raft replica's outbound requests per
// destination, as Kafka's RequestManager does: each destination is ready,
// has one request in flight (matched by its correlation id), or is backing
// off until a time. Request timeouts are not its business: the transport
// answers every request exactly once, with a response or an error.
//
// Reset forgets everything and starts a new generation: the driver resets
// on every role transition, so an answer to a request sent in an older
// role finds nothing to match and is ignored ("no longer needed").
//
// What a request is, and which kinds may be in flight together, is the
// caller's: the Manager keeps a payload P per in-flight request and reports
// on it through InFlight. It is not safe for concurrent use.
package requests

import "time"

// Manager tracks destinations of type ID, keeping payload P with each
// in-flight request. The zero value has every destination ready.
type Manager[ID comparable, P any] struct {
	dests map[ID]*dest[P]
	gen   uint64 // bumped by Reset
}

type dest[P any] struct {
	inflight     bool
	corr         uint64 // the in-flight request's correlation id
	p            P
	backoffUntil time.Time // zero unless backing off
}

// Reset forgets every in-flight request and backoff.
func (m *Manager[ID, P]) Reset() {
	clear(m.dests)
	m.gen++
}

// Generation counts Resets: a caller that compares it before and after
// handling an answer learns whether the handling reset the manager.
func (m *Manager[ID, P]) Generation() uint64 { return m.gen }

func (m *Manager[ID, P]) get(to ID) *dest[P] {
	if m.dests == nil {
		m.dests = map[ID]*dest[P]{}
	}
	s := m.dests[to]
	if s == nil {
		s = &dest[P]{}
		m.dests[to] = s
	}
	return s
}

// Ready reports whether a request may be sent to to now: none in flight,
// no backoff running.
func (m *Manager[ID, P]) Ready(to ID, now time.Time) bool {
	s := m.dests[to]
	return s == nil || !s.inflight && !now.Before(s.backoffUntil)
}

// BackingOff reports whether to is waiting out a backoff (and has nothing
// in flight).
func (m *Manager[ID, P]) BackingOff(to ID, now time.Time) bool {
	s := m.dests[to]
	return s != nil && !s.inflight && now.Before(s.backoffUntil)
}

// Sent records a request with correlation id corr in flight to to; any
// backoff of to ends.
func (m *Manager[ID, P]) Sent(to ID, corr uint64, p P) {
	s := m.get(to)
	s.inflight, s.corr, s.p = true, corr, p
	s.backoffUntil = time.Time{}
}

// Take consumes the in-flight request to from with correlation id corr and
// returns its payload; false when there is no such request (an answer to
// a request forgotten by Reset, a duplicate, or an unknown sender). from is
// then ready, unless the caller backs it off.
func (m *Manager[ID, P]) Take(from ID, corr uint64) (P, bool) {
	s := m.dests[from]
	if s == nil || !s.inflight || s.corr != corr {
		var zero P
		return zero, false
	}
	s.inflight = false
	return s.p, true
}

// Backoff keeps to from being ready until until.
func (m *Manager[ID, P]) Backoff(to ID, until time.Time) {
	m.get(to).backoffUntil = until
}

// InFlight reports whether some in-flight request's payload satisfies
// match.
func (m *Manager[ID, P]) InFlight(match func(P) bool) bool {
	for _, s := range m.dests {
		if s.inflight && match(s.p) {
			return true
		}
	}
	return false
}

// AnyInFlight reports whether any request is in flight.
func (m *Manager[ID, P]) AnyInFlight() bool {
	for _, s := range m.dests {
		if s.inflight {
			return true
		}
	}
	return false
}

// NextBackoffEnd is the soonest end of a backoff after now, zero when none
// runs: when a destination next becomes ready without an answer.
func (m *Manager[ID, P]) NextBackoffEnd(now time.Time) time.Time {
	var t time.Time
	for _, s := range m.dests {
		if !s.inflight && s.backoffUntil.After(now) && (t.IsZero() || s.backoffUntil.Before(t)) {
			t = s.backoffUntil
		}
	}
	return t
}
