//go:build faults

package faults

import (
	"testing"
	"time"
)

// TestFsyncStalls (row 11): every fsync of the leader takes 1.5 s for 6 s,
// then every fsync of a follower does. Leadership may move (a stalled
// leader's loop misses its fetch deadlines) but safety holds and a leader
// commits once the disk is fast again.
func TestFsyncStalls(t *testing.T) {
	skipShort(t)
	c, s := start(t, Options{})
	for _, target := range []int32{s.Node, without(c.IDs, s.Node)[0]} {
		r := c.BeginRound("stall fsync")
		c.SetDiskFaults(target, "sync delay 1500ms\n")
		time.Sleep(6 * time.Second)
		c.SetDiskFaults(target, "")
		took, ok := c.Healed(r)
		t.Logf("fsyncs of node %d stalled 1.5 s for 6 s; commit %v after (ok %v)", target, took, ok)
		if !c.Running(target) {
			t.Fatalf("node %d died of slow fsyncs", target)
		}
	}
	finish(t, c)
}
