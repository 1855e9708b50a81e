package raft_test

// The seeded deterministic simulator (reliability.md section 3, STYLE.md
// section 8): 3 or 5 voters and 0-2 observers (one maybe without an id),
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
//	go test ./raft -run TestSimSeeds                  # 120 seeds per mix (membership, upgrade 30)
//	make sim SEEDS=10000 SEED_BASE=5000000           # any seeds, summaries
//	go test ./raft -run 'TestSimSeeds/all/seed=7$' -sim.seed=7 -sim.mix=all -v -sim.trace

import (
	"bytes"
	"container/heap"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/clusterid"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/raft/rafttest"
)

var (
	simSeeds = flag.Int("sim.seeds", 0, "seeds per scenario mix (0: a default that fits make test)")
	simBase  = flag.Uint64("sim.base", 1, "first seed")
	simSeed  = flag.Int64("sim.seed", -1, "run only this seed (overrides -sim.seeds and -sim.base)")
	simMix   = flag.String("sim.mix", "", "run only this mix")
	simTrace = flag.Bool("sim.trace", false, "print every event as it runs")
	simLog   = flag.Bool("sim.log", false, "log the drivers' zap output (debug level)")
)

// defaultSeeds is the per-mix count for plain go test (make test runs under
// -race): every mix runs at least 100 seeds, about a minute of CPU in all
// under -race. make sim runs any number.
const defaultSeeds = 120

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
}

