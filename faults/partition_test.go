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
