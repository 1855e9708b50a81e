package rafttest

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// handleResign asks the node to give up leadership of its current epoch
// (Driver.Resign): a leader answers its parked fetches, sends
// EndQuorumEpoch and becomes Resigned.
//
// Example:
//
//	resign 1
//	----
//	> 1 resigns epoch 1
//	  1->2 FetchResponse v18 err=NOT_LEADER_OR_FOLLOWER leader=1 epoch=1 hw=-1
//	  1->3 FetchResponse v18 err=NOT_LEADER_OR_FOLLOWER leader=1 epoch=1 hw=-1
//	  1->2 EndQuorumEpoch v1 epoch=1 leader=1 successors=[2 3]
//	  1->3 EndQuorumEpoch v1 epoch=1 leader=1 successors=[2 3]
//	  1 is Resigned epoch=1 leader=1 voted=1
func (e *InteractionEnv) handleResign(t *testing.T, d *datadriven.TestData) {
	n := e.upNode(t, d, e.firstID(t, d))
	e.printf("> %d resigns epoch %d", n.id, n.drv.Status().Epoch)
	if err := n.drv.Resign(n.now, n.drv.Status().Epoch); err != nil {
		e.effect("%d resign: %v", n.id, err)
	}
	n.poll()
}
