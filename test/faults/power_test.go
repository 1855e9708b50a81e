package faults

import (
	"math/rand"
	"testing"
)

// TestPowerLoss (rows 3 and 5, and 2 with every node down): the leader
// loses power and restarts without its unflushed tail; then, three times,
// every node loses power at once and all restart, each file cut back at
// random to no less than its size at the last fsync (torn batches
// included). Every fsync is slowed by 150 ms first, so each node has an
// unflushed tail when the power goes. Nothing acknowledged may be lost: an ack means a majority had
// fsynced the batch, and a leader counts itself only at its flushed offset.
func TestPowerLoss(t *testing.T) {
	skipShort(t)
	c, _ := start(t, Options{})
	rng := rand.New(rand.NewSource(5))
	for i := 0; i < 4; i++ {
		s := c.WaitLeader(LivenessBound)
		victims, what := []int32{s.Node}, "power loss leader"
		if i > 0 {
			victims, what = c.IDs, "power loss all"
		}
		r := c.powerLossRound(rng, what, victims...)
		t.Logf("round %d: %s at epoch %d: %s", r.N, what, s.Epoch, recovery(r))
	}
	finish(t, c)
	torn := 0
	for _, id := range c.IDs {
		torn += c.logCount(id, tornTail)
	}
	t.Logf("%d bytes dropped, %d torn tails truncated at start-up", c.dropped, torn)
	if c.dropped == 0 || torn == 0 {
		t.Errorf("the power losses dropped %d bytes and tore %d tails: rows 3 and 5 were not exercised", c.dropped, torn)
	}
}
