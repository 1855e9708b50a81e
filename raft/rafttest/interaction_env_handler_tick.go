package rafttest

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// handleTick moves the clocks of the given nodes and polls each: their
// timers fire (elections, fetch timeouts, BeginQuorumEpoch, parked
// fetches' MaxWaitMs). Each node has a clock of its own.
//
// Example:
//
//	tick 1 2s
//	----
//	> 1 ticks 2s (t=2s)
//	  1 is Prospective epoch=0 leader=none voted=none
//	  1->2 Vote v2 epoch=0 candidate=1 last=0@0 pre-vote
//	  ...
func (e *InteractionEnv) handleTick(t *testing.T, d *datadriven.TestData) {
	ids, dur := e.idsAndDuration(t, d)
	for _, id := range ids {
		n := e.upNode(t, d, id)
		n.now = n.now.Add(dur)
		e.printf("> %d ticks %v (t=%v)", id, dur, n.now.Sub(e.start))
		n.poll()
	}
}
