package rafttest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/kraftd/kraftd/raft"
)

// InteractionEnv is the world of an interaction script (golden tests in
// the manner of etcd-io/raft's, cockroachdb/datadriven files): real
// raft.Drivers over MemLogs and MemStateStores, a message queue that moves
// only when the script says so, and one virtual clock per node that moves
// only on tick and advance. Nothing is random except each driver's rng,
// seeded from its id and incarnation, so every run prints the same
// transcript: every message sent, every quorum-state write, every change
// of role, log end or high watermark, every commit delivered.
//
// Every request travels as wire bytes (encoded at the version two kraftd
// nodes negotiate, decoded on arrival) so the transcripts show what a
// Kafka peer would see.
//
// Run a script with Handle, one command at a time; each command's file
// (interaction_env_handler_*.go) documents it with an example. A test of
// another package plugs its state machine in through InteractionOpts and
// may handle commands of its own before passing the rest to Handle:
//
//	env := rafttest.NewInteractionEnv(t, &rafttest.InteractionOpts{
//		OnStart: func(id int32, d *raft.Driver) { d.Register(newMachine(id)) },
//	})
//	datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
//		return env.Handle(t, d)
//	})
//
// Not safe for concurrent use; never use it outside tests.
type InteractionEnv struct {
	t      testing.TB
	opts   InteractionOpts
	out    strings.Builder
	nodes  []*envNode // ascending id
	queue  []*envelope
	groups map[int32]int // partition group per node; nil when healed
	start  time.Time
}

// envNode is one node: its disk (log, quorum-state store) outlives crashes,
// its driver and clock do not reset on restart.
type envNode struct {
	env   *InteractionEnv
	id    int32
	cfg   raft.Config
	log   *MemLog
	store *MemStateStore
	drv   *raft.Driver
	up    bool
	inc   int // incarnation: answers addressed to an older driver are discarded
	now   time.Time
	seen  raft.Status // last printed status
	done  bool        // shutdown completion was printed
	open  []*iref     // requests received and not yet answered
}

// envelope is one message in flight: a request, a response, or the error
// answer the transport gives for a request it could not complete (then to
// is the node waiting for it and from the peer it failed to reach).
type envelope struct {
	from, to int32
	inc      int    // incarnation of the node waiting for the answer (requests: sender; otherwise: receiver)
	corr     uint64 // the waiting node's Outbound.Corr
	req      kmsg.Request
	resp     kmsg.Response
	err      error
	api      string // error answers: the failed request's api
	// via is the bootstrap-server id (-2, -3, ...) a request was sent to;
	// its answer reaches the sender as coming from that id.
	via int32
}

// failure is the error answer to the request or response m.
func failure(m *envelope, err error) *envelope {
	if m.req != nil {
		from := m.to
		if m.via != 0 {
			from = m.via
		}
		return &envelope{from: from, to: m.from, inc: m.inc, corr: m.corr, err: err, api: msgName(m.req)}
	}
	return &envelope{from: m.from, to: m.to, inc: m.inc, corr: m.corr, err: err, api: strings.TrimSuffix(msgName(m.resp), "Response")}
}

// iref routes a reply back; raw requests (raw-request) are answered into
// the output only.
type iref struct {
	from int32
	via  int32 // bootstrap-server id the request was sent to, 0 if none
	inc  int
	corr uint64
	api  string
	raw  bool
}

var (
	errITimedOut          = errors.New("request timed out")
	errIConnClosed        = errors.New("connection closed")
	errIConnRefused error = refusedError{}
)

// refusedError prints as the transport's message and is raft.ErrConnectionRefused.
type refusedError struct{}

func (refusedError) Error() string { return "connection refused" }
func (refusedError) Unwrap() error { return raft.ErrConnectionRefused }

// InteractionOpts adjusts the nodes of an InteractionEnv.
type InteractionOpts struct {
	// OnConfig, when set, may change a node's configuration once add-nodes
	// has filled it, before the node first starts.
	OnConfig func(id int32, cfg *raft.Config)
	// OnStart, when set, is called with each new driver of a node (its
	// start and every restart) after the env registered its own listener
	// and before the driver's first poll: where a test registers the
	// listeners of its state machine.
	OnStart func(id int32, d *raft.Driver)
}

