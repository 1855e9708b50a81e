package raft_test

// The seeded deterministic simulator (docs/design/faults.md 3.1; the
// design of Kafka's RaftEventSimulationTest, made replayable by a seed):
// 3 or 5 voters and 0-2 observers (one maybe without an id),
// each a real raft.Driver over rafttest.MemLog and MemStateStore (or, in
// mix "disk", metadatalog on a crashable MemFS), an in-memory network in
// virtual time, a leader-side workload, and a nemesis that drops,
// duplicates, delays and reorders messages, forges requests from another
// cluster, partitions (full, split, one-way, partial), crashes (losing
// what was not fsynced), pauses, fails fsyncs, resigns and shuts down
// leaders, and snapshots and deletes logs; in mix "membership" observers
// auto-join and voters (the leader too) are removed or get new directory
// ids (sim_membership_test.go); in mix "upgrade" an admin upgrades the
// static quorum to kraft.version 1 (sim_upgrade_test.go). Every request
// gets exactly one
// answer (a response, or an error at the request timeout), as from the
// real transport. After the fault phase everything heals and the quorum
// must commit, converge and go quiet.
//
// Invariants run after every event (sim_check_test.go). Everything random
// comes from one PCG seeded by (seed, mix), so a seed replays exactly: a
// failure prints the seed, its options, the last events and the command
// that replays it with a full trace.
//
//	go test ./raft -run TestSimSeeds                  # 120 seeds per mix (defer 60, membership, upgrade 30; fewer under -race)
//	make sim SEEDS=10000 SEED_BASE=5000000           # any seeds, summaries
//	go test ./raft -run 'TestSimSeeds/all/seed=7$' -sim.seed=7 -sim.mix=all -v -sim.trace

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/raft"
)

var (
	simSeeds = flag.Int("sim.seeds", 0, "seeds per scenario mix (0: a default that fits make test)")
	simBase  = flag.Uint64("sim.base", 1, "first seed")
	simSeed  = flag.Int64("sim.seed", -1, "run only this seed (overrides -sim.seeds and -sim.base)")
	simMix   = flag.String("sim.mix", "", "run only this mix")
	simTrace = flag.Bool("sim.trace", false, "print every event as it runs")
	simLog   = flag.Bool("sim.log", false, "log the drivers' zap output (debug level)")
)

// defaultSeeds is the per-mix count for plain go test; make sim runs any
// number of seeds (1000 by default) for longer runs. The simulator runs on
// one goroutine, so the race detector can find nothing in it and only slows
// it (about 13x): a -race binary (make test's first pass) runs raceSeeds,
// enough to run every mix's code paths under the detector, and make test
// then runs the simulator tests again without -race at the full count.
const (
	defaultSeeds = 120
	raceSeeds    = 8
)

// mix is a scenario family: which faults the nemesis may inject.
type mix struct {
	name       string
	lossy      bool // drop, duplicate, long delays
	partitions bool
	crashes    bool // crash/restart, pauses, fsync failures
	resigns    bool // Resign and graceful Shutdown of the leader
	snapshots  bool // nodes snapshot at their high watermark and delete the log below
	lyingDisk  bool // fsync lies (self-test of the checker only)
	realDisk   bool // metadatalog.Log and quorum-state files on a crashable MemFS
	membership bool // dynamic quorum, auto-joining observers, voter removals (sim_membership_test.go)
	upgrade    bool // static quorum upgraded to kraft.version 1 (sim_upgrade_test.go)
	deferral   bool // nodes defer leadership to preferred voters (sim_defer_test.go)
}

var mixes = []mix{
	{name: "clean"},
	{name: "lossy", lossy: true},
	{name: "partitions", partitions: true},
	{name: "crashes", crashes: true, resigns: true, snapshots: true},
	{name: "all", lossy: true, partitions: true, crashes: true, resigns: true, snapshots: true},
	{name: "disk", crashes: true, resigns: true, snapshots: true, realDisk: true},
	{name: "membership", partitions: true, crashes: true, resigns: true, snapshots: true, membership: true},
	{name: "upgrade", partitions: true, crashes: true, resigns: true, snapshots: true, upgrade: true},
	{name: "defer", lossy: true, partitions: true, crashes: true, resigns: true, snapshots: true, deferral: true},
}

