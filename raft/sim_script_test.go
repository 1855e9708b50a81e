package raft_test

// Scripted simulator scenarios (testdata/sim/*.txt, cockroachdb/datadriven):
// Kafka's RaftEventSimulationTest scenarios written as readable scripts.
// Each file runs for several seeds; outputs name no node ids or timings,
// so the same expected output holds for every seed, and every invariant of
// the random simulator is checked after every event here too.

import (
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/kraftd/kraftd/raft"
)

var simScriptSeeds = flag.Int("sim.script-seeds", 0, "seeds per scripted scenario (0: 10, or 2 under -race: see defaultSeeds)")

func TestSimScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/sim/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files in testdata/sim: %v", err)
	}
	seeds := *simScriptSeeds
	if seeds <= 0 {
		seeds = 10
		if raceDetector {
			seeds = 2
		}
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			for seed := uint64(1); seed <= uint64(seeds); seed++ {
				t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
					sc := &script{seed: seed, out: simOutput(t)}
					datadriven.RunTest(t, f, func(t *testing.T, d *datadriven.TestData) string {
						return sc.do(t, d)
					})
				})
			}
		})
	}
}

type script struct {
	seed        uint64
	out         func(string)
	s           *sim
	remembered  *simNode
	rememberedE int32
	crashed     []*simNode
}

func (sc *script) do(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd != "cluster" && sc.s == nil {
		d.Fatalf(t, "%s: no cluster yet", d.Pos)
	}
	var out string
	run := func() { out = sc.cmd(t, d) }
	if sc.s != nil {
		sc.s.guard(run)
	} else {
		run()
	}
	if s := sc.s; s != nil && s.violation != "" {
		return "VIOLATION " + s.result().report()
	}
	return out + "\n"
}

func durationArg(t *testing.T, d *datadriven.TestData, key string, def time.Duration) time.Duration {
	if !d.HasArg(key) {
		return def
	}
	var v string
	d.ScanArgs(t, key, &v)
	dur, err := time.ParseDuration(v)
	if err != nil {
		d.Fatalf(t, "%s: bad duration %q", key, v)
	}
	return dur
}

func intArg(t *testing.T, d *datadriven.TestData, key string, def int) int {
	if !d.HasArg(key) {
		return def
	}
	var v string
	d.ScanArgs(t, key, &v)
	n, err := strconv.Atoi(v)
	if err != nil {
		d.Fatalf(t, "%s: bad number %q", key, v)
	}
	return n
}