// NewInteractionEnv returns an empty world; scripts add its nodes
// (add-nodes). Drivers log warnings and errors to t. opts may be nil.
func NewInteractionEnv(t testing.TB, opts *InteractionOpts) *InteractionEnv {
	e := &InteractionEnv{t: t, start: time.Unix(1_700_000_000, 0)}
	if opts != nil {
		e.opts = *opts
	}
	return e
}

// Printf adds a line to the output of the command being handled: for a
// test's own commands and its listeners' notes.
func (e *InteractionEnv) Printf(format string, args ...any) { e.printf(format, args...) }

// Driver is node id's running driver; nil while it is down or unknown.
func (e *InteractionEnv) Driver(id int32) *raft.Driver {
	if n := e.node(id); n != nil && n.up {
		return n.drv
	}
	return nil
}

// Log is node id's log, which outlives its crashes; nil for an unknown id.
func (e *InteractionEnv) Log(id int32) *MemLog {
	if n := e.node(id); n != nil {
		return n.log
	}
	return nil
}

// Now is node id's clock; the zero time for an unknown id.
func (e *InteractionEnv) Now(id int32) time.Time {
	if n := e.node(id); n != nil {
		return n.now
	}
	return time.Time{}
}

func (e *InteractionEnv) printf(format string, args ...any) {
	fmt.Fprintf(&e.out, format, args...)
	e.out.WriteByte('\n')
}

// effect prints one consequence of the current input, indented under it.
func (e *InteractionEnv) effect(format string, args ...any) { e.printf("  "+format, args...) }

func (e *InteractionEnv) node(id int32) *envNode {
	for _, n := range e.nodes {
		if n.id == id {
			return n
		}
	}
	return nil
}

// addNode creates node id with an empty disk (but for a dynamic voter's
// bootstrap snapshot); it starts with startDriver.
func (e *InteractionEnv) addNode(id int32, voters []int32, preVote, deferring bool, dyn dynamicMode) *envNode {
	cfg := raft.DefaultConfig()
	cfg.NodeID = id
	cfg.ClusterID = ClusterID
	cfg.ListenerName = "CONTROLLER"
	cfg.Endpoints = []raft.Endpoint{{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9000 + id}}
	for _, v := range voters {
		cfg.Voters = append(cfg.Voters, raft.Voter{ID: v, Endpoints: []raft.Endpoint{{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9000 + v}}})
	}
	cfg.PreVote = preVote
	if dyn == staticWithDirs {
		cfg.DirectoryID = DirectoryID(id)
	}
	if dyn == dynamicVoter || dyn == dynamicObserver {
		// controller.quorum.bootstrap.servers only: the voter set comes
		// from the bootstrap snapshot, or for an observer from the leader.
		cfg.DirectoryID = DirectoryID(id)
		for _, v := range cfg.Voters {
			cfg.Bootstrap = append(cfg.Bootstrap, v.Endpoints[0])
		}
		cfg.Voters = nil
	}
	// Every propose drains at once, so each one is its own batch and the
	// offsets in the transcript follow the script.
	cfg.AppendLinger = 0
	cfg.DeferLeadership = deferring
	if e.opts.OnConfig != nil {
		e.opts.OnConfig(id, &cfg)
	}
	n := &envNode{env: e, id: id, cfg: cfg, log: NewMemLog(), store: NewMemStateStore(), now: e.start}
	if dyn == dynamicVoter {
		if err := WriteBootstrapSnapshot(n.log, voters); err != nil {
			e.t.Fatalf("node %d: %v", id, err)
		}
	}
	n.store.OnWrite = func(st raft.ElectionState) {
		e.effect("%d persist epoch=%d leader=%s voted=%s", id, st.Epoch, idName(st.LeaderID), idName(st.VotedID))
	}
	n.seen = raft.Status{LeaderID: -2, VotedID: -2, HighWatermark: -2, LogEndOffset: -2}
	e.nodes = append(e.nodes, n)
	slices.SortFunc(e.nodes, func(a, b *envNode) int { return int(a.id - b.id) })
	return n
}

func (n *envNode) startDriver() {
	n.inc++
	n.done = false
	lg := zaptest.NewLogger(n.env.t, zaptest.Level(zap.WarnLevel)).With(zap.Int32("node", n.id))
	drv, err := raft.NewDriver(n.cfg, n.log, n.store, &itransport{n: n, inc: n.inc},
		rand.New(rand.NewPCG(uint64(n.id), uint64(n.inc))), lg, n.now)
	if err != nil {
		n.env.effect("%d NewDriver: %v", n.id, err)
		return
	}
	n.drv, n.up = drv, true
	drv.Register(&ilistener{n: n, inc: n.inc})
	if n.env.opts.OnStart != nil {
		n.env.opts.OnStart(n.id, drv)
	}
	n.poll()
}