func TestSimSeeds(t *testing.T) {
	n := *simSeeds
	if n <= 0 {
		n = defaultSeeds
		if raceDetector {
			n = raceSeeds
		}
		if testing.Short() {
			n = min(n, 20)
		}
	}
	base := *simBase
	if *simSeed >= 0 {
		base, n = uint64(*simSeed), 1
	}
	for _, m := range mixes {
		if *simMix != "" && *simMix != m.name {
			continue
		}
		n := n
		switch {
		case *simSeeds > 0 || *simSeed >= 0:
		case m.membership || m.upgrade:
			n /= 4 // the slowest mixes; make sim runs them in full
		case m.deferral:
			n /= 2 // the faults of mix all, run in full just before it
		}
		t.Run(m.name, func(t *testing.T) {
			var tot simTotals
			for s := base; s < base+uint64(n); s++ {
				t.Run(fmt.Sprintf("seed=%d", s), func(t *testing.T) {
					res := runSim(m, s, simOutput(t))
					tot.add(res)
					if res.violation != "" {
						t.Fatalf("%s", res.report())
					}
				})
			}
			if *simSeeds > 0 && !testing.Verbose() {
				// make sim: say what ran even without -v.
				fmt.Printf("mix %s: seeds %d..%d: %s\n", m.name, base, base+uint64(n)-1, tot)
			} else {
				t.Logf("mix %s: %d seeds from %d: %s", m.name, n, base, tot)
			}
		})
	}
}

// TestSimCatchesLyingDisk shows the checker has teeth: with disks that
// acknowledge fsync without persisting, crashes lose acknowledged data, and
// some seed must report a violation.
func TestSimCatchesLyingDisk(t *testing.T) {
	m := mix{name: "lying-disk", crashes: true, lyingDisk: true}
	for seed := uint64(1); seed <= 300; seed++ {
		res := runSim(m, seed, nil)
		if res.violation != "" {
			t.Logf("seed %d: %s", seed, res.violation)
			return
		}
	}
	t.Fatal("300 seeds with lying fsyncs and crashes found no violation: the checker is blind to lost acknowledged data")
}

func simOutput(t *testing.T) func(string) {
	if *simTrace {
		return func(s string) { t.Log(s) }
	}
	return nil
}

// BenchmarkSimSteps measures simulated events per second for each mix, one
// seed per iteration: this is what bounds how many seeds CI can afford.
func BenchmarkSimSteps(b *testing.B) {
	for _, m := range mixes {
		b.Run(m.name, func(b *testing.B) {
			var steps int
			var virt time.Duration
			seed := uint64(0)
			start := time.Now()
			for b.Loop() {
				seed++
				res := runSim(m, seed, nil)
				if res.violation != "" {
					b.Fatalf("%s", res.report())
				}
				steps += res.steps
				virt += res.virtual
			}
			el := time.Since(start).Seconds()
			b.ReportMetric(float64(steps)/el, "steps/s")
			b.ReportMetric(float64(steps)/float64(seed), "steps/seed")
			b.ReportMetric(virt.Seconds()/el, "virtual-s/s")
		})
	}
}

// ---------------------------------------------------------------------------
// Options drawn from the seed.

type simOpts struct {
	voters, observers int
	idless            bool // one observer has no node id (bootstrap servers only)
	preVote           bool
	dropP, dupP       float64
	delayMin          time.Duration
	delayMax          time.Duration
	longDelayP        float64 // chance of a delay up to 10x delayMax (reordering)
	faultEvery        time.Duration
	faultPhase        time.Duration
	appendEvery       time.Duration
	clockSkew         bool
	linger            time.Duration // controller.quorum.append.linger.ms
	maxBatch          int           // 0: Kafka's default
	maxFetch          int           // bytes a leader returns per Fetch; 0: default
	snapChunk         int           // FetchSnapshot chunk size; 0: default
	pad               int           // workload records carry up to this many extra bytes
	observerNoFsync   bool          // observers do not fsync (as brokers)
	// dynamic: the voters start from a bootstrap snapshot (kraft.version 1,
	// format --initial-controllers) and every node is configured with
	// bootstrap servers only; else controller.quorum.voters (kraft.version 0).
	dynamic bool
	// preferred are the voters the others defer leadership to (mix
	// "defer"): none, all, or some.
	preferred []int32
	// flushDelayMax > 0: leaders fsync off the driver (Config.Flusher),
	// each fsync taking flushDelayMin to flushDelayMax; 0: in their rounds.
	flushDelayMin, flushDelayMax time.Duration
	// fetchPace > 0: followers receiving records at fetchPaceRate bytes/s
	// or more hold each next Fetch this long (Config.FetchPace); 0: none.
	fetchPace     time.Duration
	fetchPaceRate int64
	// flushBytes and maxUncommitted: leaders write a batch at this size
	// before its linger, and refuse appends over this backlog; 0: the
	// defaults.
	flushBytes, maxUncommitted int
}

