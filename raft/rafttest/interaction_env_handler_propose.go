package rafttest

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// handlePropose appends records (each argument after the node id, as text)
// on the leader through Driver.Append in its current epoch. Every propose
// is its own batch (linger 0); a node that does not lead prints the error.
//
// Example:
//
//	propose 1 a
//	----
//	> 1 appends a in epoch 1
//	  1->2 FetchResponse v18 leader=1 epoch=1 hw=1 batches=[1..1@1 a]
//	  1->3 FetchResponse v18 leader=1 epoch=1 hw=1 batches=[1..1@1 a]
//	  1 append: last offset 1
//	  1 log end=2 hw=1
func (e *InteractionEnv) handlePropose(t *testing.T, d *datadriven.TestData) {
	n := e.upNode(t, d, e.firstID(t, d))
	var recs [][]byte
	for _, a := range d.CmdArgs[1:] {
		recs = append(recs, []byte(a.Key))
	}
	st := n.drv.Status()
	e.printf("> %d appends %s in epoch %d", n.id, describeRecords(false, recs), st.Epoch)
	last, err := n.drv.Append(n.now, st.Epoch, recs)
	if err != nil {
		e.effect("%d append: %v", n.id, err)
	} else {
		e.effect("%d append: last offset %d", n.id, last)
	}
	n.poll()
}
