package raft

import "time"

// timer is one deadline on the injected clock, owned by the role state that
// acts on it (as Kafka's FollowerState, CandidateState and LeaderState each
// hold their own Timer). The zero timer is stopped: it never expires.
type timer struct {
	deadline time.Time // zero while stopped
}

// reset arms the timer to fire d after now.
func (t *timer) reset(now time.Time, d time.Duration) { t.deadline = now.Add(d) }

// shorten moves the deadline to d after now when that is sooner.
func (t *timer) shorten(now time.Time, d time.Duration) {
	if at := now.Add(d); at.Before(t.deadline) {
		t.deadline = at
	}
}

func (t timer) armed() bool { return !t.deadline.IsZero() }

// expired reports whether an armed timer's deadline has come.
func (t timer) expired(now time.Time) bool { return t.armed() && !now.Before(t.deadline) }

// earliest is the soonest of the given deadlines, ignoring zero ones; zero
// when all are.
func earliest(ts ...time.Time) time.Time {
	var first time.Time
	for _, t := range ts {
		if !t.IsZero() && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	return first
}
