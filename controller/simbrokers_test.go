package controller_test

// The broker simulator (docs/design/controller.md 6.1): three kraftd
// controllers on real raft drivers (controllertest), the active one driven
// by simulated brokers through the real request handlers. The brokers
// register with new incarnations, heartbeat, fetch the committed metadata,
// lead partitions and send AlterPartition to shrink and grow their ISRs,
// acknowledge writes, crash, restart, lose the controllers or the whole
// network, and shut down under control; an admin creates and deletes topics
// and adds partitions; the active controller crashes or is partitioned away
// and another takes over from its log. Invariants run on every image any
// node publishes and after every event (simbrokers_check_test.go).
// Everything random comes from one PCG seeded by the seed, so a failing
// seed prints the command that replays it.
//
//	go test ./controller -run TestSimBrokers                  # defaultBrokerSeeds seeds
//	make sim-controller SEEDS=2000 SEED_BASE=1                # any seeds, a summary
//	go test ./controller -count=1 -run 'TestSimBrokers$/seed=7$' -sim.seed=7 -v -sim.trace

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller"
	"github.com/kraftd/kraftd/controller/cluster"
	"github.com/kraftd/kraftd/controller/controllertest"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/node"
)

var (
	simSeeds = flag.Int("sim.seeds", 0, "TestSimBrokers: how many seeds (0: defaultBrokerSeeds)")
	simBase  = flag.Uint64("sim.base", 1, "TestSimBrokers: the first seed")
	simSeed  = flag.Int64("sim.seed", -1, "TestSimBrokers: run only this seed")
	simTrace = flag.Bool("sim.trace", false, "TestSimBrokers: log every event as it runs")
)

// defaultBrokerSeeds fits go test ./controller/... (a few seconds; the
// first seed runs twice to show the run is deterministic); make
// sim-controller runs any number. Under -race (make test's first pass) a
// few seeds run the code paths for the detector.
const (
	defaultBrokerSeeds = 24
	raceBrokerSeeds    = 2
)

// Bounds of one run.
const (
	simEvents    = 260
	simTick      = 100 * time.Millisecond
	hbInterval   = 2 * time.Second // broker.heartbeat.interval.ms
	sessionTime  = 9 * time.Second // broker.session.timeout.ms
	reqTimeout   = 3 * time.Second // the broker's controller request timeout
	lagMax       = 3 * time.Second // replica.lag.time.max.ms, shortened
	maxShutdown  = 20 * time.Second
	maxTopics    = 8
	settleFinal  = 60 * time.Second // the bound of the final phase's convergence
	traceEntries = 80
)

func TestSimBrokers(t *testing.T) {
	n, base := defaultBrokerSeeds, *simBase
	if raceBuild {
		n = raceBrokerSeeds
	}
	if testing.Short() {
		n = min(n, 3)
	}
	if *simSeeds > 0 {
		n = *simSeeds
	}
	if *simSeed >= 0 {
		base, n = uint64(*simSeed), 1
	}
	var tot bsimStats
	var failed []uint64
	start := time.Now()
	for s := base; s < base+uint64(n); s++ {
		ok := t.Run(fmt.Sprintf("seed=%d", s), func(t *testing.T) {
			st := runBrokerSim(t, s)
			if s == base && *simSeeds == 0 && *simSeed < 0 {
				// The same seed gives the same run.
				if again := runBrokerSim(t, s); again != st {
					t.Fatalf("two runs of seed %d differ:\n%s\n%s", s, st, again)
				}
			}
			tot.add(st)
			t.Log(st)
		})
		if !ok {
			failed = append(failed, s)
		}
	}
	summary := fmt.Sprintf("TestSimBrokers: seeds %d..%d in %v, %d failed %v: %s", base, base+uint64(n)-1,
		time.Since(start).Round(time.Second), len(failed), failed, tot)
	if *simSeeds > 0 && !testing.Verbose() {
		fmt.Println(summary) // make sim-controller: say what ran even without -v
	} else {
		t.Log(summary)
	}
}

