package rafttest

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// handleShutdown begins the node's graceful shutdown (Driver.Shutdown);
// "shutdown complete" is printed when the driver is done.
//
// Example:
//
//	shutdown 2
//	----
//	> 2 shuts down
//	  2 begins shutdown
//	  2->1 FetchResponse v18 err=NOT_LEADER_OR_FOLLOWER leader=2 epoch=2 hw=-1
//	  ...
func (e *InteractionEnv) handleShutdown(t *testing.T, d *datadriven.TestData) {
	n := e.upNode(t, d, e.firstID(t, d))
	e.printf("> %d shuts down", n.id)
	n.drv.Shutdown(n.now)
	n.poll()
}