func (sc *script) cmd(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "cluster":
		m := mix{name: "script"}
		s := newSim(m, sc.seed, sc.out)
		s.opts = simOpts{
			voters:      intArg(t, d, "voters", 3),
			observers:   intArg(t, d, "observers", 0),
			idless:      d.HasArg("idless"),
			preVote:     !d.HasArg("no-prevote"),
			delayMin:    time.Millisecond,
			delayMax:    5 * time.Millisecond,
			appendEvery: 100 * time.Millisecond,
			faultEvery:  time.Hour,
			faultPhase:  1000 * time.Hour, // faults are scripted
			clockSkew:   true,
		}
		// leader-fsync=D: leaders fsync off the driver, each fsync taking D.
		s.opts.flushDelayMin = durationArg(t, d, "leader-fsync", 0)
		s.opts.flushDelayMax = s.opts.flushDelayMin
		s.chk.init(s)
		s.setup()
		sc.s = s
		return fmt.Sprintf("%d voters, %d observers", s.opts.voters, s.opts.observers)

	case "run":
		s := sc.s
		limit := durationArg(t, d, "for", time.Second)
		end := s.now + limit
		s.runUntil(limit, func() bool { return false })
		s.now = max(s.now, end)
		return "ok"

	case "await":
		s := sc.s
		if len(d.CmdArgs) == 0 {
			d.Fatalf(t, "await what?")
		}
		within := durationArg(t, d, "within", livenessBound)
		switch what := d.CmdArgs[0].Key; what {
		case "leader":
			if s.runUntil(within, func() bool { return sc.committedLeader(-1) != nil }) {
				return "leader elected"
			}
		case "new-leader":
			if s.runUntil(within, func() bool { return sc.committedLeader(sc.rememberedE) != nil }) {
				return "new leader elected in a higher epoch"
			}
		case "commit":
			target := s.payloadSeq + intArg(t, d, "records", 10)
			s.startWorkload()
			if s.runUntil(within, func() bool { return s.chk.maxCommitted >= target }) {
				return "committed"
			}
		case "converged":
			s.workloadOn = false
			if s.runUntil(within, func() bool { ok, _ := s.chk.converged(); return ok }) {
				return "converged"
			}
			_, why := s.chk.converged()
			return "not converged: " + why
		default:
			d.Fatalf(t, "await %s?", what)
		}
		return fmt.Sprintf("timed out after %v: %s", within, s.chk.describeLeaders())

	case "remember":
		l := sc.s.leaderNode()
		if l == nil {
			return "no leader to remember"
		}
		sc.remembered, sc.rememberedE = l, l.drv.Status().Epoch
		return "ok"

	case "expect":
		s := sc.s
		switch what := d.CmdArgs[0].Key; what {
		case "leader-flushed-below-commit":
			l := s.leaderNode()
			if l == nil {
				return "no leader"
			}
			if f := l.disk.FlushedOffset(); f >= s.chk.committedEnd {
				return fmt.Sprintf("the leader flushed to %d, not below the committed end %d", f, s.chk.committedEnd)
			}
			return "the leader's flushed offset is below the committed end"
		case "old-leader-resigned":
			l := sc.remembered
			if !l.up || l.drv.Status().Role != raft.RoleLeader {
				return "old leader no longer leads"
			}
			return fmt.Sprintf("old leader %d still leads epoch %d", l.id, l.drv.Status().Epoch)
		case "old-leader-leads":
			l := sc.remembered
			if l.up && l.drv.Status().Role == raft.RoleLeader && l.drv.Status().Epoch == sc.rememberedE {
				return "old leader still leads"
			}
			return fmt.Sprintf("old leader lost its epoch: %s", s.chk.describeLeaders())
		default:
			d.Fatalf(t, "expect %s?", what)
		}

	case "crash":
		s := sc.s
		for _, n := range sc.targets(t, d) {
			s.crash(n, "script")
			sc.crashed = append(sc.crashed, n)
		}
		return "ok"

	case "restart":
		s := sc.s
		n := intArg(t, d, "count", len(sc.crashed))
		for _, c := range sc.crashed[:n] {
			if !c.up {
				s.start(c)
				s.chk.afterEvent(c)
			}
		}
		sc.crashed = sc.crashed[n:]
		return "ok"

	case "partition":
		s := sc.s
		cut := sc.targets(t, d)
		in := map[*simNode]bool{}
		for _, n := range cut {
			in[n] = true
		}
		for _, a := range s.nodes {
			for _, b := range s.nodes {
				if in[a] != in[b] {
					s.blocked[a.idx][b.idx]++
				}
			}
		}
		s.stats.partitions++
		s.tracef("SCRIPT partition %d nodes away", len(cut))
		return "ok"

	case "heal":
		for i := range sc.s.blocked {
			clear(sc.s.blocked[i])
		}
		sc.s.tracef("SCRIPT heal")
		return "ok"

	case "resign":
		s := sc.s
		l := s.leaderNode()
		if l == nil {
			return "no leader"
		}
		if err := l.drv.Resign(s.nodeTime(l), l.drv.Status().Epoch); err != nil {
			return fmt.Sprintf("resign: %v", err)
		}
		s.poll(l)
		s.chk.afterEvent(l)
		return "ok"

	case "shutdown":
		s := sc.s
		l := s.leaderNode()
		if l == nil {
			return "no leader"
		}
		l.drv.Shutdown(s.nodeTime(l))
		s.poll(l)
		s.chk.afterEvent(l)
		within := durationArg(t, d, "within", 5*time.Second)
		if !s.runUntil(within, func() bool { return !l.up || l.drv.Done() }) {
			return "shutdown did not finish"
		}
		s.crash(l, "after shutdown")
		sc.crashed = append(sc.crashed, l)
		return "shut down"

	case "workload":
		if d.HasArg("on") {
			sc.s.startWorkload()
		} else {
			sc.s.workloadOn = false
		}
		return "ok"
	}
	d.Fatalf(t, "unknown command %s", d.Cmd)
	return ""
}