// bsim is one run.
type bsim struct {
	t       *testing.T
	seed    uint64
	r       *rand.Rand
	c       *controllertest.Cluster
	now     time.Time
	brokers []*simBroker // broker id-1
	minISR  int          // the static (cluster default) min.insync.replicas
	maxBad  int          // brokers that may be down or cut at once

	seq      int
	late     time.Duration // how long the next request waited before its turn
	inflight map[int]*bReq
	slow     []slowReq // held up by the network
	answers  []bAnswer
	answered map[int]bool

	// The write model: writes acknowledged per partition, and how many of
	// them each broker holds (a prefix: a follower copies its leader's log).
	acked map[tpKey]int
	held  map[tpKey]map[int32]int

	// sloppy makes leaders acknowledge writes alone (a broker bug): the
	// checker must catch what that loses (TestSimBrokersCatchesLostWrites).
	// violation, when set, collects the first violation instead of
	// failing the test.
	sloppy    bool
	violation *string

	calm     bool // the final phase: no request held up or late
	chk      *bsimChecker
	ctrlDown int32 // a crashed controller node, -1 when none
	ctrlCut  int32 // a controller node partitioned from the others, -1
	topics   int   // topics created so far (names)
	trace    []string
	st       bsimStats
	finished bool
}

type tpKey struct {
	topic [16]byte
	part  int32
}

func (k tpKey) String() string { return fmt.Sprintf("%x-%d", k.topic[:3], k.part) }

// bReq is a request in flight to a controller.
type bReq struct {
	seq      int
	broker   int32 // -1: the admin
	inc      int   // the broker's incarnation when sent
	node     int32
	deadline time.Time
	req      kmsg.Request
}

type bAnswer struct {
	seq  int
	resp kmsg.Response
	code int16
	msg  string
}

func runBrokerSim(t *testing.T, seed uint64) bsimStats {
	return newBrokerSim(t, seed).run()
}

func newBrokerSim(t *testing.T, seed uint64) *bsim {
	return &bsim{t: t, seed: seed, r: rand.New(rand.NewPCG(seed, 0xb40c)), inflight: map[int]*bReq{}, answered: map[int]bool{},
		acked: map[tpKey]int{}, held: map[tpKey]map[int32]int{}, ctrlDown: -1, ctrlCut: -1}
}

// stopped: the seed failed, or found the violation it was to find.
func (s *bsim) stopped() bool { return s.t.Failed() || s.violation != nil && *s.violation != "" }

func (s *bsim) run() bsimStats {
	t, seed := s.t, s.seed
	defer func() {
		if t.Failed() && !s.finished {
			t.Log(s.report())
		}
	}()
	s.minISR = 1 + s.r.IntN(2)
	s.maxBad = 1 + s.r.IntN(3)
	ac := &controller.ActiveOptions{
		Cluster: cluster.Settings{ClusterID: "test-cluster", SessionTimeout: sessionTime,
			Static: map[string]string{"min.insync.replicas": fmt.Sprint(s.minISR)}},
		MaxIdleInterval:         controller.DefaultMaxIdleInterval,
		HeartbeatDeadline:       hbInterval / 2,
		Seed:                    int64(seed),
		UncleanElectionInterval: 30 * time.Second, // finds nothing: no topic allows unclean election
	}
	if s.r.IntN(2) == 0 {
		ac.AutoLeaderRebalance, ac.LeaderImbalanceCheckInterval = true, 15*time.Second
	}
	s.c = controllertest.New(t, controller.Options{MaxBytesBetweenSnapshots: 8 << 10, Active: ac})
	s.chk = newChecker(s)
	s.c.OnPublish = s.chk.published
	s.c.Do("add-nodes", "3")
	s.c.Do("stabilize")
	s.c.Do("tick", "1", "2s")
	for range 3 {
		s.c.Do("stabilize")
	}
	s.now = s.c.Env.Now(1)
	nb := 4 + s.r.IntN(3)
	for id := int32(1); id <= int32(nb); id++ {
		s.brokers = append(s.brokers, newBroker(s, id))
	}
	s.event("start: %d brokers, static min.insync.replicas %d, at most %d brokers impaired, rebalance %v",
		nb, s.minISR, s.maxBad, ac.AutoLeaderRebalance)
	s.pass(3 * time.Second) // registration, unfencing
	for range simEvents {
		s.step()
		if s.stopped() {
			return s.st
		}
	}
	s.finish()
	return s.st
}

