package rafttest

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// handleStatus prints each given node's (every node's when none is given)
// quorum view and what its quorum-state file holds.
//
// Example:
//
//	status 2
//	----
//	2 Follower epoch=1 leader=1 voted=1 hw=4 end=4; persisted epoch=1 leader=1 voted=1
func (e *InteractionEnv) handleStatus(t *testing.T, d *datadriven.TestData) {
	ids := e.ids(t, d)
	if len(ids) == 0 {
		for _, n := range e.nodes {
			ids = append(ids, n.id)
		}
	}
	for _, id := range ids {
		n := e.node(id)
		if n == nil {
			d.Fatalf(t, "no node %d", id)
		}
		e.printStatus(n)
	}
}

func (e *InteractionEnv) printStatus(n *envNode) {
	st, _ := n.store.State()
	if !n.up {
		e.printf("%d down; persisted epoch=%d leader=%s voted=%s", n.id, st.Epoch, idName(st.LeaderID), idName(st.VotedID))
		return
	}
	s := n.drv.Status()
	e.printf("%d %s epoch=%d leader=%s voted=%s hw=%d end=%d; persisted epoch=%d leader=%s voted=%s",
		n.id, s.Role, s.Epoch, idName(s.LeaderID), idName(s.VotedID), s.HighWatermark, s.LogEndOffset,
		st.Epoch, idName(st.LeaderID), idName(st.VotedID))
}
