package rafttest

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// handleRestart starts a new driver on a crashed node's disk; its clock
// goes on from where it was.
//
// Example:
//
//	restart 2
//	----
//	> 2 restarts (log end=4)
//	  2 persist epoch=1 leader=1 voted=1
//	  2->1 Fetch v18 replica=2/dir2 epoch=1 offset=4 last-fetched-epoch=1 hw=-1 max-wait=500ms
//	  2 is Follower epoch=1 leader=1 voted=1
//	  2 log end=4 hw=-1
func (e *InteractionEnv) handleRestart(t *testing.T, d *datadriven.TestData) {
	for _, id := range e.ids(t, d) {
		n := e.node(id)
		if n == nil || n.up {
			d.Fatalf(t, "node %d is not crashed", id)
		}
		e.printf("> %d restarts (log end=%d)", id, n.log.EndOffset().Offset)
		n.startDriver()
	}
}
