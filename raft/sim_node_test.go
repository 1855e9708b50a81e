package raft_test

// The simulator's world: events, nodes, the network's messages, and the
// nodes' set-up, start, crash and poll.

import (
	"container/heap"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/raft/rafttest"
	"github.com/kraftd/kraftd/storage"
	"github.com/kraftd/kraftd/uuid"
)

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
	evFlushed // a leader fsync run off the driver (opts.flushDelayMax) ends
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
	job   raft.FlushJob // evFlushed
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
	// (membership mix: a new directory id); ghost is the latest replaced
	// disk, whose flushed data the old key acknowledged.
	ghostEnd int64
	ghost    *simNode
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
	removals, newDirs, removedLeaderStalls, staleEpochStalls                                                         int
	upgrades                                                                                                         int
	deferringLeads, deferringResigns                                                                                 int
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
	if m.deferral {
		s.opts.preferred = drawPreferred(seed, s.opts.voters)
	}
	// Own stream too. Half the seeds defer leader fsyncs, some of them
	// past the fetch timeout (a stalled disk).
	if fr := rand.New(rand.NewPCG(seed, 0xf5c)); fr.IntN(2) == 0 {
		s.opts.flushDelayMax = []time.Duration{time.Millisecond, 20 * time.Millisecond, 300 * time.Millisecond, 3 * time.Second}[fr.IntN(4)]
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
		cfg.MaxReadBytes = s.opts.maxFetch
	}
	if s.opts.snapChunk > 0 {
		cfg.MaxSnapshotChunk = s.opts.snapChunk
	}
	cfg.FsyncAsObserver = !s.opts.observerNoFsync
	cfg.FetchPace, cfg.FetchPaceRate = s.opts.fetchPace, s.opts.fetchPaceRate
	if s.opts.flushBytes > 0 {
		cfg.AppendFlushBytes, cfg.MaxUncommittedBytes = s.opts.flushBytes, s.opts.maxUncommitted
	}
	cfg.PreVote = s.opts.preVote
	cfg.AutoJoin = s.m.membership
	cfg.DeferLeadership = s.m.deferral
	if s.opts.flushDelayMax > 0 {
		cfg.Flusher = s.flusher(n)
	}
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
	var ics []storage.InitialController
	for _, v := range voters {
		var dir [16]byte
		dir[0], dir[15] = byte(v.ID), self[15]
		ics = append(ics, storage.InitialController{NodeID: v.ID, Host: v.Endpoints[0].Host,
			Port: uint16(v.Endpoints[0].Port), DirectoryID: uuid.UUID(dir)})
	}
	w, err := disk.CreateSnapshot(raft.OffsetAndEpoch{})
	if err != nil {
		return err
	}
	defer w.Close()
	if _, err := w.Write(storage.BootstrapSnapshot(1, ics, "CONTROLLER", nil, simEpochBase)); err != nil {
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
	s.learnPreferred(n)
}

// flusher is a node's Config.Flusher when the seed defers leader fsyncs:
// each fsync takes opts.flushDelayMin to flushDelayMax, and a crash before it ends
// loses what it covered, as a killed process's pending fsync would.
func (s *sim) flusher(n *simNode) func(raft.FlushJob) {
	return func(job raft.FlushJob) {
		o := s.opts
		d := o.flushDelayMin + time.Duration(s.rng.Int64N(int64(o.flushDelayMax-o.flushDelayMin)+1))
		s.schedule(s.now+d, &event{kind: evFlushed, node: n.idx, inc: n.inc, job: job})
	}
}

// flushed runs the job of an evFlushed and reports it to the driver.
func (s *sim) flushed(n *simNode, job raft.FlushJob) {
	err := job.Run()
	s.tracef("node %d leader flush to %d done err=%v", n.id, job.End(), err)
	if err := n.drv.FlushDone(s.nodeTime(n), job, err); err != nil {
		s.fatal(n, "FlushDone", err)
		return
	}
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
