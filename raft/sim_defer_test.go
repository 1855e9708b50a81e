package raft_test

// Leadership deferral in the simulator (mix "defer"): every node runs with
// Config.DeferLeadership and learns, some time after each start, which
// voters are preferred (as kraftd learns Kafka's controllers from their
// ApiVersions answers). The seed draws the preferred set: none, all, or a
// non-empty proper subset of the voters. Every invariant of the other
// mixes holds; after the heal the converged quorum must also be led by a
// preferred voter whenever one exists (D1), so deferral neither loses
// availability nor leaves the quorum with a leader that cannot run the
// state machine.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/kraftd/kraftd/raft"
)

// drawPreferred picks the preferred voters from the seed's own stream, so
// the mix's other options are drawn as in the mixes without deferral.
func drawPreferred(seed uint64, voters int) []int32 {
	rng := rand.New(rand.NewPCG(seed, 0xdef))
	var n int
	switch rng.IntN(4) {
	case 0:
		n = 0 // nobody can lead the state machine: normal leadership
	case 1:
		n = voters // everybody can: nobody defers
	default:
		n = 1 + rng.IntN(voters-1)
	}
	ids := make([]int32, voters)
	for i := range ids {
		ids[i] = int32(i + 1)
	}
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	out := ids[:n]
	slices.Sort(out)
	return out
}

// learnPreferred tells a started node the preferred voters a little later,
// as the node layer does once its connections' ApiVersions answers arrive.
func (s *sim) learnPreferred(n *simNode) {
	if !s.m.deferral {
		return
	}
	inc := n.inc
	s.after(time.Duration(s.rng.IntN(500))*time.Millisecond, func() {
		if !n.up || n.inc != inc {
			return
		}
		s.tracef("node %d learns preferred leaders %v", n.id, s.opts.preferred)
		if err := n.drv.SetPreferredLeaders(s.nodeTime(n), s.opts.preferred); err != nil {
			s.fatal(n, "SetPreferredLeaders", err)
			return
		}
		s.chk.afterEvent(n)
		s.poll(n)
	})
}

// deferralConverged (D1): with a preferred voter in the quorum, the leader
// of the converged quorum is one.
func (c *checker) deferralConverged(leader *simNode) (bool, string) {
	pref := c.s.opts.preferred
	if !c.s.m.deferral || len(pref) == 0 || slices.Contains(pref, leader.id) {
		return true, ""
	}
	return false, fmt.Sprintf("D1: leader %d is not one of the preferred voters %v", leader.id, pref)
}

// noteDeferral counts the leaderships of deferring nodes (not preferred,
// while some voter is) and how many of them ended in a resignation.
func (s *sim) noteDeferral(n *simNode, from, to raft.Role) {
	pref := s.opts.preferred
	if !s.m.deferral || len(pref) == 0 || slices.Contains(pref, n.id) {
		return
	}
	switch {
	case to == raft.RoleLeader:
		s.stats.deferringLeads++
	case from == raft.RoleLeader && to == raft.RoleResigned:
		s.stats.deferringResigns++
	}
}