// committedLeader returns an up leader of an epoch above minEpoch that has
// committed an entry of its own epoch.
func (sc *script) committedLeader(minEpoch int32) *simNode {
	for _, n := range sc.s.nodes {
		if !n.up {
			continue
		}
		st := n.drv.Status()
		if st.Role != raft.RoleLeader || st.Epoch <= minEpoch || st.HighWatermark <= 0 {
			continue
		}
		if b, ok := n.disk.BatchAt(st.HighWatermark - 1); ok && b.Epoch == st.Epoch {
			return n
		}
	}
	return nil
}

// targets resolves a node selector: leader, follower (one voter that is
// not the leader), minority-with-leader (the leader and voters/2 - 1 others),
// majority (voters/2 + 1 voters), all, observers.
func (sc *script) targets(t *testing.T, d *datadriven.TestData) []*simNode {
	s := sc.s
	if len(d.CmdArgs) == 0 {
		d.Fatalf(t, "%s: which nodes?", d.Cmd)
	}
	l := s.leaderNode()
	var followers []*simNode
	for _, n := range s.nodes {
		if n.voter && n.up && n != l {
			followers = append(followers, n)
		}
	}
	need := func(ok bool) {
		if !ok {
			d.Fatalf(t, "%s %s: no such nodes now (%s)", d.Cmd, d.CmdArgs[0].Key, s.chk.describeLeaders())
		}
	}
	switch sel := d.CmdArgs[0].Key; sel {
	case "leader":
		need(l != nil)
		return []*simNode{l}
	case "follower":
		need(len(followers) > 0)
		return followers[:1]
	case "minority-with-leader":
		k := s.opts.voters/2 - 1
		need(l != nil && len(followers) >= k)
		return append([]*simNode{l}, followers[:k]...)
	case "majority":
		var out []*simNode
		for _, n := range s.nodes {
			if n.voter && n.up && len(out) < s.opts.voters/2+1 {
				out = append(out, n)
			}
		}
		return out
	case "all":
		var out []*simNode
		for _, n := range s.nodes {
			if n.up {
				out = append(out, n)
			}
		}
		return out
	case "observers":
		var out []*simNode
		for _, n := range s.nodes {
			if !n.voter && n.up {
				out = append(out, n)
			}
		}
		return out
	}
	d.Fatalf(t, "unknown node selector %s", d.CmdArgs[0].Key)
	return nil
}

// BenchmarkSimFailover measures, in virtual time, how long a 3-voter quorum
// under load takes from kill -9 of the leader to a new leader committing an
// entry of its epoch (docs/design/faults.md 4: p50 <= FT + 1 ET, p99 <=
// FT + 3 ET at Kafka's defaults). Each iteration is one seed.
func BenchmarkSimFailover(b *testing.B) {
	var lat []time.Duration
	seed := uint64(0)
	for b.Loop() {
		seed++
		s := newSim(mix{name: "failover"}, seed, nil)
		s.opts = simOpts{voters: 3, preVote: true, delayMin: time.Millisecond, delayMax: 5 * time.Millisecond,
			appendEvery: 100 * time.Millisecond, faultEvery: time.Hour, faultPhase: 1000 * time.Hour, linger: 25 * time.Millisecond}
		s.chk.init(s)
		s.setup()
		sc := &script{s: s}
		if !s.runUntil(livenessBound, func() bool { return sc.committedLeader(-1) != nil }) {
			b.Fatalf("seed %d: no leader: %s", seed, s.violation)
		}
		s.runUntil(time.Duration(s.rng.IntN(2000))*time.Millisecond, func() bool { return false })
		l := s.leaderNode()
		epoch := l.drv.Status().Epoch
		s.crash(l, "bench")
		from := s.now
		if !s.runUntil(livenessBound, func() bool { return sc.committedLeader(epoch) != nil }) {
			b.Fatalf("seed %d: no new leader: %s", seed, s.violation)
		}
		lat = append(lat, s.now-from)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Milliseconds()) }
	b.ReportMetric(pct(0.5), "p50-failover-ms")
	b.ReportMetric(pct(0.99), "p99-failover-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Milliseconds()), "max-failover-ms")
}
