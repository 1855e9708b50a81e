package faults

import (
	"math/rand"
	"testing"
	"time"
)

// TestKillLeaderCycles (row 1): a handful of kill -9s of the leader under
// load, chasing the new one; each old leader restarts on its dir,
// truncates any uncommitted tail and catches up. The long run (make
// faults) does 100+.
func TestKillLeaderCycles(t *testing.T) {
	skipShort(t)
	c, _ := start(t, Options{})
	rng := rand.New(rand.NewSource(1))
	f := c.KillLeaderCycles(5, rng, 300*time.Millisecond)
	t.Logf("failover after kill -9: %s", Percentiles(f))
	finish(t, c)
}

// waitNotLeader waits until node id no longer answers as leader of epoch.
func (c *Cluster) waitNotLeader(t *testing.T, id, epoch int32) {
	t.Helper()
	deadline := time.Now().Add(LivenessBound)
	for time.Now().Before(deadline) {
		if s, leads := c.describe(id, time.Second); !leads || s.Epoch > epoch {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("node %d still leads epoch %d %v later", id, epoch, LivenessBound)
}
