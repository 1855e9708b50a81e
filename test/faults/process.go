package faults

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
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
			time.Sleep(time.Duration(rng.Int63n(int64(maxDown)))) // the scenario: down for a random time
		}
		c.Start(s.Node)
	}
	return failovers
}

// PeakRSS is node id's peak resident set size in bytes (VmHWM of its
// running process).
func (c *Cluster) PeakRSS(id int32) (int64, error) {
	nd := c.nodes[id]
	nd.mu.Lock()
	pid := nd.cmd.Process.Pid
	nd.mu.Unlock()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("node %d: no VmHWM in /proc/%d/status", id, pid)
}
