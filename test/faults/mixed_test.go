package faults

import (
	"math/rand"
	"testing"
	"time"
)

// TestMixedKillPauseIsolate (rows 1, 13, 16, 18 on a mixed quorum): two
// kraftd nodes and one Kafka 4.4.0 TestRaftServer. The leader, whichever
// implementation, is killed -9 three times, paused, isolated and cut off
// one way; the checker judges both implementations' logs (acks come from
// the kraftd leaders' journals, and the Kafka log counts toward their
// majorities).
func TestMixedKillPauseIsolate(t *testing.T) {
	skipShort(t)
	c, _ := start(t, Options{Kafka: []int32{3}, Throughput: 200})
	mixedRounds(t, c, 3)
	finish(t, c)
	c.CompareWithKafkaDump()
}

// mixedRounds runs the named nemesis faults on c: kill -9 of the leader
// kills times, then a pause, an isolation and a one-way cut of the leader.
func mixedRounds(t *testing.T, c *Cluster, kills int) {
	t.Helper()
	rng := rand.New(rand.NewSource(3))
	faults := []string{"pause-leader", "isolate-leader", "one-way-leader"}
	for i := 0; i < kills; i++ {
		faults = append([]string{"kill9-leader"}, faults...)
	}
	for _, name := range faults {
		s := c.WaitLeader(LivenessBound)
		r := nemesisNamed(t, name).run(c, s, rng, time.Second)
		t.Logf("round %d: %s of leader %d (%s) at epoch %d: %s", r.N, r.Fault, s.Node, c.kind(s.Node), s.Epoch, recovery(r))
	}
}

func nemesisNamed(t *testing.T, name string) nemesis {
	for _, n := range nemeses {
		if n.name == name {
			return n
		}
	}
	t.Fatalf("no nemesis %q", name)
	return nemesis{}
}