// poll runs the driver's timers at the node's clock and prints what changed.
func (n *envNode) poll() {
	if _, err := n.drv.Poll(n.now); err != nil {
		n.env.effect("%d fatal: %v", n.id, err)
	}
	n.report()
}

// report prints the node's role, epoch, leader, vote and log position when
// they changed since the last report.
func (n *envNode) report() {
	st := n.drv.Status()
	if st.Role != n.seen.Role || st.Epoch != n.seen.Epoch || st.LeaderID != n.seen.LeaderID || st.VotedID != n.seen.VotedID {
		n.env.effect("%d is %s epoch=%d leader=%s voted=%s", n.id, st.Role, st.Epoch, idName(st.LeaderID), idName(st.VotedID))
	}
	if st.LogEndOffset != n.seen.LogEndOffset || st.HighWatermark != n.seen.HighWatermark {
		n.env.effect("%d log end=%d hw=%d", n.id, st.LogEndOffset, st.HighWatermark)
	}
	n.seen = st
	if !n.done && n.drv.Done() {
		n.done = true
		n.env.effect("%d shutdown complete", n.id)
	}
}

// step hands the driver one input and polls it, as the node's loop does.
func (n *envNode) step(m raft.Message) {
	if err := n.drv.Step(n.now, m); err != nil {
		n.env.effect("%d fatal: %v", n.id, err)
	}
	n.poll()
}

// crash kills the node: unflushed log data is lost, quorum state survives.
// Its queued requests and answers vanish; peers waiting on it get an error.
func (n *envNode) crash() {
	e := n.env
	e.printf("> %d crashes (log end=%d flushed=%d)", n.id, n.log.EndOffset().Offset, n.log.FlushedOffset())
	n.up, n.drv = false, nil
	n.log.Crash()
	n.seen = raft.Status{LeaderID: -2, VotedID: -2, HighWatermark: -2, LogEndOffset: -2}
	var keep []*envelope
	for _, m := range e.queue {
		switch {
		case m.err == nil && m.req != nil && m.to == n.id:
			// A request to the dead node: its sender sees the connection close.
			keep = append(keep, failure(m, errIConnClosed))
		case m.err == nil && m.resp != nil && m.from == n.id:
			// An answer the dead node had not yet written out.
			keep = append(keep, failure(m, errIConnClosed))
		case m.err == nil && m.from == n.id, m.to == n.id:
			// Its own requests, and anything addressed to the dead driver.
		default:
			keep = append(keep, m)
		}
	}
	// Requests it held unanswered (parked fetches) fail for their senders.
	for _, r := range n.open {
		keep = append(keep, &envelope{from: n.id, to: r.from, inc: r.inc, corr: r.corr, err: errIConnClosed, api: r.api})
	}
	n.open = nil
	e.queue = keep
}

// itransport queues what a driver sends, as wire bytes decoded back.
type itransport struct {
	n   *envNode
	inc int
}

func (t *itransport) Send(o raft.Outbound) {
	n := t.n
	e := n.env
	req, err := roundTripRequest(o.Request)
	if err != nil {
		e.effect("%d sent an unencodable %s: %v", n.id, msgName(o.Request), err)
		return
	}
	m := &envelope{from: n.id, to: o.To, inc: t.inc, corr: o.Corr, req: req}
	via := ""
	if b := int(-o.To - 2); o.To < 0 && b >= 0 && b < len(n.cfg.Bootstrap) {
		// Bootstrap server b listens on port 9000+id.
		m.to, m.via = n.cfg.Bootstrap[b].Port-9000, o.To
		via = fmt.Sprintf(" (bootstrap %d)", o.To)
	}
	e.effect("%d->%d%s %s", n.id, m.to, via, describeMsg(req))
	if e.node(m.to) == nil {
		m = failure(m, errIConnRefused) // no such node: the dial fails
	}
	e.queue = append(e.queue, m)
}

