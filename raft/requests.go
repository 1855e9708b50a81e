package raft

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// pending is the single in-flight request to one destination.
type pending struct {
	to      NodeID
	corr    uint64
	key     kmsg.Key
	preVote bool
	epoch   Epoch // local epoch when sent
}

// destState: a destination is ready, in flight (one request) or backing
// off. Request timeouts are the transport's: it answers every Outbound.
type destState struct {
	inflight     bool
	p            pending
	backoffUntil time.Time
}

// requestManager tracks destinations. Every state transition resets it, so
// responses to requests sent in an older state are ignored.
// Invariant: at most one Fetch or FetchSnapshot is in flight in total.
type requestManager struct {
	dests map[NodeID]*destState
	gen   uint64 // bumped by reset
}

func (m *requestManager) init() { m.dests = map[NodeID]*destState{} }

func (m *requestManager) reset() {
	clear(m.dests)
	m.gen++
}

func (m *requestManager) get(to NodeID) *destState {
	s := m.dests[to]
	if s == nil {
		s = &destState{}
		m.dests[to] = s
	}
	return s
}

func (m *requestManager) ready(to NodeID, now time.Time) bool {
	s := m.dests[to]
	return s == nil || !s.inflight && !now.Before(s.backoffUntil)
}

func (m *requestManager) backingOff(to NodeID, now time.Time) bool {
	s := m.dests[to]
	return s != nil && !s.inflight && now.Before(s.backoffUntil)
}

func (m *requestManager) sent(to NodeID, corr uint64, key kmsg.Key, preVote bool, epoch Epoch) {
	s := m.get(to)
	s.inflight = true
	s.p = pending{to: to, corr: corr, key: key, preVote: preVote, epoch: epoch}
	s.backoffUntil = time.Time{}
}

// take consumes the in-flight request matching (from, corr).
func (m *requestManager) take(from NodeID, corr uint64) (pending, bool) {
	s := m.dests[from]
	if s == nil || !s.inflight || s.p.corr != corr {
		return pending{}, false
	}
	s.inflight = false
	return s.p, true
}

func (m *requestManager) backoff(to NodeID, until time.Time) {
	m.get(to).backoffUntil = until
}

// fetchInFlight reports whether any Fetch or FetchSnapshot is outstanding.
func (m *requestManager) fetchInFlight() bool {
	for _, s := range m.dests {
		if s.inflight && (s.p.key == kmsg.Fetch || s.p.key == kmsg.FetchSnapshot) {
			return true
		}
	}
	return false
}

func (m *requestManager) anyInFlight() bool {
	for _, s := range m.dests {
		if s.inflight {
			return true
		}
	}
	return false
}

func (m *requestManager) nextBackoffEnd(now time.Time) time.Time {
	var t time.Time
	for _, s := range m.dests {
		if !s.inflight && s.backoffUntil.After(now) && (t.IsZero() || s.backoffUntil.Before(t)) {
			t = s.backoffUntil
		}
	}
	return t
}