func TestSimSeeds(t *testing.T) {
	n := *simSeeds
	if n <= 0 {
		n = defaultSeeds
		if testing.Short() {
			n = 20
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
		if *simSeeds <= 0 && *simSeed < 0 && (m.membership || m.upgrade) {
			n /= 4 // the slowest mixes; make sim runs them in full
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
}

func (o simOpts) String() string {
	return fmt.Sprintf("voters=%d observers=%d idless=%v prevote=%v drop=%.2f dup=%.2f delay=%v-%v long=%.2f faultEvery=%v faultPhase=%v appendEvery=%v skew=%v linger=%v maxBatch=%d maxFetch=%d snapChunk=%d pad=%d observerNoFsync=%v dynamic=%v",
		o.voters, o.observers, o.idless, o.preVote, o.dropP, o.dupP, o.delayMin, o.delayMax, o.longDelayP,
		o.faultEvery, o.faultPhase, o.appendEvery, o.clockSkew, o.linger, o.maxBatch, o.maxFetch, o.snapChunk, o.pad, o.observerNoFsync, o.dynamic)
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
	errConnRefused = errors.New("sim: connection refused")
	errReqTimeout  = errors.New("sim: request timed out")
)

// simTotals sums what the seeds of a mix exercised, so a run shows that
// the faults happened and the quorum still did work.
type simTotals struct {
	seeds, steps                                                    int
	virtual, maxLatency                                             time.Duration
	committed                                                       int64
	leaderChanges, crashes, partitions, pauses, diskFaults, resigns int
	drops, dups                                                     int
	snapshots, retentions, fetchSnapshots, snapshotLoads            int
	checkQuorumChecks                                               int
	bogus                                                           int
	removals, newDirs, voterChanges, removedLeaderStalls            int
	upgrades, upgraded                                              int
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
	t.voterChanges += r.voterChanges
	t.upgrades += st.upgrades
	if r.upgradedAt >= 0 {
		t.upgraded++
	}
}

func (t simTotals) String() string {
	return fmt.Sprintf("%d events, %v virtual, %d offsets committed, %d leader elections, %d crashes, %d partitions, %d pauses, %d disk faults, %d resigns/shutdowns, %d drops, %d duplicates, %d snapshots (%d log deletions, %d FetchSnapshot requests, %d listener loads), %d check-quorum deadlines checked, %d forged requests refused, %d voter removals asked, %d new directories, %d voter sets committed, %d removed-leader stalls, %d kraft.version upgrades asked (%d seeds upgraded); slowest post-heal commit %v",
		t.steps, t.virtual.Round(time.Second), t.committed, t.leaderChanges, t.crashes, t.partitions, t.pauses, t.diskFaults, t.resigns, t.drops, t.dups,
		t.snapshots, t.retentions, t.fetchSnapshots, t.snapshotLoads, t.checkQuorumChecks, t.bogus, t.removals, t.newDirs, t.voterChanges, t.removedLeaderStalls, t.upgrades, t.upgraded, t.maxLatency)
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

type evKind uint8

const (
	evPoll evKind = iota
	evStart
	evArrive   // a request or response reaches msg.to
	evTimeout  // request timeout of an outbound
	evWorkload // leader-side appends
	evNemesis  // inject a fault
	evCall     // run fn: heals, restarts, checker ticks
	evEndFaults
	evSnapshot
)

type event struct {
	at    time.Duration // virtual time since the start
	seq   uint64
	kind  evKind
	node  int
	inc   int // incarnation of node when scheduled
	token uint64
	msg   *netMsg
	fn    func()
}

type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return e
}

// netMsg is a request or response on the wire, encoded as bytes so both
// sides see only what the Kafka protocol carries.
type netMsg struct {
	from, to       int
	fromInc, toInc int
	corr           uint64
	toID           int32 // the Outbound.To the sender used (negative: bootstrap)
	key, version   int16
	isResp         bool
	err            error // a transport error delivered as the response
	body           []byte
	bogus          bool // a forged copy with a foreign cluster id (S12)
	admin          bool // an admin's voter change (sim_membership_test.go)
	// maxEpoch: the forged copy keeps the cluster id but names epoch
	// MaxInt32, which no node can move to (INVALID_REQUEST, S12).
	maxEpoch bool
}

// pendingOut is an Outbound awaiting its single answer.
type pendingOut struct {
	toID     int32
	to       int
	key, ver int16
}

// simRef is the RequestRef given to the receiving driver.
type simRef struct {
	msg     *netMsg
	inc     int // receiver's incarnation
	at      time.Duration
	replied bool
	code    int16 // bogus requests: the top-level error code answered
}

type simNode struct {
	idx   int
	id    int32 // -1 for the id-less observer
	voter bool
	// everVoter: the node was in its voter set in force at some point
	// (membership mix), so it may vote.
	everVoter bool
	// ghostEnd is how much committed data the node's replaced disks held
	// (membership mix: a new directory id).
	ghostEnd int64
	dir      [16]byte
	disk     simDisk
	mem      *rafttest.MemLog // the MemLog under disk, nil with real storage
	fdisk    *fileDisk        // the metadatalog under disk, nil with MemLog
	flog     *rafttest.FailingLog
	store    *simStore
	drv      *raft.Driver
	up       bool
	inc      int
	clockOff time.Duration

	pollToken   uint64
	polls       int // Poll calls, for the idle-cost check
	pollsAtNow  int
	lastPollAt  time.Duration
	pausedUntil time.Duration
	pauseEnd    time.Duration // end of the last pause (request ages exclude it)
	diskFailing bool          // a fault injected on this incarnation's log
	pending     map[uint64]pendingOut
	openRefs    []*simRef
	listener    *simListener
	lastRestart time.Duration
	chk         nodeCheck
}

type sim struct {
	m        mix
	seed     uint64
	opts     simOpts
	rng      *rand.Rand
	now      time.Duration
	q        eventQueue
	seq      uint64
	nodes    []*simNode
	byID     map[int32]int
	voterCfg []raft.Voter
	out      func(string)
	logger   *zap.Logger

	// network state
	blocked    [][]int // blocked[from][to]: how many active partitions cut the link
	lossy      bool    // faults phase of a lossy mix
	faultsOver bool
	healAt     time.Duration

	workloadOn        bool
	workloadScheduled bool
	payloadSeq        int

	chk checker

	steps     int
	violation string
	trace     []string
	traceAt   int

	stats simCounts

	adminCorr uint64 // correlation ids of admin requests (sim_membership_test.go)
}

type simCounts struct {
	msgs, drops, dups, crashes, restarts, pauses, partitions, diskFaults, resigns, shutdowns, appends, leaderChanges int
	snapshots, snapshotLoads, retentions, fetchSnapshots                                                             int
	checkQuorumChecks                                                                                                int
	bogus                                                                                                            int
	removals, newDirs, removedLeaderStalls                                                                           int
	upgrades                                                                                                         int
}

func newSim(m mix, seed uint64, out func(string)) *sim {
	h := fnv.New64a()
	h.Write([]byte(m.name))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	s := &sim{m: m, seed: seed, rng: rng, out: out, byID: map[int32]int{}}
	s.opts = drawOpts(m, rng)
	// Drawn from its own stream so the other options of a seed stay what
	// they were before dynamic quorums existed.
	s.opts.dynamic = (rand.New(rand.NewPCG(seed, 0xd1a)).IntN(2) == 0 || m.membership) && !m.upgrade
	if m.membership {
		// Someone to join: observers with ids (auto-join).
		s.opts.observers = max(s.opts.observers, 1)
		if s.opts.idless {
			s.opts.observers++
		}
		// They are controllers, which fsync as observers too (a new
		// voter's fetch offsets count toward the high watermark).
		s.opts.observerNoFsync = false
	}
	s.logger = zap.NewNop()
	if *simLog {
		s.logger, _ = zap.NewDevelopment()
	}
	s.lossy = m.lossy
	return s
}

func runSim(m mix, seed uint64, out func(string)) (res simResult) {
	s := newSim(m, seed, out)
	s.chk.init(s)
	s.setup()
	s.guard(s.run)
	return s.result()
}

// guard runs fn, turning a panic (in the core or the harness) into a
// violation with its stack.
func (s *sim) guard(fn func()) {
	defer func() {
		if r := recover(); r != nil {
			s.fail("panic: %v\n%s", r, debug.Stack())
		}
	}()
	fn()
}

func (s *sim) result() simResult {
	res := simResult{mix: s.m.name, seed: s.seed, opts: s.opts, steps: s.steps, virtual: s.now, violation: s.violation}
	res.stats = fmt.Sprintf("committed end %d, %+v", s.chk.committedEnd, s.stats)
	res.committed, res.latency, res.counts = s.chk.committedEnd, s.chk.commitLatency, s.stats
	res.voterChanges = len(s.chk.voterHistory)
	res.upgradedAt = -1
	if s.m.upgrade {
		res.upgradedAt = s.chk.upgradedAt
	}
	if s.violation != "" {
		res.trace = s.traceTail()
	}
	return res
}

func (s *sim) fail(format string, args ...any) {
	if s.violation == "" {
		s.violation = fmt.Sprintf("t=%v ", s.now) + fmt.Sprintf(format, args...)
	}
}

func (s *sim) tracef(format string, args ...any) {
	line := fmt.Sprintf("%9.3fs ", s.now.Seconds()) + fmt.Sprintf(format, args...)
	if s.out != nil {
		s.out(line)
	}
	if len(s.trace) < traceKeep {
		s.trace = append(s.trace, line)
	} else {
		s.trace[s.traceAt] = line
		s.traceAt = (s.traceAt + 1) % traceKeep
	}
}

func (s *sim) traceTail() []string {
	if len(s.trace) < traceKeep {
		return slices.Clone(s.trace)
	}
	return append(slices.Clone(s.trace[s.traceAt:]), s.trace[:s.traceAt]...)
}

func (s *sim) schedule(at time.Duration, e *event) {
	if at < s.now {
		at = s.now
	}
	s.seq++
	e.at, e.seq = at, s.seq
	heap.Push(&s.q, e)
}

func (s *sim) after(d time.Duration, fn func()) {
	s.schedule(s.now+d, &event{kind: evCall, fn: fn})
}

func (s *sim) setup() {
	o := s.opts
	var voters []raft.Voter
	for i := range o.voters {
		id := int32(i + 1)
		voters = append(voters, raft.Voter{ID: id, Endpoints: []raft.Endpoint{{Name: "CONTROLLER", Host: fmt.Sprintf("node%d", id), Port: 9093}}})
	}
	n := o.voters + o.observers
	s.blocked = make([][]int, n)
	for i := range n {
		s.blocked[i] = make([]int, n)
		node := &simNode{idx: i, store: &simStore{}}
		if s.m.realDisk {
			fd, err := newFileDisk()
			if err != nil {
				s.fail("node %d: open log: %v", i, err)
				return
			}
			node.fdisk, node.disk, node.store.inner = fd, fd, fd.store()
		} else {
			node.mem = rafttest.NewMemLog()
			node.disk, node.store.inner = memDisk{node.mem}, rafttest.NewMemStateStore()
		}
		switch {
		case i < o.voters:
			node.id, node.voter = int32(i+1), true
		case o.idless && i == n-1:
			node.id = -1
		default:
			node.id = int32(100 + i)
		}
		node.dir[0], node.dir[15] = byte(i+1), 0xd1
		if o.clockSkew {
			node.clockOff = time.Duration(s.rng.Int64N(int64(48*time.Hour))) - 24*time.Hour
		}
		if node.mem != nil {
			node.mem.LyingFsync = s.m.lyingDisk
		}
		if o.dynamic && node.voter {
			if err := writeBootstrapSnapshot(node.disk, voters, node.dir); err != nil {
				s.fail("node %d: bootstrap snapshot: %v", i, err)
				return
			}
		}
		node.flog = rafttest.NewFailingLog(node.disk)
		idx := i
		node.store.onWrite = func(st raft.ElectionState) { s.chk.onPersist(s.nodes[idx], st) }
		s.nodes = append(s.nodes, node)
		if node.id >= 0 {
			s.byID[node.id] = i
		}
		s.schedule(time.Duration(s.rng.IntN(200))*time.Millisecond, &event{kind: evStart, node: i})
	}
	s.voterCfg = voters
	s.startWorkload()
	if s.m.partitions || s.m.crashes || s.m.resigns {
		s.schedule(time.Second+s.jitter(o.faultEvery), &event{kind: evNemesis})
	}
	s.schedule(o.faultPhase, &event{kind: evEndFaults})
	if s.m.snapshots {
		s.schedule(time.Second+s.jitter(3*time.Second), &event{kind: evSnapshot})
	}
}

// bootstrapNodes are the indexes of the nodes listed in
// controller.quorum.bootstrap.servers: the initial voters, or with
// membership changes every node with an id (any may be the leader later).
func (s *sim) bootstrapNodes() []int {
	var out []int
	for i := range s.opts.voters + s.opts.observers {
		if i < s.opts.voters || s.m.membership && (!s.opts.idless || i != s.opts.voters+s.opts.observers-1) {
			out = append(out, i)
		}
	}
	return out
}

func (s *sim) jitter(d time.Duration) time.Duration {
	return d/2 + time.Duration(s.rng.Int64N(int64(d)))
}

func (s *sim) config(n *simNode) raft.Config {
	cfg := raft.DefaultConfig()
	cfg.NodeID = n.id
	cfg.DirectoryID = n.dir
	cfg.ClusterID = simClusterID
	cfg.Voters = s.voterCfg
	cfg.ListenerName = "CONTROLLER"
	cfg.ElectionTimeout = simElectionTimeout
	cfg.FetchTimeout = simFetchTimeout
	cfg.RequestTimeout = simRequestTimeout
	cfg.MaxFetchWait = simMaxFetchWait
	cfg.AppendLinger = s.opts.linger
	if s.opts.maxBatch > 0 {
		cfg.MaxBatchBytes = s.opts.maxBatch
	}
	if s.opts.maxFetch > 0 {
		cfg.MaxFetchBytes = s.opts.maxFetch
	}
	if s.opts.snapChunk > 0 {
		cfg.MaxSnapshotChunk = s.opts.snapChunk
	}
	cfg.FsyncAsObserver = !s.opts.observerNoFsync
	cfg.PreVote = s.opts.preVote
	cfg.AutoJoin = s.m.membership
	if n.id >= 0 {
		cfg.Endpoints = []raft.Endpoint{{Name: "CONTROLLER", Host: fmt.Sprintf("node%d", n.id), Port: 9093}}
	}
	if !n.voter || s.opts.dynamic {
		for _, i := range s.bootstrapNodes() {
			id := s.nodes[i].id
			cfg.Bootstrap = append(cfg.Bootstrap, raft.Endpoint{Name: "CONTROLLER", Host: fmt.Sprintf("node%d", id), Port: 9093})
		}
		if n.id < 0 || s.opts.dynamic {
			cfg.Voters = nil // the voter set comes from the log or the leader
		}
	}
	return cfg
}

// writeBootstrapSnapshot writes the 0-0 snapshot kafka-storage format
// --initial-controllers writes: kraft.version 1 and the voters with their
// directory ids (voter i+1 has directory dir with dir[0] = i+1).
func writeBootstrapSnapshot(disk simDisk, voters []raft.Voter, self [16]byte) error {
	var ics []clusterid.InitialController
	for _, v := range voters {
		var dir [16]byte
		dir[0], dir[15] = byte(v.ID), self[15]
		ics = append(ics, clusterid.InitialController{NodeID: v.ID, Host: v.Endpoints[0].Host,
			Port: uint16(v.Endpoints[0].Port), DirectoryID: clusterid.UUID(dir)})
	}
	w, err := disk.CreateSnapshot(raft.OffsetAndEpoch{})
	if err != nil {
		return err
	}
	defer w.Close()
	if _, err := w.Write(clusterid.BootstrapSnapshot(1, ics, "CONTROLLER", nil, simEpochBase)); err != nil {
		return err
	}
	return w.Freeze()
}

// nodeTime is the node's clock: virtual time plus its constant offset.
func (s *sim) nodeTime(n *simNode) time.Time { return simEpochBase.Add(n.clockOff + s.now) }

func (s *sim) toVirtual(n *simNode, t time.Time) time.Duration {
	return t.Sub(simEpochBase) - n.clockOff
}

func (s *sim) start(n *simNode) {
	n.inc++
	n.pending = map[uint64]pendingOut{}
	n.openRefs = nil
	n.diskFailing = false
	n.flog.FailAppend, n.flog.FailFlush = false, false
	n.listener = &simListener{s: s, n: n, inc: n.inc}
	tr := &simTransport{s: s, n: n, inc: n.inc}
	drv, err := raft.NewDriver(s.config(n), n.flog, n.store, tr,
		rand.New(rand.NewPCG(s.rng.Uint64(), s.rng.Uint64())), s.logger, s.nodeTime(n))
	if err != nil {
		s.fail("node %d: NewDriver: %v", n.id, err)
		return
	}
	n.drv, n.up = drv, true
	n.lastRestart = s.now
	n.chk.restarted(n)
	drv.Register(n.listener)
	s.tracef("node %d start inc=%d log=[%d,%d) flushed=%d", n.id, n.inc, n.disk.StartOffset(), n.disk.EndOffset().Offset, n.disk.FlushedOffset())
	s.poll(n)
}

// crash kills a node: unflushed log data is lost, quorum-state survives.
func (s *sim) crash(n *simNode, why string) {
	if !n.up {
		return
	}
	s.tracef("node %d CRASH (%s) log=[%d,%d) flushed=%d", n.id, why, n.disk.StartOffset(), n.disk.EndOffset().Offset, n.disk.FlushedOffset())
	n.up, n.drv = false, nil
	if err := n.disk.Crash(s.rng); err != nil {
		s.fail("node %d: %v", n.id, err)
		return
	}
	if n.fdisk != nil {
		n.store.inner = n.fdisk.store()
	}
	s.chk.crashed(n)
	n.pending = nil
	n.openRefs = nil
	n.pausedUntil = 0
	// Peers waiting on this node see their connections close, sooner or
	// later (some only at their request timeout).
	for _, p := range s.nodes {
		if !p.up {
			continue
		}
		for _, corr := range sortedCorrs(p.pending) {
			po := p.pending[corr]
			if po.to == n.idx && s.rng.IntN(2) == 0 {
				s.schedule(s.now+s.delay(), &event{kind: evArrive, node: p.idx, inc: p.inc,
					msg: &netMsg{from: n.idx, to: p.idx, toInc: p.inc, corr: corr, toID: po.toID, key: po.key, version: po.ver, isResp: true, err: errConnClosed}})
			}
		}
	}
	s.stats.crashes++
}

func sortedCorrs(m map[uint64]pendingOut) []uint64 {
	out := make([]uint64, 0, len(m))
	for c := range m {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

func (s *sim) delay() time.Duration {
	o := s.opts
	d := o.delayMin + time.Duration(s.rng.Int64N(int64(o.delayMax-o.delayMin)+1))
	if s.lossy && !s.faultsOver && s.rng.Float64() < o.longDelayP {
		d += time.Duration(s.rng.Int64N(int64(10 * o.delayMax)))
	}
	return d
}

// poll runs the node's timers and schedules its next poll.
func (s *sim) poll(n *simNode) (due bool) {
	if !n.up {
		return false
	}
	n.polls++
	if n.lastPollAt == s.now {
		n.pollsAtNow++
		if n.pollsAtNow > 1000 {
			s.fail("node %d: busy loop, polled %d times at the same instant", n.id, n.pollsAtNow)
			return false
		}
	} else {
		n.lastPollAt, n.pollsAtNow = s.now, 0
	}
	next, err := n.drv.Poll(s.nodeTime(n))
	if err != nil {
		s.fatal(n, "Poll", err)
		return false
	}
	n.pollToken++
	if n.pollsAtNow == 3 {
		s.tracef("node %d polled 3 times at the same instant; next poll requested at %v (now %v)", n.id, s.toVirtual(n, next), s.now)
	}
	if next.IsZero() {
		return false
	}
	at := s.toVirtual(n, next)
	s.schedule(at, &event{kind: evPoll, node: n.idx, inc: n.inc, token: n.pollToken})
	return at <= s.now
}

// fatal handles an error from the driver: expected only after an injected
// disk failure, where the node must stop (fail-stop) and is restarted later.
func (s *sim) fatal(n *simNode, op string, err error) {
	if !n.diskFailing || !errors.Is(err, rafttest.ErrInjected) {
		s.fail("node %d: %s returned an unexpected fatal error: %v", n.id, op, err)
		return
	}
	s.tracef("node %d fail-stop after injected disk error: %v", n.id, err)
	s.crash(n, "fail-stop")
	s.after(time.Duration(500+s.rng.IntN(3000))*time.Millisecond, func() {
		if !n.up {
			s.start(n)
		}
	})
}

func (s *sim) run() {
	for s.violation == "" && !s.chk.done && s.stepOne() {
	}
	if s.violation == "" && !s.chk.done {
		s.fail("event queue drained before the run finished")
	}
}

// stepOne handles the next event and checks the invariants; false when
// the queue is empty or a violation was found.
func (s *sim) stepOne() bool {
	if s.q.Len() == 0 || s.violation != "" {
		return false
	}
	e := heap.Pop(&s.q).(*event)
	s.now = e.at
	s.steps++
	if s.steps > maxEventsPerSeed {
		s.fail("event cap %d reached (busy loop or livelock)", maxEventsPerSeed)
		return false
	}
	touched := s.handle(e)
	if s.violation != "" {
		return false
	}
	if touched != nil {
		s.chk.afterEvent(touched)
	} else if e.kind != evPoll {
		for _, n := range s.nodes {
			s.chk.afterEvent(n)
		}
	}
	return s.violation == ""
}

// runUntil steps until cond holds (true) or virtual time passes limit.
func (s *sim) runUntil(limit time.Duration, cond func() bool) bool {
	deadline := s.now + limit
	for {
		if cond() {
			return true
		}
		if s.q.Len() == 0 || s.q[0].at > deadline || !s.stepOne() {
			return false
		}
	}
}

// handle applies one event; it returns the node it touched, or nil when it
// may have touched several (or none).
func (s *sim) handle(e *event) *simNode {
	switch e.kind {
	case evStart:
		n := s.nodes[e.node]
		s.start(n)
		return n
	case evPoll:
		n := s.nodes[e.node]
		if !n.up || n.inc != e.inc || n.pollToken != e.token {
			return n
		}
		if n.pausedUntil > s.now {
			s.schedule(n.pausedUntil, e)
			return n
		}
		s.poll(n)
		return n
	case evArrive:
		return s.arrive(e)
	case evTimeout:
		n := s.nodes[e.node]
		if !n.up || n.inc != e.inc {
			return n
		}
		if _, ok := n.pending[e.token]; !ok {
			return n
		}
		if n.pausedUntil > s.now {
			s.schedule(n.pausedUntil, e)
			return n
		}
		po := n.pending[e.token]
		delete(n.pending, e.token)
		s.tracef("%d: timeout corr=%d to %d %s", n.id, e.token, po.toID, kmsg.NameForKey(po.key))
		s.step(n, raft.Message{From: po.toID, Corr: e.token, Err: errReqTimeout})
		return n
	case evWorkload:
		if !s.workloadOn {
			s.workloadScheduled = false
			return nil
		}
		s.workload()
		s.schedule(s.now+s.jitter(s.opts.appendEvery), &event{kind: evWorkload})
		return nil
	case evNemesis:
		if !s.faultsOver {
			s.nemesis()
			s.schedule(s.now+s.jitter(s.opts.faultEvery), &event{kind: evNemesis})
		}
		return nil
	case evCall:
		e.fn()
		return nil
	case evEndFaults:
		s.endFaults()
		return nil
	case evSnapshot:
		s.snapshot()
		s.schedule(s.now+s.jitter(3*time.Second), &event{kind: evSnapshot})
		return nil
	}
	return nil
}

// step delivers one message to a node's driver and polls it afterwards, as
// the real run loop does.
func (s *sim) step(n *simNode, m raft.Message) {
	if err := n.drv.Step(s.nodeTime(n), m); err != nil {
		s.fatal(n, "Step", err)
		return
	}
	s.poll(n)
}

func (s *sim) arrive(e *event) *simNode {
	m := e.msg
	n := s.nodes[m.to]
	if !n.up || n.inc != m.toInc && m.isResp {
		return n // receiver gone; a response for a dead incarnation is dropped
	}
	if n.pausedUntil > s.now {
		s.schedule(n.pausedUntil, e)
		return n
	}
	if m.isResp {
		po, ok := n.pending[m.corr]
		if !ok {
			return n // already answered (duplicate, or timed out first)
		}
		delete(n.pending, m.corr)
		if m.err != nil {
			s.tracef("%d<-%d %s corr=%d error: %v", n.id, po.toID, kmsg.NameForKey(m.key), m.corr, m.err)
			s.step(n, raft.Message{From: po.toID, Corr: m.corr, Err: m.err})
			return n
		}
		resp := kmsg.ResponseForKey(m.key)
		resp.SetVersion(m.version)
		if err := resp.ReadFrom(m.body); err != nil {
			s.fail("node %d: cannot decode %s v%d response: %v", n.id, kmsg.NameForKey(m.key), m.version, err)
			return n
		}
		if s.out != nil {
			s.tracef("%d<-%d %s", n.id, po.toID, describeAny(resp))
		} else {
			s.tracef("%d<-%d %s v%d corr=%d", n.id, po.toID, kmsg.NameForKey(m.key), m.version, m.corr)
		}
		s.step(n, raft.Message{From: po.toID, Corr: m.corr, Response: resp})
		return n
	}
	// A request. A restarted receiver is a new connection target: the old
	// connection broke, the sender learns it.
	if n.inc != m.toInc {
		s.answerErr(m, errConnClosed)
		return n
	}
	if m.admin && s.faultsOver && m.key != protocol.KeyUpdateFeatures {
		return n // the nemesis' voter changes end with the fault phase
	}
	if m.key == protocol.KeyApiVersions {
		s.answerApiVersions(m)
		return n
	}
	req := kmsg.RequestForKey(m.key)
	req.SetVersion(m.version)
	if err := req.ReadFrom(m.body); err != nil {
		s.fail("node %d: cannot decode %s v%d request from %d: %v", n.id, kmsg.NameForKey(m.key), m.version, s.nodes[m.from].id, err)
		return n
	}
	ref := &simRef{msg: m, inc: n.inc, at: s.now}
	if m.bogus {
		s.bogusStep(n, req, ref)
		return n
	}
	n.openRefs = append(n.openRefs, ref)
	if s.out != nil {
		s.tracef("%d->%d %s", s.nodes[m.from].id, n.id, describe(req))
	} else {
		s.tracef("%d->%d %s v%d corr=%d", s.nodes[m.from].id, n.id, kmsg.NameForKey(m.key), m.version, m.corr)
	}
	s.step(n, raft.Message{Request: req, Ref: ref})
	return n
}

// bogusStep delivers a request carrying a foreign cluster id (S12): it
// must be answered at once with INCONSISTENT_CLUSTER_ID and change nothing
// (role, epoch, vote, high watermark, log, quorum-state).
func (s *sim) bogusStep(n *simNode, req kmsg.Request, ref *simRef) {
	what, want := "a foreign cluster id", int16(104) // INCONSISTENT_CLUSTER_ID
	if ref.msg.maxEpoch {
		what, want = "epoch MaxInt32", 42 // INVALID_REQUEST
	}
	s.tracef("%d->%d forged %s with %s", s.nodes[ref.msg.from].id, n.id, kmsg.NameForKey(req.Key()), what)
	// Step also runs the timers that are due: run them first (Poll may ask
	// to be called again at once, e.g. after one transition) so that only
	// the request's own effect is compared.
	for i := 0; i < 10 && s.poll(n); i++ {
	}
	if !n.up || s.violation != "" {
		return
	}
	before, writes, leo, truncs := n.drv.Status(), n.store.writes, n.disk.EndOffset(), n.disk.TruncationCount()
	if err := n.drv.Step(s.nodeTime(n), raft.Message{Request: req, Ref: ref}); err != nil {
		s.fatal(n, "Step", err)
		return
	}
	switch {
	case !ref.replied:
		s.fail("S12: node %d did not answer a %s with %s at once", n.id, kmsg.NameForKey(req.Key()), what)
	case ref.code != want:
		s.fail("S12: node %d answered a %s with %s with error %d, want %d", n.id, kmsg.NameForKey(req.Key()), what, ref.code, want)
	case !n.drv.Status().Equal(before) || n.store.writes != writes || n.disk.EndOffset() != leo || n.disk.TruncationCount() != truncs:
		s.fail("S12: node %d changed state on a %s with %s: %+v -> %+v", n.id, kmsg.NameForKey(req.Key()), what, before, n.drv.Status())
	}
	s.stats.bogus++
	s.poll(n)
}

// forge returns a copy of request m with a foreign cluster id, or with its
// epoch set to MaxInt32 when maxEpoch is set, or nil for apis without them.
func forge(m *netMsg, maxEpoch bool) *netMsg {
	req := kmsg.RequestForKey(m.key)
	req.SetVersion(m.version)
	if err := req.ReadFrom(m.body); err != nil {
		return nil
	}
	if maxEpoch {
		return forgeMaxEpoch(m, req)
	}
	bogus := "Zm9yZWlnbi1jbHVzdGVyLQ"
	switch r := req.(type) {
	case *kmsg.VoteRequest:
		r.ClusterID = &bogus
	case *kmsg.BeginQuorumEpochRequest:
		r.ClusterID = &bogus
	case *kmsg.EndQuorumEpochRequest:
		r.ClusterID = &bogus
	case *kmsg.FetchRequest:
		if r.Version < 12 {
			return nil
		}
		r.ClusterID = &bogus
	case *kmsg.FetchSnapshotRequest:
		r.ClusterID = &bogus
	default:
		return nil
	}
	c := *m
	c.body, c.bogus = req.AppendTo(nil), true
	return &c
}

// forgeMaxEpoch returns a copy of request m (decoded as req) naming epoch
// MaxInt32 where an epoch can be moved to.
func forgeMaxEpoch(m *netMsg, req kmsg.Request) *netMsg {
	const top = math.MaxInt32
	switch r := req.(type) {
	case *kmsg.VoteRequest:
		r.Topics[0].Partitions[0].CandidateEpoch = top
	case *kmsg.BeginQuorumEpochRequest:
		r.Topics[0].Partitions[0].LeaderEpoch = top
	case *kmsg.EndQuorumEpochRequest:
		r.Topics[0].Partitions[0].LeaderEpoch = top
	case *kmsg.FetchRequest:
		r.Topics[0].Partitions[0].CurrentLeaderEpoch = top
	case *kmsg.FetchSnapshotRequest:
		r.Topics[0].Partitions[0].CurrentLeaderEpoch = top
	default:
		return nil
	}
	c := *m
	c.body, c.bogus, c.maxEpoch = req.AppendTo(nil), true, true
	return &c
}

// answerErr sends a transport error back to the sender of request m.
func (s *sim) answerErr(m *netMsg, err error) {
	s.schedule(s.now+s.delay(), &event{kind: evArrive, node: m.from,
		msg: &netMsg{from: m.to, to: m.from, toInc: m.fromInc, corr: m.corr, toID: m.toID, key: m.key, version: m.version, isResp: true, err: err}})
}

// transmit puts a message on a link, applying partitions and loss.
func (s *sim) transmit(m *netMsg) {
	s.stats.msgs++
	if s.blocked[m.from][m.to] > 0 {
		s.stats.drops++
		return
	}
	if s.lossy && !s.faultsOver && s.rng.Float64() < s.opts.dropP {
		s.stats.drops++
		return
	}
	s.schedule(s.now+s.delay(), &event{kind: evArrive, node: m.to, msg: m})
	if s.lossy && !s.faultsOver && s.rng.Float64() < s.opts.dupP {
		s.stats.dups++
		s.schedule(s.now+s.delay(), &event{kind: evArrive, node: m.to, msg: m})
	}
	if s.lossy && !s.faultsOver && !m.isResp && s.rng.Float64() < 0.02 {
		if f := forge(m, s.rng.IntN(2) == 0); f != nil {
			s.schedule(s.now+s.delay(), &event{kind: evArrive, node: m.to, msg: f})
		}
	}
}

// simTransport is one node incarnation's raft.Transport.
type simTransport struct {
	s   *sim
	n   *simNode
	inc int
}

func (t *simTransport) Send(o raft.Outbound) {
	s, n := t.s, t.n
	if n.inc != t.inc || !n.up {
		return // a dead incarnation's driver is never called again
	}
	if _, dup := n.pending[o.Corr]; dup {
		s.fail("node %d sent correlation id %d twice while the first is outstanding", n.id, o.Corr)
		return
	}
	key := o.Request.Key()
	if _, ok := o.Request.(*kmsg.FetchSnapshotRequest); ok {
		s.stats.fetchSnapshots++
	}
	vr, ok := protocol.Supported(key)
	if !ok {
		s.fail("node %d sent api %d that kraftd does not serve", n.id, key)
		return
	}
	to := -1
	if o.To >= 0 {
		if i, ok := s.byID[o.To]; ok {
			to = i
		}
	} else if b, boot := int(-o.To-2), s.bootstrapNodes(); b >= 0 && b < len(boot) {
		to = boot[b]
	}
	n.pending[o.Corr] = pendingOut{toID: o.To, to: to, key: key, ver: vr.Max}
	s.schedule(s.now+simRequestTimeout, &event{kind: evTimeout, node: n.idx, inc: n.inc, token: o.Corr})
	if to < 0 {
		// Unknown destination: the real transport fails at once.
		s.schedule(s.now+time.Millisecond, &event{kind: evArrive, node: n.idx,
			msg: &netMsg{from: n.idx, to: n.idx, toInc: n.inc, corr: o.Corr, toID: o.To, key: key, version: vr.Max, isResp: true, err: errConnRefused}})
		return
	}
	o.Request.SetVersion(vr.Max)
	m := &netMsg{from: n.idx, to: to, fromInc: n.inc, toInc: s.nodes[to].inc, corr: o.Corr, toID: o.To,
		key: key, version: vr.Max, body: o.Request.AppendTo(nil)}
	if !s.nodes[to].up {
		s.answerErr(m, errConnRefused)
		return
	}
	s.transmit(m)
}

func (t *simTransport) Reply(ref raft.RequestRef, resp kmsg.Response) {
	s, n := t.s, t.n
	r, ok := ref.(*simRef)
	if !ok {
		s.fail("node %d replied with a foreign ref %T", n.id, ref)
		return
	}
	if r.replied {
		s.fail("node %d answered %s corr=%d twice", n.id, kmsg.NameForKey(r.msg.key), r.msg.corr)
		return
	}
	r.replied = true
	if r.msg.bogus {
		r.code = topErrorCode(resp)
		if r.code == 0 {
			r.code = partitionErrorCode(resp)
		}
		return // nobody sent it: the answer goes nowhere
	}
	if n.inc != t.inc || r.inc != n.inc || !n.up {
		return
	}
	m := r.msg
	if resp.Key() != m.key {
		s.fail("node %d answered a %s request with a %s response", n.id, kmsg.NameForKey(m.key), kmsg.NameForKey(resp.Key()))
		return
	}
	if resp.GetVersion() != m.version {
		s.fail("node %d answered %s v%d with response version %d", n.id, kmsg.NameForKey(m.key), m.version, resp.GetVersion())
		return
	}
	s.transmit(&netMsg{from: m.to, to: m.from, fromInc: n.inc, toInc: m.fromInc, corr: m.corr, toID: m.toID,
		key: m.key, version: m.version, isResp: true, body: resp.AppendTo(nil)})
}

// ---------------------------------------------------------------------------
// Workload and nemesis.

// startWorkload (re)starts the leader-side appends.
func (s *sim) startWorkload() {
	s.workloadOn = true
	if !s.workloadScheduled {
		s.workloadScheduled = true
		s.schedule(s.now+s.opts.appendEvery, &event{kind: evWorkload})
	}
}

func (s *sim) workload() {
	for _, n := range s.nodes {
		if !n.up || n.pausedUntil > s.now {
			continue
		}
		st := n.drv.Status()
		if st.Role != raft.RoleLeader {
			continue
		}
		k := 1 + s.rng.IntN(3)
		recs := make([][]byte, k)
		for i := range recs {
			s.payloadSeq++
			recs[i] = fmt.Appendf(nil, "w%d:", s.payloadSeq)
			if s.opts.pad > 0 {
				recs[i] = append(recs[i], bytes.Repeat([]byte{'.'}, s.rng.IntN(s.opts.pad+1))...)
			}
		}
		last, err := n.drv.Append(s.nodeTime(n), st.Epoch, recs)
		if err != nil && errors.Is(err, rafttest.ErrInjected) {
			s.fatal(n, "Append", err)
			continue
		}
		if err != nil {
			if !errors.Is(err, raft.ErrNotLeader) && !errors.Is(err, raft.ErrBufferFull) && !errors.Is(err, raft.ErrShutdown) {
				s.fail("node %d: Append: unexpected error %v", n.id, err)
			}
			continue
		}
		s.stats.appends++
		for i, r := range recs {
			s.chk.appended(string(r), last-int64(len(recs)-1-i), st.Epoch)
		}
		s.poll(n)
		s.chk.afterEvent(n)
	}
}

func (s *sim) upNodes(voterOnly bool) []*simNode {
	var out []*simNode
	for _, n := range s.nodes {
		if n.up && (!voterOnly || n.voter) {
			out = append(out, n)
		}
	}
	return out
}

func (s *sim) leaderNode() *simNode {
	var best *simNode
	for _, n := range s.nodes {
		if n.up {
			if st := n.drv.Status(); st.Role == raft.RoleLeader && (best == nil || st.Epoch > best.drv.Status().Epoch) {
				best = n
			}
		}
	}
	return best
}

func (s *sim) pick() *simNode {
	// Bias toward the leader: that is where faults hurt.
	if l := s.leaderNode(); l != nil && s.rng.IntN(2) == 0 {
		return l
	}
	return s.nodes[s.rng.IntN(len(s.nodes))]
}

func (s *sim) nemesis() {
	var actions []func()
	if s.m.partitions {
		actions = append(actions, s.partition, s.partition)
	}
	if s.m.crashes {
		actions = append(actions, s.crashRestart, s.crashRestart, s.pause, s.diskFault)
		if s.rng.IntN(20) == 0 {
			actions = append(actions, s.crashAll)
		}
	}
	if s.m.resigns {
		actions = append(actions, s.resign)
	}
	if s.m.membership {
		actions = append(actions, s.changeVoters, s.changeVoters)
	}
	if s.m.upgrade {
		actions = append(actions, s.upgradeKRaftVersion)
	}
	actions[s.rng.IntN(len(actions))]()
}

func (s *sim) partition() {
	n := len(s.nodes)
	var desc string
	var links [][2]int
	switch s.rng.IntN(4) {
	case 0: // isolate one node both ways
		x := s.pick().idx
		for i := range n {
			if i != x {
				links = append(links, [2]int{x, i}, [2]int{i, x})
			}
		}
		desc = fmt.Sprintf("isolate %d", s.nodes[x].id)
	case 1: // split in two groups
		side := make([]bool, n)
		for i := range side {
			side[i] = s.rng.IntN(2) == 0
		}
		for i := range n {
			for j := range n {
				if side[i] != side[j] {
					links = append(links, [2]int{i, j})
				}
			}
		}
		desc = fmt.Sprintf("split %v", side)
	case 2: // one way: x cannot reach y (or x cannot hear anyone)
		x := s.pick().idx
		if s.rng.IntN(2) == 0 {
			for i := range n {
				if i != x {
					links = append(links, [2]int{i, x})
				}
			}
			desc = fmt.Sprintf("%d deaf", s.nodes[x].id)
		} else {
			for i := range n {
				if i != x {
					links = append(links, [2]int{x, i})
				}
			}
			desc = fmt.Sprintf("%d mute", s.nodes[x].id)
		}
	default: // partial: a few random links cut both ways (bridge-like)
		k := 1 + s.rng.IntN(n)
		for range k {
			a, b := s.rng.IntN(n), s.rng.IntN(n)
			if a != b {
				links = append(links, [2]int{a, b}, [2]int{b, a})
			}
		}
		desc = fmt.Sprintf("cut %d links", len(links)/2)
	}
	for _, l := range links {
		s.blocked[l[0]][l[1]]++
	}
	s.stats.partitions++
	d := time.Duration(500+s.rng.IntN(8000)) * time.Millisecond
	s.tracef("NEMESIS partition: %s for %v", desc, d)
	s.checkQuorumLater(links, d)
	s.after(d, func() {
		for _, l := range links {
			s.blocked[l[0]][l[1]]--
		}
		s.tracef("NEMESIS heal partition: %s", desc)
	})
}

// checkQuorumLater (L2): when a partition cuts a leader off from the
// Fetches of a majority of voters for longer than 1.5 x the fetch timeout,
// the leader must have resigned by then. Messages already in flight may
// still arrive, and a Fetch parked before the cut still counts when it
// completes up to MaxWaitMs later (Kafka re-runs tryCompleteFetchRequest,
// which updates the replica state, when new data completes a parked
// fetch), hence the slack.
func (s *sim) checkQuorumLater(links [][2]int, d time.Duration) {
	cut := map[[2]int]bool{}
	for _, l := range links {
		cut[l] = true
	}
	for _, l := range s.nodes {
		if !l.up || !l.voter || l.drv.Status().Role != raft.RoleLeader {
			continue
		}
		reached := func() int {
			n := 0
			vs := l.drv.Status().Voters
			for _, v := range s.nodes {
				if v.id >= 0 && vs.ContainsID(raft.NodeID(v.id)) && (v == l || !cut[[2]int{v.idx, l.idx}]) {
					n++
				}
			}
			return n
		}
		heard, vs := reached(), l.drv.Status().Voters
		bound := 3*simFetchTimeout/2 + simMaxFetchWait + 11*s.opts.delayMax + 100*time.Millisecond
		if heard > 1 {
			// Voters still heard can complete a window together with a
			// voter counted just before the cut, as in Kafka, which
			// postpones the expiry by up to one more window.
			bound += 3 * simFetchTimeout / 2
		}
		if heard > vs.Len()/2 || d <= bound {
			continue
		}
		epoch, inc, from := l.drv.Status().Epoch, l.inc, s.now
		s.after(bound, func() {
			if !l.up || l.inc != inc || l.pauseEnd > from || s.faultsOver {
				return // restarted, paused, or the end of faults healed the cut
			}
			if st := l.drv.Status(); s.m.membership && reached() > st.Voters.Len()/2 {
				return // a voter change gave the leader a majority it reaches
			}
			s.stats.checkQuorumChecks++
			if st := l.drv.Status(); st.Role == raft.RoleLeader && st.Epoch == epoch {
				s.fail("L2: leader %d of epoch %d still leads %v after a partition cut it off from a majority of voters", l.id, epoch, s.now-from)
			}
		})
	}
}

func (s *sim) crashRestart() {
	n := s.pick()
	if !n.up {
		return
	}
	s.crash(n, "nemesis")
	s.after(time.Duration(s.rng.IntN(5000))*time.Millisecond, func() {
		if !n.up {
			s.stats.restarts++
			s.start(n)
		}
	})
}

// crashAll kills every node, then restarts only a majority of voters at
// first (Kafka's canRecoverAfterAllNodesKilled).
func (s *sim) crashAll() {
	for _, n := range s.nodes {
		s.crash(n, "all")
	}
	order := s.rng.Perm(len(s.nodes))
	for k, i := range order {
		n := s.nodes[i]
		d := time.Duration(100+s.rng.IntN(1000)) * time.Millisecond
		if k >= s.opts.voters/2+1 {
			d += time.Duration(s.rng.IntN(10000)) * time.Millisecond
		}
		s.after(d, func() {
			if !n.up {
				s.start(n)
			}
		})
	}
}

// pause stops a node from running anything (SIGSTOP) for a while.
func (s *sim) pause() {
	n := s.pick()
	if !n.up {
		return
	}
	d := time.Duration(500+s.rng.IntN(5000)) * time.Millisecond
	n.pausedUntil = s.now + d
	n.pauseEnd = n.pausedUntil
	s.stats.pauses++
	s.tracef("NEMESIS pause %d for %v", n.id, d)
}

// diskFault makes the node's next Append or Flush fail (EIO); the driver
// must stop taking part (fatal error) and is restarted on a healthy disk.
func (s *sim) diskFault() {
	n := s.pick()
	if !n.up || n.diskFailing {
		return
	}
	n.diskFailing = true
	if s.rng.IntN(2) == 0 {
		n.flog.FailFlush = true
	} else {
		n.flog.FailAppend = true
	}
	s.stats.diskFaults++
	s.tracef("NEMESIS disk fault on %d (append=%v flush=%v)", n.id, n.flog.FailAppend, n.flog.FailFlush)
}

func (s *sim) resign() {
	l := s.leaderNode()
	if l == nil || l.pausedUntil > s.now {
		return
	}
	st := l.drv.Status()
	if s.rng.IntN(3) == 0 {
		// Graceful shutdown, then restart once done (or after a bound).
		s.stats.shutdowns++
		s.tracef("NEMESIS shutdown leader %d epoch %d", l.id, st.Epoch)
		l.drv.Shutdown(s.nodeTime(l))
		s.poll(l)
		inc := l.inc
		var wait func(int)
		wait = func(tries int) {
			if !l.up || l.inc != inc {
				return
			}
			if l.drv.Done() || tries > 100 {
				s.crash(l, "after shutdown")
				s.after(time.Duration(s.rng.IntN(2000))*time.Millisecond, func() {
					if !l.up {
						s.start(l)
					}
				})
				return
			}
			s.after(100*time.Millisecond, func() { wait(tries + 1) })
		}
		s.after(100*time.Millisecond, func() { wait(0) })
		return
	}
	s.stats.resigns++
	s.tracef("NEMESIS resign leader %d epoch %d", l.id, st.Epoch)
	if err := l.drv.Resign(s.nodeTime(l), st.Epoch); err != nil {
		s.fatal(l, "Resign", err)
		return
	}
	s.poll(l)
}

// endFaults ends the fault phase: partitions heal, loss stops, every node
// runs again. From here the liveness clock runs.
func (s *sim) endFaults() {
	s.faultsOver = true
	for i := range s.blocked {
		clear(s.blocked[i]) // pending heals then go negative: harmless, > 0 blocks
	}
	for _, n := range s.nodes {
		n.pausedUntil = 0
		n.flog.FailAppend, n.flog.FailFlush = false, false
		if !n.up {
			s.start(n)
		}
	}
	s.healAt = s.now
	s.tracef("END OF FAULTS: network healed, all nodes up; committed end %d", s.chk.committedEnd)
	s.chk.startLiveness()
	if s.m.upgrade {
		s.after(time.Second, s.finalUpgrade)
	}
}

// snapshot makes one node write a snapshot at its high watermark, as the
// controller's state machine would, and sometimes delete the log below it
// (segment retention), so lagging and restarted replicas need FetchSnapshot.
// The snapshot's one data record is the digest of the committed prefix it
// covers; listeners that load it are checked against C.
func (s *sim) snapshot() {
	n := s.nodes[s.rng.IntN(len(s.nodes))]
	if !n.up {
		return
	}
	hw := n.drv.Status().HighWatermark
	if hw <= 0 {
		return
	}
	if latest, ok := n.disk.LatestSnapshot(); ok && latest.Offset >= hw {
		return
	}
	e, ok := s.chk.entryEndingAt(hw)
	if !ok {
		return // not a batch boundary of C (cannot happen below a node's HW)
	}
	id := raft.OffsetAndEpoch{Offset: hw, Epoch: e.epoch}
	w, err := n.disk.CreateSnapshot(id)
	if err != nil {
		return // the driver is downloading this very snapshot
	}
	header, next := n.drv.SnapshotHeaderBatch(id, 0, 0)
	if _, err := w.Write(snapshotBytes(header, next, id, e.cum)); err != nil {
		s.fail("node %d: write snapshot: %v", n.id, err)
		return
	}
	if err := w.Freeze(); err != nil {
		s.fail("node %d: freeze snapshot: %v", n.id, err)
		return
	}
	s.stats.snapshots++
	deleted := s.rng.IntN(3) != 0 && n.disk.DeleteBeforeSnapshot(s.nodeTime(n))
	if deleted {
		s.stats.retentions++
	}
	s.tracef("node %d snapshot %d-%d (log start now %d)", n.id, id.Offset, id.Epoch, n.disk.StartOffset())
	s.chk.afterEvent(n)
}

const snapshotDigestPrefix = "digest:"

// snapshotBytes lays out a snapshot file: the driver's header control batch
// (with the voter set at kraft.version 1), one data batch holding the
// digest at offset next, SnapshotFooter control batch.
func snapshotBytes(header []byte, next int64, id raft.OffsetAndEpoch, digest uint64) []byte {
	b := header
	val := fmt.Appendf(nil, "%s%d/%d", snapshotDigestPrefix, id.Offset, digest)
	b = protocol.AppendBatch(b, protocol.Batch{BaseOffset: next, PartitionLeaderEpoch: id.Epoch,
		Records: []protocol.Record{{Value: val}}})
	b = protocol.AppendControlBatch(b, next+1, id.Epoch, 0, protocol.ControlSnapshotFooter,
		protocol.SnapshotFooterRecord{}.AppendTo(nil))
	return b
}

// snapshotDigest reads the digest record back; ok is false for a snapshot
// that is not laid out as snapshotBytes writes it.
func snapshotDigest(r raft.SnapshotReader) (string, error) {
	buf := make([]byte, r.Size())
	if _, err := r.ReadAt(buf, 0); err != nil && int64(len(buf)) != r.Size() {
		return "", err
	}
	var digest string
	for rest := buf; len(rest) > 0; {
		b, next, err := protocol.DecodeBatch(rest)
		if err != nil {
			return "", err
		}
		for _, rec := range b.Records {
			if !b.Control && bytes.HasPrefix(rec.Value, []byte(snapshotDigestPrefix)) {
				digest = string(rec.Value)
			}
		}
		rest = next
	}
	if digest == "" {
		return "", errors.New("no digest record")
	}
	return digest, nil
}

// partitionErrorCode is the error code of a raft response's only partition,
// -1 when it has none.
func partitionErrorCode(resp kmsg.Response) int16 {
	switch r := resp.(type) {
	case *kmsg.VoteResponse:
		if len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 {
			return r.Topics[0].Partitions[0].ErrorCode
		}
	case *kmsg.BeginQuorumEpochResponse:
		if len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 {
			return r.Topics[0].Partitions[0].ErrorCode
		}
	case *kmsg.EndQuorumEpochResponse:
		if len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 {
			return r.Topics[0].Partitions[0].ErrorCode
		}
	case *kmsg.FetchResponse:
		if len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 {
			return r.Topics[0].Partitions[0].ErrorCode
		}
	case *kmsg.FetchSnapshotResponse:
		if len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 {
			return r.Topics[0].Partitions[0].ErrorCode
		}
	}
	return -1
}

func topErrorCode(resp kmsg.Response) int16 {
	if code, ok := protocol.TopLevelErrorCode(resp); ok {
		return code
	}
	return -1
}