func (t *itransport) Reply(ref raft.RequestRef, resp kmsg.Response) {
	n := t.n
	e := n.env
	r := ref.(*iref)
	n.open = slices.DeleteFunc(n.open, func(o *iref) bool { return o == r })
	resp, err := roundTripResponse(resp)
	if err != nil {
		e.effect("%d answered with an unencodable %s: %v", n.id, msgName(resp), err)
		return
	}
	if r.raw {
		e.effect("%d->%d %s (raw)", n.id, r.from, describeMsg(resp))
		return
	}
	e.effect("%d->%d %s", n.id, r.from, describeMsg(resp))
	e.queue = append(e.queue, &envelope{from: n.id, to: r.from, inc: r.inc, corr: r.corr, resp: resp, via: r.via})
}

// roundTripRequest encodes req at the highest version kraftd serves (what
// two kraftd nodes negotiate) and decodes it into a fresh value.
func roundTripRequest(req kmsg.Request) (kmsg.Request, error) {
	vr, ok := Apis.Versions(req.Key())
	if !ok {
		return nil, fmt.Errorf("api %d is not served", req.Key())
	}
	req.SetVersion(vr.Max)
	back := kmsg.RequestForKey(req.Key())
	back.SetVersion(vr.Max)
	return back, back.ReadFrom(req.AppendTo(nil))
}

func roundTripResponse(resp kmsg.Response) (kmsg.Response, error) {
	back := kmsg.ResponseForKey(resp.Key())
	back.SetVersion(resp.GetVersion())
	return back, back.ReadFrom(resp.AppendTo(nil))
}

// ilistener prints commits and snapshot loads of one incarnation.
type ilistener struct {
	n   *envNode
	inc int
}

func (l *ilistener) HandleCommit(batches []raft.CommittedBatch) {
	for _, b := range batches {
		l.n.env.effect("%d commit %d..%d@%d %s", l.n.id, b.BaseOffset, b.LastOffset, b.Epoch, describeCommitted(b))
	}
}

func describeCommitted(b raft.CommittedBatch) string {
	if b.Control {
		return "control"
	}
	return describeRecords(false, b.Records)
}

func (l *ilistener) HandleLoadSnapshot(id raft.OffsetAndEpoch, r raft.SnapshotReader) {
	l.n.env.effect("%d load snapshot %s (%d bytes)", l.n.id, offEpoch(id.Offset, id.Epoch), r.Size())
}

func (l *ilistener) HandleLeaderChange(raft.LeaderAndEpoch) {} // the status report shows it
func (l *ilistener) BeginShutdown()                         { l.n.env.effect("%d begins shutdown", l.n.id) }

// deliver moves one envelope to its destination and prints the outcome.
// A request that cannot arrive (node down, partition) is answered to its
// sender with an error, as the real transport would after its timeout, so
// the sender's request manager sees every Outbound completed.
func (e *InteractionEnv) deliver(m *envelope) {
	what := describeMsg(m.resp)
	if m.req != nil {
		what = describeMsg(m.req)
	}
	if m.err != nil {
		e.printf("> %d->%d %s failed: %v", m.to, m.from, m.api, m.err)
		if n := e.node(m.to); n != nil && n.up && n.inc == m.inc {
			n.step(raft.Message{From: m.from, Corr: m.corr, Err: m.err})
		}
		return
	}
	e.printf("> %d->%d %s", m.from, m.to, what)
	dst := e.node(m.to)
	if e.cut(m.from, m.to) {
		e.effect("dropped: partitioned")
		e.queue = append(e.queue, failure(m, errITimedOut))
		return
	}
	if dst == nil || !dst.up {
		e.effect("dropped: %d is down", m.to)
		e.queue = append(e.queue, failure(m, errIConnRefused))
		return
	}
	if av, ok := m.req.(*kmsg.ApiVersionsRequest); ok {
		// The network layer answers ApiVersions; the driver never sees it.
		resp := Apis.ApiVersionsResponse(av.GetVersion())
		e.effect("%d->%d %s", m.to, m.from, describeMsg(resp))
		e.queue = append(e.queue, &envelope{from: m.to, to: m.from, inc: m.inc, corr: m.corr, resp: resp, via: m.via})
		return
	}
	if m.req != nil {
		r := &iref{from: m.from, via: m.via, inc: m.inc, corr: m.corr, api: msgName(m.req)}
		dst.open = append(dst.open, r)
		dst.step(raft.Message{Request: m.req, Ref: r})
		return
	}
	if dst.inc != m.inc {
		e.effect("dropped: answer for an earlier incarnation of %d", m.to)
		return
	}
	from := m.from
	if m.via != 0 {
		from = m.via
	}
	dst.step(raft.Message{From: from, Corr: m.corr, Response: m.resp})
}
