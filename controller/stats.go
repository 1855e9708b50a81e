package controller

import (
	"sync/atomic"
	"time"

	"github.com/kraftd/kraftd/raft"
)

// stats are the controller's own counters behind Kafka's QuorumController
// metrics, written on the loop and read by scrapes.
type stats struct {
	// lastApplied is the last record in the image decisions are made on
	// (the working image while active, else the committed one) and
	// lastAppliedMs when it was written: the batch's timestamp on a
	// standby, the append's time on the active controller (Kafka's
	// OffsetControlManager). lastCommitted is the last committed record.
	lastApplied, lastAppliedMs, lastCommitted atomic.Int64
	// newActiveControllers counts leader changes that named a leader.
	newActiveControllers atomic.Int64
	// timedOutHeartbeats counts heartbeats that waited past their deadline;
	// operationsTimedOut every operation that did (only heartbeats have a
	// deadline); operationsStarted the requests and periodic tasks run.
	timedOutHeartbeats, operationsTimedOut, operationsStarted atomic.Int64
}

func newStats() *stats {
	s := &stats{}
	s.lastApplied.Store(-1)
	s.lastCommitted.Store(-1)
	return s
}

// committed notes a committed batch; on a standby it is also the last
// applied.
func (s *stats) committed(b raft.CommittedBatch, active bool) {
	s.lastCommitted.Store(b.LastOffset)
	if !active {
		s.lastApplied.Store(b.LastOffset)
		s.lastAppliedMs.Store(b.MaxTimestamp)
	}
}

// appended notes the active controller's append ending at last.
func (s *stats) appended(last int64, now time.Time) {
	s.lastApplied.Store(last)
	s.lastAppliedMs.Store(now.UnixMilli())
}

// loaded notes a loaded snapshot: everything before id is applied and
// committed.
func (s *stats) loaded(id raft.OffsetAndEpoch) {
	s.lastCommitted.Store(id.Offset - 1)
	s.lastApplied.Store(id.Offset - 1)
}

// deactivated: what was appended and not committed is dropped.
func (s *stats) deactivated() {
	s.lastApplied.Store(s.lastCommitted.Load())
}
