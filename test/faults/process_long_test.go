//go:build faults

package faults

import (
	"math/rand"
	"testing"
	"time"
)

// TestPauseLeader (row 18): SIGSTOP of the leader for three fetch timeouts.
// The others elect a new leader; on SIGCONT the old leader learns the
// higher epoch and steps down; nothing it acknowledged is lost, and it
// acknowledges nothing from its stale epoch that the majority lacks.
func TestPauseLeader(t *testing.T) {
	skipShort(t)
	c, s := start(t, Options{})
	r := c.BeginRound("pause leader")
	c.Pause(s.Node)
	nl, ok := c.waitNewLeader(s.Node, s.Epoch, LivenessBound)
	if !ok {
		t.Fatalf("no new leader within %v of pausing leader %d", LivenessBound, s.Node)
	}
	time.Sleep(max(0, 3*fetchTimeout-time.Since(r.Start))) // the scenario: paused for three fetch timeouts
	c.Resume(s.Node)
	took, _ := c.Healed(r)
	t.Logf("node %d led epoch %d while %d was stopped; commit %v after SIGCONT", nl.Node, nl.Epoch, s.Node, took)
	c.waitNotLeader(t, s.Node, s.Epoch)
	finish(t, c)
}

// TestTermLeaderAndDuringElection (row 32): SIGTERM of the leader hands
// over (EndQuorumEpoch): a successor commits and the old leader exits 0
// within its shutdown bound. Then a kill -9 of the new leader and, while
// the last two elect, a SIGTERM of one of them: it still exits 0 in time,
// and once both are back a leader commits and nothing acked is lost.
func TestTermLeaderAndDuringElection(t *testing.T) {
	skipShort(t)
	c, s := start(t, Options{})
	r := c.BeginRound("sigterm leader")
	r.MinEpoch = s.Epoch
	c.Term(s.Node)
	took, ok := c.Healed(r)
	t.Logf("failover after SIGTERM of leader %d: %v (ok %v)", s.Node, took, ok)
	c.expectCleanExit(t, s.Node)
	c.Start(s.Node)

	s2 := c.WaitLeader(LivenessBound)
	r = c.BeginRound("sigterm during election")
	c.Kill(s2.Node)
	rest := without(c.IDs, s2.Node)
	c.Kill(rest[0])
	// Alone, the last node times out on its leader and campaigns in vain.
	last := rest[1]
	deadline := time.Now().Add(LivenessBound)
	for role := ""; role != "Prospective" && role != "Candidate"; role = c.lastStats(last).Role {
		if time.Now().After(deadline) {
			t.Fatalf("node %d never campaigned (role %s)", last, role)
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.Term(last)
	c.expectCleanExit(t, last)
	c.StartAll()
	took, ok = c.Healed(r)
	t.Logf("commit %v after restarting all (ok %v)", took, ok)
	finish(t, c)
}

// TestAllKilledMajorityRestarts (row 2, PROC): every node is killed -9 at
// once, then only two of three restart: they elect a leader and commit
// above the old high watermark; the third joins later and catches up.
func TestAllKilledMajorityRestarts(t *testing.T) {
	skipShort(t)
	c, s := start(t, Options{})
	c.commitDuring(t, "commits before the kills", -1)
	r := c.BeginRound("kill9 all")
	for _, id := range c.IDs {
		c.Kill(id)
	}
	down := c.IDs[0]
	if down == s.Node {
		down = c.IDs[1] // keep the old leader among the restarted ones half the time
	}
	for _, id := range without(c.IDs, down) {
		c.Start(id)
	}
	took, ok := c.Healed(r)
	t.Logf("majority (without node %d) commits %v after restart (ok %v)", down, took, ok)
	c.Start(down)
	finish(t, c)
}

// expectCleanExit: a SIGTERMed node exits 0 within its shutdown bound (5 s)
// plus slack.
func (c *Cluster) expectCleanExit(t *testing.T, id int32) {
	t.Helper()
	if !c.WaitExit(id, 5*time.Second+LivenessBound) {
		t.Fatalf("node %d did not exit after SIGTERM", id)
	}
	if err := c.ExitErr(id); err != nil {
		t.Fatalf("node %d exited with %v after SIGTERM", id, err)
	}
}

// TestQuorumStateWriteCrashes (row 4, PROC): every node's quorum-state
// fsyncs and renames are slowed by 40 ms each, so elections spend much of their time
// writing votes; the leader is killed -9 and, while the others elect, one
// of them too, five times. Every restart must find the old or the new
// state (a node that cannot read its quorum-state refuses to start), and
// no node ever leads at a lower epoch than before (S2). (With 150 ms each,
// a vote costs more than half an election timeout and elections churn for
// 15-35 s before one sticks: slow quorum-state disks cost liveness.)
func TestQuorumStateWriteCrashes(t *testing.T) {
	skipShort(t)
	c, _ := start(t, Options{})
	for _, id := range c.IDs {
		c.SetDiskFaults(id, "sync delay 40ms quorum-state\nrename delay 40ms quorum-state\n")
	}
	rng := rand.New(rand.NewSource(4))
	for i := 0; i < 5; i++ {
		s := c.WaitLeader(LivenessBound)
		r := c.BeginRound("kill9 during vote write")
		c.Kill(s.Node)
		// The scenario: the second kill lands at a random point of the election and its
		// quorum-state writes.
		time.Sleep(fetchTimeout + time.Duration(rng.Intn(600))*time.Millisecond)
		second := pick(rng, without(c.IDs, s.Node))
		c.Kill(second)
		c.Start(s.Node)
		c.Start(second)
		took, ok := c.Healed(r)
		t.Logf("round %d: killed %d, then %d mid-election; commit %v after restart (ok %v)", r.N, s.Node, second, took, ok)
		for _, id := range []int32{s.Node, second} {
			if !c.Running(id) {
				t.Fatalf("node %d did not start again: %v", id, c.ExitErr(id))
			}
		}
	}
	finish(t, c)
}
