package faults

import (
	"math/rand"
	"testing"
	"time"
)

// TestMixedKillAndPause (rows 1, 18 on a mixed quorum): two kraftd nodes
// and one Kafka 4.4.0 TestRaftServer. The leader, whichever implementation,
// is killed -9 three times and then paused; the checker judges both
// implementations' logs (acks come from the kraftd leaders' journals, and
// the Kafka log counts toward their majorities).
func TestMixedKillAndPause(t *testing.T) {
	skipShort(t)
	c, _ := start(t, Options{Kafka: []int32{3}, Throughput: 200})
	mixedRounds(t, c, 3)
	finish(t, c)
}

// mixedRounds chases the leader with kill -9 n times, then stops the
// leader with SIGSTOP for longer than the fetch timeout, logging who led.
func mixedRounds(t *testing.T, c *Cluster, kills int) {
	t.Helper()
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < kills; i++ {
		s := c.WaitLeader(LivenessBound)
		if c.observable(s.Node) {
			f := c.KillLeaderCycles(1, rng, 300*time.Millisecond)
			t.Logf("kill -9 of leader %d (%s) at epoch %d: failover %s", s.Node, c.kind(s.Node), s.Epoch, Percentiles(f))
			continue
		}
		// Only Kafka nodes survive, and they answer no DescribeQuorum: the
		// victim restarts first and the clock runs from there.
		r := c.BeginRound("kill9 leader")
		r.MinEpoch = s.Epoch
		c.Kill(s.Node)
		c.Start(s.Node)
		took, ok := c.Healed(r)
		t.Logf("kill -9 of leader %d (%s) at epoch %d, restarted at once: commit %v after (ok %v)", s.Node, c.kind(s.Node), s.Epoch, took, ok)
	}
	// A pause, not a partition: Kafka 4.4 followers dial the endpoint the
	// leader advertises in BeginQuorumEpoch (its real listener), not their
	// configured voter address, so the mesh cannot cut their links.
	s := c.WaitLeader(LivenessBound)
	r := c.BeginRound("pause leader")
	r.MinEpoch = s.Epoch
	c.Pause(s.Node)
	if c.observable(s.Node) {
		nl, ok := c.waitNewLeader(s.Node, s.Epoch, LivenessBound)
		if !ok {
			t.Fatalf("no new leader within %v of pausing leader %d (%s)", LivenessBound, s.Node, c.kind(s.Node))
		}
		t.Logf("leader %d (%s) paused; node %d (%s) leads epoch %d", s.Node, c.kind(s.Node), nl.Node, c.kind(nl.Node), nl.Epoch)
	} else {
		time.Sleep(3 * fetchTimeout) // no kraftd node left to say who leads meanwhile
	}
	c.Resume(s.Node)
	took, ok := c.Healed(r)
	t.Logf("leader %d (%s) resumed: commit by a later epoch's leader %v after (ok %v)", s.Node, c.kind(s.Node), took, ok)
}

// observable reports whether a kraftd node other than victim runs: only
// kraftd nodes tell the sampler who leads.
func (c *Cluster) observable(victim int32) bool {
	for _, id := range c.IDs {
		if id != victim && !c.nodes[id].kafka && c.Running(id) {
			return true
		}
	}
	return false
}
