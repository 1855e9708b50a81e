package rafttest

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// handlePrefer tells nodes which voters can lead the state machine
// (Driver.SetPreferredLeaders): with defer, the others hand leadership to
// them.
//
// Example:
//
//	prefer 1 2 leaders=(2)
//	----
//	> 1 prefers leaders [2]
//	> 2 prefers leaders [2]
func (e *InteractionEnv) handlePrefer(t *testing.T, d *datadriven.TestData) {
	var leaders, ids []int32
	for _, a := range d.CmdArgs {
		if a.Key == "leaders" {
			for _, v := range a.Vals {
				leaders = append(leaders, e.parseID(t, d, v))
			}
			continue
		}
		ids = append(ids, e.parseID(t, d, a.Key))
	}
	for _, id := range ids {
		n := e.upNode(t, d, id)
		e.printf("> %d prefers leaders %v", id, leaders)
		if err := n.drv.SetPreferredLeaders(n.now, leaders); err != nil {
			e.effect("%d prefer: %v", id, err)
		}
		n.poll()
	}
}