// step runs one random event, then the checks.
func (s *bsim) step() {
	s.st.events++
	switch k := s.r.IntN(100); {
	case k < 38:
		s.pass(time.Duration(1+s.r.IntN(15)) * simTick)
	case k < 58:
		for range 1 + s.r.IntN(4) {
			s.produce()
		}
	case k < 72:
		s.brokerFault()
	case k < 75 && s.liveTopics() < maxTopics, k < 86 && s.liveTopics() < 2:
		s.createTopic()
	case k < 78:
		s.deleteTopic()
	case k < 81:
		s.createPartitions()
	case k < 83:
		s.alterMinISR()
	case k < 85:
		s.electPreferred()
	case k < 86:
		s.unregister()
	case k < 90:
		s.controllerFault()
	default:
		s.pass(time.Duration(5+s.r.IntN(20)) * simTick)
	}
	s.settle()
}

// settle delivers answers and lets brokers copy their leaders' logs, then
// checks everything that must hold between events.
func (s *bsim) settle() {
	s.deliver()
	s.replicate()
	s.chk.afterEvent()
}

// pass lets time go by in ticks: raft's timers and messages, the active
// controller's periodic tasks, and each broker's heartbeats, metadata
// fetches, ISR changes and request timeouts.
func (s *bsim) pass(d time.Duration) {
	for ; d > 0; d -= simTick {
		s.c.Do("advance", simTick.String())
		s.c.Do("stabilize")
		s.now = s.c.Env.Now(1)
		s.deliver()
		s.release()
		s.deliver()
		s.expire()
		for _, b := range s.brokers {
			b.tick()
			s.deliver()
		}
		s.c.Do("stabilize")
		s.deliver()
		s.replicate()
		s.chk.afterEvent()
		if s.stopped() {
			return
		}
	}
}

// event records what happened, for the trace of a failing seed.
func (s *bsim) event(format string, args ...any) {
	line := fmt.Sprintf("t=%v ", s.now.Sub(time.Unix(1_700_000_000, 0))) + fmt.Sprintf(format, args...)
	if *simTrace {
		s.t.Log(line)
	}
	if len(s.trace) == traceEntries {
		s.trace = s.trace[1:]
	}
	s.trace = append(s.trace, line)
}

// fail reports a violated invariant and stops the seed.
func (s *bsim) fail(format string, args ...any) {
	s.t.Helper()
	if s.violation != nil {
		if *s.violation == "" {
			*s.violation = fmt.Sprintf(format, args...)
		}
		return
	}
	s.event("VIOLATION: "+format, args...)
	s.finished = true
	s.t.Fatalf("VIOLATION seed=%d: %s\n%s", s.seed, fmt.Sprintf(format, args...), s.report())
}