func (o simOpts) String() string {
	return fmt.Sprintf("voters=%d observers=%d idless=%v prevote=%v drop=%.2f dup=%.2f delay=%v-%v long=%.2f faultEvery=%v faultPhase=%v appendEvery=%v skew=%v linger=%v maxBatch=%d maxFetch=%d snapChunk=%d pad=%d observerNoFsync=%v dynamic=%v preferred=%v flushDelayMax=%v fetchPace=%v@%dB/s flushBytes=%d maxUncommitted=%d",
		o.voters, o.observers, o.idless, o.preVote, o.dropP, o.dupP, o.delayMin, o.delayMax, o.longDelayP,
		o.faultEvery, o.faultPhase, o.appendEvery, o.clockSkew, o.linger, o.maxBatch, o.maxFetch, o.snapChunk, o.pad, o.observerNoFsync, o.dynamic, o.preferred, o.flushDelayMax, o.fetchPace, o.fetchPaceRate, o.flushBytes, o.maxUncommitted)
}

func drawOpts(m mix, rng *rand.Rand) simOpts {
	o := simOpts{
		voters:      []int{3, 5}[rng.IntN(2)],
		observers:   rng.IntN(3),
		preVote:     rng.IntN(4) != 0,
		delayMin:    time.Duration(rng.IntN(3)) * time.Millisecond,
		appendEvery: time.Duration(50+rng.IntN(250)) * time.Millisecond,
		faultEvery:  time.Duration(500+rng.IntN(2500)) * time.Millisecond,
		faultPhase:  time.Duration(15+rng.IntN(15)) * time.Second,
		clockSkew:   rng.IntN(2) == 0,
	}
	o.delayMax = o.delayMin + time.Duration(1+rng.IntN(20))*time.Millisecond
	o.idless = o.observers > 0 && rng.IntN(2) == 0
	if m.lossy {
		o.dropP = rng.Float64() * 0.2
		o.dupP = rng.Float64() * 0.1
		o.longDelayP = rng.Float64() * 0.1
	}
	o.linger = []time.Duration{0, 5 * time.Millisecond, 25 * time.Millisecond, 100 * time.Millisecond}[rng.IntN(4)]
	if rng.IntN(2) == 0 {
		// Small limits: batches split, fetches return one batch at a time,
		// snapshots travel in many chunks.
		o.maxBatch = 1024 + rng.IntN(2048)
		o.maxFetch = 256 + rng.IntN(4096)
		o.snapChunk = 16 + rng.IntN(200)
	}
	o.pad = rng.IntN(200)
	o.observerNoFsync = rng.IntN(2) == 0
	if rng.IntN(2) == 0 {
		// Rates the workload's answers often reach, pauses up to beyond a
		// delivery delay.
		o.fetchPace = time.Duration(1+rng.IntN(30)) * time.Millisecond
		o.fetchPaceRate = int64(100 + rng.IntN(20000))
	}
	if rng.IntN(2) == 0 {
		// Small sizes: batches go out before their linger, and the
		// workload's appends reach the backlog bound.
		o.flushBytes = 64 + rng.IntN(2048)
		o.maxUncommitted = 256 + rng.IntN(8192)
	}
	return o
}

// ---------------------------------------------------------------------------
// The simulation.

// Kafka's defaults (DefaultConfig); the liveness bound uses them.
const (
	simElectionTimeout = 1000 * time.Millisecond
	simFetchTimeout    = 2000 * time.Millisecond
	simRequestTimeout  = 2000 * time.Millisecond
	simMaxFetchWait    = 500 * time.Millisecond
	livenessBound      = simFetchTimeout + 10*simElectionTimeout
	convergenceBound   = 10 * time.Second
	maxEventsPerSeed   = 3_000_000
	traceKeep          = 300
)

var (
	simEpochBase   = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	simClusterID   = "MkU3OEVBNTcwNTJENDM2Qk"
	errConnClosed  = errors.New("sim: connection closed")
	errConnRefused = fmt.Errorf("sim: %w", raft.ErrConnectionRefused)
	errUnknownNode = errors.New("sim: unknown node")
	errReqTimeout  = errors.New("sim: request timed out")
)

