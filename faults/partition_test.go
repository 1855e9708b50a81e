package faults

import (
	"testing"
	"time"
)

// TestLeaderIsolated (fault matrix row 13): the leader is cut off from both
// followers in both directions. The majority elects a new leader and
// commits; the isolated leader resigns (check-quorum) and, once healed,
// follows and truncates its uncommitted tail; nothing acknowledged is lost.
func TestLeaderIsolated(t *testing.T) {
	skipShort(t)
	c, s := start(t, Options{})
	r := c.BeginRound("isolate leader")
	if err := c.Mesh.Isolate(s.Node, c.IDs); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	nl, ok := c.waitNewLeader(s.Node, s.Epoch, LivenessBound)
	if !ok {
		t.Fatalf("no new leader within %v of isolating leader %d", LivenessBound, s.Node)
	}
	t.Logf("leader %d isolated at epoch %d; node %d leads epoch %d after %v", s.Node, s.Epoch, nl.Node, nl.Epoch, time.Since(cut).Round(time.Millisecond))
	// L2: the isolated leader stops answering as leader.
	deadline := time.Now().Add(LivenessBound)
	for {
		if _, leads := c.describe(s.Node, time.Second); !leads {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("isolated leader %d still leads %v after the cut", s.Node, LivenessBound)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("isolated leader %d resigned %v after the cut", s.Node, time.Since(cut).Round(time.Millisecond))
	if err := c.Mesh.Heal(); err != nil {
		t.Fatal(err)
	}
	took, ok := c.Healed(r)
	t.Logf("commit %v after the heal (ok %v)", took, ok)
	finish(t, c)
}

// commitDuring waits up to LivenessBound, while a fault is in place, for a
// leader of an epoch above minEpoch to commit above every earlier high
// watermark: the side with a majority makes progress.
func (c *Cluster) commitDuring(t *testing.T, what string, minEpoch int32) Sample {
	t.Helper()
	before := c.maxHW()
	deadline := time.Now().Add(LivenessBound)
	for time.Now().Before(deadline) {
		if s, ok := c.latest(); ok && s.Epoch > minEpoch && s.HW > before {
			return s
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: no leader above epoch %d committed within %v", what, minEpoch, LivenessBound)
	return Sample{}
}

// frozenHW checks that node id, cut off from a majority at cut, reports no
// high watermark above what it reported 1 s after the cut (in-flight
// fetches may still land in that first second) while it still leads epoch.
func (c *Cluster) frozenHW(t *testing.T, id, epoch int32, cut time.Time) {
	t.Helper()
	settle := cut.Add(time.Second)
	frozen := int64(-1)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.samples {
		if s.Node != id || s.Epoch != epoch || s.At.Before(cut) {
			continue
		}
		if s.At.Before(settle) {
			frozen = max(frozen, s.HW)
		} else if frozen >= 0 && s.HW > frozen {
			t.Errorf("minority leader %d raised its high watermark to %d (from %d) with no majority", id, s.HW, frozen)
			return
		}
	}
}

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

// heal removes every link fault and records the recovery of round r.
func (c *Cluster) heal(t *testing.T, r *Round) {
	t.Helper()
	if err := c.Mesh.Heal(); err != nil {
		t.Fatal(err)
	}
	took, ok := c.Healed(r)
	t.Logf("%s healed: commit %v later (ok %v)", r.Fault, took, ok)
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
	time.Sleep(4 * fetchTimeout)
	if l, ok := c.latest(); ok && l.Epoch > s.Epoch+2 {
		t.Errorf("a follower cut from the leader alone drove the epoch from %d to %d (pre-vote should stop it)", s.Epoch, l.Epoch)
	}
	c.heal(t, r)

	r = c.BeginRound("flapping leader links")
	s = c.WaitLeader(LivenessBound)
	for i := 0; i < 8; i++ {
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
	time.Sleep(3 * time.Second)
	c.heal(t, r)

	s = c.WaitLeader(LivenessBound)
	r = c.BeginRound("throttle and reset")
	for _, o := range without(c.IDs, s.Node) {
		c.Mesh.Throttle(s.Node, o, 8)
	}
	time.Sleep(2 * time.Second)
	c.Mesh.Heal()
	c.Mesh.Reset(s.Node, f, 100)
	time.Sleep(2 * time.Second)
	c.heal(t, r)
	finish(t, c)
}
