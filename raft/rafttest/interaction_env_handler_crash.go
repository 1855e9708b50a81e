package rafttest

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// handleCrash kills nodes: each loses its unflushed log data (MemLog.Crash)
// and keeps its quorum state; what was queued to or from it vanishes, and
// peers waiting on it get a connection error.
//
// Example:
//
//	crash 2
//	----
//	> 2 crashes (log end=4 flushed=4)
func (e *InteractionEnv) handleCrash(t *testing.T, d *datadriven.TestData) {
	for _, id := range e.ids(t, d) {
		e.upNode(t, d, id).crash()
	}
}
