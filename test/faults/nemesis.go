package faults

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"time"
)

// A nemesis fault: it injects on c (leader is the committing leader's
// sample), keeps the fault for about hold, heals it, and returns the round.
// The sleeps of these faults are their holds: the scenario itself, waited
// out on purpose; recovery is then waited for on a condition (Healed).
type nemesis struct {
	name   string
	weight int
	run    func(c *Cluster, leader Sample, rng *rand.Rand, hold time.Duration) *Round
}

// nemeses are the faults of the seeded long run on three voters, each
// round one of them, chosen by weight (kill -9 of the leader dominates so a
// run of an hour chases it well over 100 times).
var nemeses = []nemesis{
	{"kill9-leader", 6, func(c *Cluster, s Sample, rng *rand.Rand, hold time.Duration) *Round {
		r := c.BeginRound("kill9 leader")
		r.MinEpoch = s.Epoch
		c.Kill(s.Node)
		c.downAndBack(r, s.Node, func() { time.Sleep(hold / 2) })
		return r
	}},
	{"kill9-follower", 2, func(c *Cluster, s Sample, rng *rand.Rand, hold time.Duration) *Round {
		f := pick(rng, without(c.IDs, s.Node))
		r := c.BeginRound(fmt.Sprintf("kill9 follower %d", f))
		c.Kill(f)
		time.Sleep(hold)
		c.Start(f)
		c.Healed(r)
		return r
	}},
	{"pause-leader", 2, func(c *Cluster, s Sample, rng *rand.Rand, hold time.Duration) *Round {
		r := c.BeginRound("pause leader")
		c.Pause(s.Node)
		time.Sleep(hold + fetchTimeout)
		c.Resume(s.Node)
		c.Healed(r)
		return r
	}},
	{"isolate-leader", 2, func(c *Cluster, s Sample, rng *rand.Rand, hold time.Duration) *Round {
		r := c.BeginRound("isolate leader")
		c.Mesh.Isolate(s.Node, c.IDs)
		time.Sleep(hold + fetchTimeout)
		c.Mesh.Heal()
		c.Healed(r)
		return r
	}},
	{"one-way-leader", 1, func(c *Cluster, s Sample, rng *rand.Rand, hold time.Duration) *Round {
		r := c.BeginRound("one-way leader cannot receive")
		for _, f := range without(c.IDs, s.Node) {
			c.Mesh.Block(f, s.Node)
		}
		time.Sleep(hold + fetchTimeout)
		c.Mesh.Heal()
		c.Healed(r)
		return r
	}},
	{"flap-leader", 1, func(c *Cluster, s Sample, rng *rand.Rand, hold time.Duration) *Round {
		r := c.BeginRound("flapping leader links")
		for end := time.Now().Add(hold); time.Now().Before(end); {
			c.Mesh.Isolate(s.Node, c.IDs)
			time.Sleep(time.Duration(100+rng.Intn(400)) * time.Millisecond)
			c.Mesh.Heal()
			time.Sleep(time.Duration(100+rng.Intn(400)) * time.Millisecond)
		}
		c.Healed(r)
		return r
	}},
	{"latency", 1, func(c *Cluster, s Sample, rng *rand.Rand, hold time.Duration) *Round {
		r := c.BeginRound("latency spike 200ms")
		for _, a := range c.IDs {
			for _, b := range c.IDs {
				if a != b {
					c.Mesh.Delay(a, b, 200, 50)
				}
			}
		}
		time.Sleep(hold)
		c.Mesh.Heal()
		c.Healed(r)
		return r
	}},
	{"stall-fsync", 1, func(c *Cluster, s Sample, rng *rand.Rand, hold time.Duration) *Round {
		n := pick(rng, c.kraftdIDs())
		r := c.BeginRound(fmt.Sprintf("stall fsync node %d", n))
		c.SetDiskFaults(n, fmt.Sprintf("sync delay %dms\n", 1000+rng.Intn(2000)))
		time.Sleep(hold + 2*time.Second)
		c.SetDiskFaults(n, "")
		c.Healed(r)
		return r
	}},
	{"eio-fsync", 1, func(c *Cluster, s Sample, rng *rand.Rand, hold time.Duration) *Round {
		return c.diskFailStop(rng, "eio fsync", "sync error EIO\n")
	}},
	{"enospc-write", 1, func(c *Cluster, s Sample, rng *rand.Rand, hold time.Duration) *Round {
		return c.diskFailStop(rng, "enospc write", "write error ENOSPC\n")
	}},
	{"power-loss-leader", 1, func(c *Cluster, s Sample, rng *rand.Rand, hold time.Duration) *Round {
		return c.powerLossRound(rng, "power loss leader", s.Node)
	}},
	{"power-loss-all", 1, func(c *Cluster, s Sample, rng *rand.Rand, hold time.Duration) *Round {
		return c.powerLossRound(rng, "power loss all", c.IDs...)
	}},
	{"sigterm-leader", 1, func(c *Cluster, s Sample, rng *rand.Rand, hold time.Duration) *Round {
		r := c.BeginRound("sigterm leader")
		r.MinEpoch = s.Epoch
		c.Term(s.Node)
		c.downAndBack(r, s.Node, func() {
			if !c.WaitExit(s.Node, LivenessBound) {
				c.t.Errorf("round %d: leader %d still runs %v after SIGTERM", r.N, s.Node, LivenessBound)
			}
		})
		return r
	}},
}

// downAndBack records r's recovery from the leader id's stop and restarts
// it once down has returned (a pause, or its exit): the recovery counts
// from the stop while another node runs to report it (the two others are a
// majority; the handover may finish before a graceful exit does), else
// (only Kafka TestRaftServers left, which answer no DescribeQuorum) from
// the restart.
func (c *Cluster) downAndBack(r *Round, id int32, down func()) {
	if c.observable(id) {
		c.Healed(r)
		down()
		c.Start(id)
		return
	}
	down()
	c.Start(id)
	c.Healed(r)
}

