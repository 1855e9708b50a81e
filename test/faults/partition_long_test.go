//go:build faults

package faults

import (
	"testing"
	"time"
)

// TestFiveVoterPartitions (rows 14, 16) on five voters: a 2/3 split with the
// leader in the minority (the majority elects and commits, the minority's
// high watermark stays frozen), the bridge (two pairs that cannot see each
// other, one node seeing all), and a leader that can send but not receive.
// After each heal all converge and nothing acked is lost.
func TestFiveVoterPartitions(t *testing.T) {
	skipShort(t)
	c, s := start(t, Options{Voters: 5, Throughput: 200})

	r := c.BeginRound("split 2/3 leader in minority")
	minority := []int32{s.Node, without(c.IDs, s.Node)[0]}
	majority := without(without(c.IDs, minority[0]), minority[1])
	if err := c.Mesh.Split(minority, majority); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	nl := c.commitDuring(t, r.Fault, s.Epoch)
	c.frozenHW(t, s.Node, s.Epoch, cut)
	t.Logf("%s: node %d leads epoch %d on the majority side", r.Fault, nl.Node, nl.Epoch)
	c.heal(t, r)

	s = c.WaitLeader(LivenessBound)
	r = c.BeginRound("bridge")
	others := without(c.IDs, s.Node) // the leader is the bridge half the time: make it a side node
	bridge := others[0]
	sides := without(c.IDs, bridge)
	if err := c.Mesh.Split(sides[:2], sides[2:]); err != nil {
		t.Fatal(err)
	}
	nl = c.commitDuring(t, r.Fault, s.Epoch-1)
	t.Logf("%s through node %d: node %d leads epoch %d", r.Fault, bridge, nl.Node, nl.Epoch)
	c.heal(t, r)

	s = c.WaitLeader(LivenessBound)
	r = c.BeginRound("one-way leader cannot receive")
	for _, f := range without(c.IDs, s.Node) {
		if err := c.Mesh.Block(f, s.Node); err != nil {
			t.Fatal(err)
		}
	}
	nl = c.commitDuring(t, r.Fault, s.Epoch)
	t.Logf("%s: leader %d deposed; node %d leads epoch %d", r.Fault, s.Node, nl.Node, nl.Epoch)
	c.waitNotLeader(t, s.Node, s.Epoch)
	c.heal(t, r)
	finish(t, c)
}

// TestLinkFaults (rows 16, 13) on three voters: a follower that cannot
// reach the leader but reaches the other follower (pre-vote keeps it from
// deposing the leader), a flapping leader link, 200 ms latency spikes on
// every link, a throttled leader and connection resets. Safety always;
// progress after each heal.
func TestLinkFaults(t *testing.T) {
	skipShort(t)
	c, s := start(t, Options{})
	f := without(c.IDs, s.Node)[0]

	r := c.BeginRound("one-way follower cut from leader")
	c.Mesh.Block(f, s.Node)
	c.Mesh.Block(s.Node, f)
	time.Sleep(4 * fetchTimeout) // the scenario: the cut held for four fetch timeouts
	if l, ok := c.latest(); ok && l.Epoch > s.Epoch+2 {
		t.Errorf("a follower cut from the leader alone drove the epoch from %d to %d (pre-vote should stop it)", s.Epoch, l.Epoch)
	}
	c.heal(t, r)

	r = c.BeginRound("flapping leader links")
	s = c.WaitLeader(LivenessBound)
	for i := 0; i < 8; i++ { // the scenario: links down 300 ms, up 400 ms
		c.Mesh.Isolate(s.Node, c.IDs)
		time.Sleep(300 * time.Millisecond)
		c.Mesh.Heal()
		time.Sleep(400 * time.Millisecond)
	}
	c.heal(t, r)

	r = c.BeginRound("latency spike 200ms")
	for _, a := range c.IDs {
		for _, b := range c.IDs {
			if a != b {
				c.Mesh.Delay(a, b, 200, 50)
			}
		}
	}
	c.commitDuring(t, r.Fault, -1)
	time.Sleep(3 * time.Second) // the scenario: the latency held
	c.heal(t, r)

	s = c.WaitLeader(LivenessBound)
	r = c.BeginRound("throttle and reset")
	for _, o := range without(c.IDs, s.Node) {
		c.Mesh.Throttle(s.Node, o, 8)
	}
	time.Sleep(2 * time.Second) // the scenario: the throttle held
	c.Mesh.Heal()
	c.Mesh.Reset(s.Node, f, 100)
	time.Sleep(2 * time.Second) // the scenario: resets for 2 s
	c.heal(t, r)
	finish(t, c)
}
