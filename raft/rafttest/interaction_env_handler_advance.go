package rafttest

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// handleAdvance moves every node's clock (a down node's too) and polls the
// running ones, in id order.
//
// Example:
//
//	advance 500ms
//	----
//	> 1 ticks 500ms (t=3s)
//	  1->2 FetchResponse v18 leader=1 epoch=1 hw=1
//	  1->3 BeginQuorumEpoch v1 epoch=1 leader=1
//	> 2 ticks 500ms (t=1s)
//	> 3 ticks 500ms (t=1s)
func (e *InteractionEnv) handleAdvance(t *testing.T, d *datadriven.TestData) {
	_, dur := e.idsAndDuration(t, d)
	for _, n := range e.nodes {
		n.now = n.now.Add(dur)
		if n.up {
			e.printf("> %d ticks %v (t=%v)", n.id, dur, n.now.Sub(e.start))
			n.poll()
		}
	}
}
