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

// heal removes every link fault and records the recovery of round r.
func (c *Cluster) heal(t *testing.T, r *Round) {
	t.Helper()
	if err := c.Mesh.Heal(); err != nil {
		t.Fatal(err)
	}
	took, ok := c.Healed(r)
	t.Logf("%s healed: commit %v later (ok %v)", r.Fault, took, ok)
}