func (s *bsim) report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d after %d events: %s\n", s.seed, s.st.events, s.st)
	fmt.Fprintf(&b, "replay: go test ./controller -count=1 -run 'TestSimBrokers$/seed=%d$' -sim.seed=%d -v -sim.trace\n", s.seed, s.seed)
	fmt.Fprintf(&b, "last %d events:\n", len(s.trace))
	for _, l := range s.trace {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

// active picks a node that claims the active controller role, -1 when none
// does (a partitioned old leader may still claim it for a while).
func (s *bsim) active() int32 {
	var ids []int32
	for id := int32(1); id <= 3; id++ {
		if s.c.Env.Driver(id) != nil && s.c.App(id).Active() {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return -1
	}
	return ids[s.r.IntN(len(ids))]
}

// send hands req to controller node id as a connection would, unless the
// sender cannot reach it (then it times out); now and then the network
// holds a broker's request up, perhaps past the broker's timeout (release).
// The answer comes back through deliver.
func (s *bsim) send(b *simBroker, id int32, req kmsg.Request) *bReq {
	s.seq++
	late := s.late
	s.late = 0
	q := &bReq{seq: s.seq, broker: -1, node: id, deadline: s.now.Add(reqTimeout), req: req}
	if b != nil {
		q.broker, q.inc = b.id, b.incN
	}
	s.inflight[q.seq] = q
	if b != nil && b.net != netOK || id < 0 {
		return q // lost: the sender's timeout ends it
	}
	if b != nil && !s.calm && s.r.IntN(10) == 0 {
		at := s.now.Add(time.Duration(1+s.r.IntN(int(2*reqTimeout/simTick))) * simTick)
		s.slow = append(s.slow, slowReq{at: at, seq: q.seq, node: id, req: req})
		s.st.delayed++
		return q
	}
	s.serve(q.seq, id, req, late)
	return q
}

// slowReq is a request the network holds up.
type slowReq struct {
	at   time.Time
	seq  int
	node int32
	req  kmsg.Request
}

// release hands over the held requests whose time came, unless their
// sender gave up on them first: a Kafka broker closes the connection of a
// request that timed out (the controller never reads it), and a process
// that died or lost the network takes its connections with it. So a
// broker's requests never overtake one another, as on Kafka's
// connections; a late heartbeat overtaking a later one could unfence a
// broker that has gone (it would on Kafka's controller too).
func (s *bsim) release() {
	var keep []slowReq
	for _, h := range s.slow {
		if s.now.Before(h.at) {
			keep = append(keep, h)
			continue
		}
		q, ok := s.inflight[h.seq]
		if !ok || !s.now.Before(q.deadline) {
			continue
		}
		if b := s.brokers[q.broker-1]; !b.up || b.incN != q.inc || b.net != netOK {
			continue
		}
		s.serve(h.seq, h.node, h.req, 0)
	}
	s.slow = keep
}

// serve is a request's arrival at controller node id; a node that is down
// never answers.
func (s *bsim) serve(seq int, id int32, req kmsg.Request, late time.Duration) {
	if s.c.Env.Driver(id) == nil {
		return
	}
	s.c.Serve(id, node.ControllerRequest{Req: req, Arrived: s.c.Env.Now(id).Add(-late),
		Respond: func(r kmsg.Response) { s.answers = append(s.answers, bAnswer{seq: seq, resp: r}) },
		Fail:    func(code int16, msg string) { s.answers = append(s.answers, bAnswer{seq: seq, code: code, msg: msg}) }})
}

// deliver hands each answer to its sender, in the order they came; an
// answer for a request that timed out or whose sender restarted is
// dropped. A request answered twice is a violation.
func (s *bsim) deliver() {
	for len(s.answers) > 0 {
		a := s.answers[0]
		s.answers = s.answers[1:]
		if s.answered[a.seq] {
			s.fail("request %d answered twice", a.seq)
			return
		}
		s.answered[a.seq] = true
		q, ok := s.inflight[a.seq]
		if !ok {
			continue
		}
		delete(s.inflight, a.seq)
		if q.broker < 0 {
			s.adminAnswer(q, a)
			continue
		}
		b := s.brokers[q.broker-1]
		if !b.up || b.incN != q.inc {
			continue
		}
		b.answer(q, a)
		if s.stopped() {
			return
		}
	}
}

// expire ends the requests whose timeout passed.
func (s *bsim) expire() {
	var gone []int
	for seq, q := range s.inflight {
		if !s.now.Before(q.deadline) {
			gone = append(gone, seq)
		}
	}
	slices.Sort(gone)
	for _, seq := range gone {
		q := s.inflight[seq]
		delete(s.inflight, seq)
		s.st.timeouts++
		if q.broker < 0 {
			continue
		}
		if b := s.brokers[q.broker-1]; b.up && b.incN == q.inc {
			b.answer(q, bAnswer{seq: seq, code: kerr.RequestTimedOut.Code, msg: "timed out"})
		}
	}
}

func (s *bsim) liveTopics() int {
	if im := s.latest(); im != nil {
		return im.Counts().Topics
	}
	return 0
}

// latest is the newest committed image any node published.
func (s *bsim) latest() *image.Image { return s.chk.latest }

// controllerFault crashes or partitions the active controller's node (a
// standby now and then), or brings the impaired node back.
func (s *bsim) controllerFault() {
	switch {
	case s.ctrlDown >= 0:
		s.event("controller %d restarts", s.ctrlDown)
		s.c.Do("restart", fmt.Sprint(s.ctrlDown))
		s.ctrlDown = -1
	case s.ctrlCut >= 0:
		s.event("controller %d rejoins", s.ctrlCut)
		s.c.Do("heal")
		s.ctrlCut = -1
	default:
		id := s.c.Leader()
		if id < 0 || s.r.IntN(5) == 0 {
			id = int32(1 + s.r.IntN(3))
		}
		if s.r.IntN(2) == 0 {
			s.event("controller %d crashes (leader %d)", id, s.c.Leader())
			s.c.Do("crash", fmt.Sprint(id))
			s.ctrlDown = id
		} else {
			var rest []string
			for o := int32(1); o <= 3; o++ {
				if o != id {
					rest = append(rest, fmt.Sprint(o))
				}
			}
			s.event("controller %d is partitioned from %v (leader %d)", id, rest, s.c.Leader())
			s.c.Do("partition", append([]string{fmt.Sprint(id), "|"}, rest...)...)
			s.ctrlCut = id
		}
		s.st.ctrlFaults++
	}
	s.c.Do("stabilize")
}

// finish heals everything and calms the network (no request held up or
// late), lets the cluster settle, and checks that it converges within
// settleFinal: one active controller, every broker registered and unfenced,
// every partition led with a full ISR unless only an unclean election could
// lead it.
func (s *bsim) finish() {
	s.event("final: heal everything")
	s.calm = true
	if s.ctrlDown >= 0 {
		s.c.Do("restart", fmt.Sprint(s.ctrlDown))
		s.ctrlDown = -1
	}
	s.c.Do("heal")
	s.ctrlCut = -1
	for _, b := range s.brokers {
		b.net = netOK
		if !b.up {
			b.start()
		}
	}
	s.pass(settleFinal / 2) // controlled shutdowns begun earlier complete
	for _, b := range s.brokers {
		if !b.up {
			b.start()
		}
	}
	why := "not checked"
	for waited := time.Duration(0); why != "" && waited < settleFinal && !s.stopped(); waited += time.Second {
		s.pass(time.Second)
		why = s.converged()
	}
	if s.stopped() {
		return
	}
	if why != "" {
		s.fail("not converged %v after healing: %s", settleFinal/2+settleFinal, why)
		return
	}
	im := s.latest()
	for tp := range im.Topics() {
		for pid, p := range tp.Partitions() {
			if p.Leader() < 0 {
				s.st.stranded++
				s.event("partition %s stranded: replicas %v, last-known ELR %v", tpKey{tp.ID(), pid}, p.Replicas(), p.LastKnownELR())
			}
		}
	}
	cnt := im.Counts()
	s.st.offset, s.st.topicsLeft, s.st.partitions = im.Provenance().Offset, cnt.Topics, cnt.Partitions
	s.st.compared = s.c.Compared
	for _, n := range s.c.Snapshots {
		s.st.snapshots += n
	}
}

// converged says what keeps the healed cluster from its end state, ""
// when nothing does.
func (s *bsim) converged() string {
	actives := 0
	for id := int32(1); id <= 3; id++ {
		if s.c.App(id).Active() {
			actives++
		}
	}
	if actives != 1 {
		return fmt.Sprintf("%d active controllers", actives)
	}
	im := s.latest()
	for _, b := range s.brokers {
		rb, ok := im.Broker(b.id)
		if !ok || rb.Fenced || rb.InControlledShutdown || rb.Epoch != b.epoch {
			return fmt.Sprintf("broker %d: registered %v %+v, its epoch %d", b.id, ok, rb, b.epoch)
		}
	}
	for tp := range im.Topics() {
		for pid, p := range tp.Partitions() {
			k := tpKey{tp.ID(), pid}
			switch {
			case p.Leader() < 0 && len(p.ISR()) == 0 && len(p.ELR()) == 0 && len(p.LastKnownELR()) != 1:
				// Every ELR member shut down uncleanly, or a min ISR change
				// cleared the ELR: only an unclean election could lead it.
			case p.Leader() < 0:
				return fmt.Sprintf("partition %s has no leader: ISR %v ELR %v last-known ELR %v", k, p.ISR(), p.ELR(), p.LastKnownELR())
			case len(p.ISR()) != len(p.Replicas()):
				return fmt.Sprintf("partition %s: ISR %v of replicas %v", k, p.ISR(), p.Replicas())
			}
		}
	}
	return ""
}

// bsimStats is what a run did; equal stats for the same seed show the run
// is deterministic.
type bsimStats struct {
	events, ctrlFaults, failovers                       int
	registrations, staleRegistrations, unfences, fences int
	crashes, restarts, cuts, shutdowns, forcedShutdowns int
	alterSent, alterOK, alterRefused                    int
	isrShrinks, isrExpands, recovered                   int
	writes, refusedWrites, lostWrites                   int
	elections, elrElections, lastKnownElections         int
	created, deleted, grown, adminRefused               int
	configs, preferred, unregistered                    int
	timeouts, notController, delayed                    int
	stranded                                            int
	images, compared, snapshots                         int
	offset                                              int64
	topicsLeft, partitions                              int
}

func (t *bsimStats) add(o bsimStats) {
	t.events += o.events
	t.ctrlFaults += o.ctrlFaults
	t.failovers += o.failovers
	t.registrations += o.registrations
	t.staleRegistrations += o.staleRegistrations
	t.unfences += o.unfences
	t.fences += o.fences
	t.crashes += o.crashes
	t.restarts += o.restarts
	t.cuts += o.cuts
	t.shutdowns += o.shutdowns
	t.forcedShutdowns += o.forcedShutdowns
	t.alterSent += o.alterSent
	t.alterOK += o.alterOK
	t.alterRefused += o.alterRefused
	t.isrShrinks += o.isrShrinks
	t.isrExpands += o.isrExpands
	t.recovered += o.recovered
	t.writes += o.writes
	t.refusedWrites += o.refusedWrites
	t.lostWrites += o.lostWrites
	t.elections += o.elections
	t.elrElections += o.elrElections
	t.lastKnownElections += o.lastKnownElections
	t.created += o.created
	t.deleted += o.deleted
	t.grown += o.grown
	t.adminRefused += o.adminRefused
	t.configs += o.configs
	t.preferred += o.preferred
	t.unregistered += o.unregistered
	t.timeouts += o.timeouts
	t.notController += o.notController
	t.delayed += o.delayed
	t.stranded += o.stranded
	t.images += o.images
	t.compared += o.compared
	t.snapshots += o.snapshots
	t.offset += o.offset
	t.topicsLeft += o.topicsLeft
	t.partitions += o.partitions
}

func (t bsimStats) String() string {
	return fmt.Sprintf("%d events, %d controller faults (%d new active epochs), %d registrations (%d refused), %d unfencings, %d fencings, "+
		"%d broker crashes, %d restarts, %d network cuts, %d controlled shutdowns (%d forced), "+
		"AlterPartition %d sent %d partitions changed %d refused (%d shrinks, %d expansions, %d recovered), "+
		"%d writes acknowledged (%d refused, %d lost to unclean elections), %d leader elections (%d from the ELR, %d last-known leader), "+
		"topics %d created %d deleted %d grown, %d min ISR changes, %d preferred elections asked, %d brokers unregistered (%d admin refusals), %d requests held up, %d request timeouts, %d NOT_CONTROLLER, "+
		"%d partitions stranded at the end, %d images checked (%d compared), %d snapshots written, final offsets summed %d, %d topics %d partitions left",
		t.events, t.ctrlFaults, t.failovers, t.registrations, t.staleRegistrations, t.unfences, t.fences,
		t.crashes, t.restarts, t.cuts, t.shutdowns, t.forcedShutdowns,
		t.alterSent, t.alterOK, t.alterRefused, t.isrShrinks, t.isrExpands, t.recovered,
		t.writes, t.refusedWrites, t.lostWrites, t.elections, t.elrElections, t.lastKnownElections,
		t.created, t.deleted, t.grown, t.configs, t.preferred, t.unregistered, t.adminRefused, t.delayed, t.timeouts, t.notController,
		t.stranded, t.images, t.compared, t.snapshots, t.offset, t.topicsLeft, t.partitions)
}

// TestSimBrokersCatchesLostWrites shows the write checks have teeth: with
// leaders that acknowledge writes without their followers, a crash and an
// election from the ISR lose acknowledged writes, and some seed must say
// so.
func TestSimBrokersCatchesLostWrites(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		var v string
		s := newBrokerSim(t, seed)
		s.sloppy, s.violation = true, &v
		s.run()
		if v != "" {
			t.Logf("seed %d: %s", seed, v)
			if !strings.Contains(v, "acknowledged writes") {
				t.Fatalf("seed %d found another violation first: %s", seed, v)
			}
			return
		}
	}
	t.Fatal("no seed lost an acknowledged write with leaders acknowledging alone")
}
