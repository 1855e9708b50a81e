package rafttest

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// handleStabilize delivers queued messages, and what they cause, in order
// until nothing is queued. Clocks do not move: timers fire only on tick
// and advance.
//
// Example:
//
//	stabilize
//	----
//	> 1->2 Vote v2 epoch=1 candidate=1 last=0@0
//	  2 persist epoch=1 leader=none voted=none
//	  2 persist epoch=1 leader=none voted=1
//	  2->1 VoteResponse v2 epoch=1 leader=none granted=true
//	  ...
func (e *InteractionEnv) handleStabilize(t *testing.T, d *datadriven.TestData) {
	for i := 0; len(e.queue) > 0; i++ {
		if i == 10000 {
			d.Fatalf(t, "not stable after %d deliveries", i)
		}
		m := e.queue[0]
		e.queue = e.queue[1:]
		e.deliver(m)
	}
}
