package faults

import (
	"math/rand"
	"time"
)

// KillLeaderCycles kills the committing leader with SIGKILL n times,
// chasing each new one: every kill is a round whose recovery (L1: the two
// survivors are a majority, so the clock runs from the kill) is the
// failover time; the victim restarts on its dir after a random pause of up
// to maxDown. It returns the failover times.
func (c *Cluster) KillLeaderCycles(n int, rng *rand.Rand, maxDown time.Duration) []time.Duration {
	c.t.Helper()
	var failovers []time.Duration
	for i := 0; i < n; i++ {
		s := c.WaitLeader(LivenessBound)
		r := c.BeginRound("kill9 leader")
		r.MinEpoch = s.Epoch
		c.Kill(s.Node)
		took, ok := c.Healed(r)
		if ok {
			failovers = append(failovers, took)
		}
		if maxDown > 0 {
			time.Sleep(time.Duration(rng.Int63n(int64(maxDown))))
		}
		c.Start(s.Node)
	}
	return failovers
}