// powerLossRound slows every kraftd node's fsyncs so each has an
// unflushed tail, then cuts the power of ids (PowerLoss) and restarts them.
func (c *Cluster) powerLossRound(rng *rand.Rand, what string, ids ...int32) *Round {
	for _, id := range c.kraftdIDs() {
		c.SetDiskFaults(id, "sync delay 150ms\n")
	}
	time.Sleep(time.Second) // the scenario: appends run ahead of the slowed fsyncs
	r := c.BeginRound(what)
	cuts := c.PowerLoss(rng, ids...)
	for _, id := range c.kraftdIDs() {
		c.SetDiskFaults(id, "")
	}
	for _, id := range ids {
		c.Start(id)
	}
	c.Healed(r)
	c.t.Logf("round %d: %v", r.N, cuts)
	return r
}

// diskFailStop injects rules on a random kraftd node, which must stop; it then
// clears them and restarts the node. A node still running after the bound
// is a fail-stop violation, reported through the round's fault text.
func (c *Cluster) diskFailStop(rng *rand.Rand, what, rules string) *Round {
	n := pick(rng, c.kraftdIDs())
	r := c.BeginRound(fmt.Sprintf("%s node %d", what, n))
	c.SetDiskFaults(n, rules)
	if !c.WaitExit(n, LivenessBound) {
		c.t.Errorf("round %d: node %d still runs %v after %q", r.N, n, LivenessBound, strings.TrimSpace(rules))
	} else if c.ExitErr(n) == nil {
		c.t.Errorf("round %d: node %d exited 0 after %q", r.N, n, strings.TrimSpace(rules))
	}
	c.SetDiskFaults(n, "")
	c.Start(n)
	c.Healed(r)
	return r
}

func pick(rng *rand.Rand, ids []int32) int32 { return ids[rng.Intn(len(ids))] }

// chooseNemesis picks a fault by weight.
func chooseNemesis(rng *rand.Rand) nemesis {
	total := 0
	for _, n := range nemeses {
		total += n.weight
	}
	x := rng.Intn(total)
	for _, n := range nemeses {
		if x < n.weight {
			return n
		}
		x -= n.weight
	}
	return nemeses[0]
}

// RunReport sums up a seeded run.
type RunReport struct {
	Seed       int64
	Rounds     int
	ByKind     map[string]int
	Kills      int
	Failovers  []time.Duration
	Violations int
	// Dropped and Torn: bytes the power losses cut off, and torn tails
	// the nodes truncated at start-up.
	Dropped int64
	Torn    int
}

func (r RunReport) String() string {
	var ks []string
	for k, n := range r.ByKind {
		ks = append(ks, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(ks)
	return fmt.Sprintf("seed %d: %d rounds (%s); kill -9 cycles %d; failover after kill -9 of the leader: %s; power loss dropped %d bytes, %d torn tails truncated; violations %d",
		r.Seed, r.Rounds, strings.Join(ks, " "), r.Kills, Percentiles(r.Failovers), r.Dropped, r.Torn, r.Violations)
}

// RunNemesis runs seeded fault rounds on c until d has passed, checking the
// history after every checkEvery rounds and at the end.
func (c *Cluster) RunNemesis(seed int64, d time.Duration, checkEvery int) RunReport {
	rng := rand.New(rand.NewSource(seed))
	rep := RunReport{Seed: seed, ByKind: map[string]int{}}
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		s := c.WaitLeader(LivenessBound)
		n := chooseNemesis(rng)
		hold := time.Duration(500+rng.Intn(2500)) * time.Millisecond
		r := n.run(c, s, rng, hold)
		rep.Rounds++
		rep.ByKind[n.name]++
		if strings.HasPrefix(n.name, "kill9") {
			rep.Kills++
		}
		if n.name == "kill9-leader" && !r.Recovered.IsZero() {
			rep.Failovers = append(rep.Failovers, r.Recovered.Sub(r.Healed))
		}
		c.t.Logf("round %d: %s (leader %d, epoch %d, held %v): %s", r.N, r.Fault, s.Node, s.Epoch, hold, recovery(r))
		if rep.Rounds%checkEvery == 0 {
			rep.Violations += c.checkRound()
		}
	}
	c.WaitCaughtUp(LivenessBound)
	rep.Violations += c.checkRound()
	c.mu.Lock()
	rep.Dropped = c.dropped
	c.mu.Unlock()
	for _, id := range c.kraftdIDs() {
		rep.Torn += c.logCount(id, tornTail)
	}
	if h, err := c.History(); err == nil {
		c.t.Logf("history: %s", Summary(h))
	}
	return rep
}

func recovery(r *Round) string {
	if r.Recovered.IsZero() {
		return "no commit after the heal"
	}
	return fmt.Sprintf("commit %v after the heal", r.Recovered.Sub(r.Healed).Round(time.Millisecond))
}

// checkRound runs the checker, reports each violation not reported by an
// earlier check (every check sees the whole history) and returns their
// count.
func (c *Cluster) checkRound() int {
	h, err := c.History()
	if err != nil {
		c.t.Errorf("read history: %v", err)
		return 1
	}
	c.mu.Lock()
	round := c.round
	c.mu.Unlock()
	fresh := 0
	for _, v := range Check(h, round) {
		key := fmt.Sprintf("%s/%d/%d/%s", v.Kind, v.Node, v.Offset, v.Detail)
		if c.reported[key] {
			continue
		}
		c.reported[key] = true
		fresh++
		c.t.Errorf("violation: %v", v)
	}
	return fresh
}