// simTotals sums what the seeds of a mix exercised, so a run shows that
// the faults happened and the quorum still did work.
type simTotals struct {
	seeds, steps                                                           int
	virtual, maxLatency                                                    time.Duration
	committed                                                              int64
	leaderChanges, crashes, partitions, pauses, diskFaults, resigns        int
	drops, dups                                                            int
	snapshots, retentions, fetchSnapshots, snapshotLoads                   int
	checkQuorumChecks                                                      int
	bogus                                                                  int
	removals, newDirs, voterChanges, removedLeaderStalls, staleEpochStalls int
	upgrades, upgraded                                                     int
	deferringLeads, deferringResigns                                       int
}

func (t *simTotals) add(r simResult) {
	t.seeds++
	t.steps += r.steps
	t.virtual += r.virtual
	t.committed += r.committed
	t.maxLatency = max(t.maxLatency, r.latency)
	st := r.counts
	t.leaderChanges += st.leaderChanges
	t.crashes += st.crashes
	t.partitions += st.partitions
	t.pauses += st.pauses
	t.diskFaults += st.diskFaults
	t.resigns += st.resigns + st.shutdowns
	t.drops += st.drops
	t.dups += st.dups
	t.snapshots += st.snapshots
	t.retentions += st.retentions
	t.fetchSnapshots += st.fetchSnapshots
	t.snapshotLoads += st.snapshotLoads
	t.checkQuorumChecks += st.checkQuorumChecks
	t.bogus += st.bogus
	t.removals += st.removals
	t.newDirs += st.newDirs
	t.removedLeaderStalls += st.removedLeaderStalls
	t.staleEpochStalls += st.staleEpochStalls
	t.voterChanges += r.voterChanges
	t.upgrades += st.upgrades
	if r.upgradedAt >= 0 {
		t.upgraded++
	}
	t.deferringLeads += st.deferringLeads
	t.deferringResigns += st.deferringResigns
}

func (t simTotals) String() string {
	return fmt.Sprintf("%d events, %v virtual, %d offsets committed, %d leader elections, %d crashes, %d partitions, %d pauses, %d disk faults, %d resigns/shutdowns, %d drops, %d duplicates, %d snapshots (%d log deletions, %d FetchSnapshot requests, %d listener loads), %d check-quorum deadlines checked, %d forged requests refused, %d voter removals asked, %d new directories, %d voter sets committed, %d removed-leader stalls, %d stale-epoch stalls, %d kraft.version upgrades asked (%d seeds upgraded), %d elections won by deferring nodes (%d resigned); slowest post-heal commit %v",
		t.steps, t.virtual.Round(time.Second), t.committed, t.leaderChanges, t.crashes, t.partitions, t.pauses, t.diskFaults, t.resigns, t.drops, t.dups,
		t.snapshots, t.retentions, t.fetchSnapshots, t.snapshotLoads, t.checkQuorumChecks, t.bogus, t.removals, t.newDirs, t.voterChanges, t.removedLeaderStalls, t.staleEpochStalls, t.upgrades, t.upgraded, t.deferringLeads, t.deferringResigns, t.maxLatency)
}

type simResult struct {
	mix       string
	seed      uint64
	opts      simOpts
	steps     int
	virtual   time.Duration
	violation string
	trace     []string
	stats     string
	committed int64
	latency   time.Duration // heal to first new commit
	counts    simCounts
	// voterChanges is how many Voters records committed after the
	// bootstrap set.
	voterChanges int
	upgradedAt   int64 // the committed kraft.version upgrade's offset, -1 if none
}

func (r simResult) report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "VIOLATION mix=%s seed=%d: %s\n", r.mix, r.seed, r.violation)
	fmt.Fprintf(&b, "options: %s\n", r.opts)
	fmt.Fprintf(&b, "after %d events, virtual time %v; %s\n", r.steps, r.virtual, r.stats)
	fmt.Fprintf(&b, "replay: go test ./raft -count=1 -run 'TestSimSeeds/%s/seed=%d$' -sim.seed=%d -sim.mix=%s -v -sim.trace\n",
		r.mix, r.seed, r.seed, r.mix)
	fmt.Fprintf(&b, "last %d events:\n", len(r.trace))
	for _, l := range r.trace {
		b.WriteString("  ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}
