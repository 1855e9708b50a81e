package raft_test

// The simulator's event loop and network: delivery, forged and bogus
// requests, and the transport each driver sends through.

import (
	"container/heap"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/raft"
)

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
	case evFlushed:
		n := s.nodes[e.node]
		if !n.up || n.inc != e.inc {
			return n
		}
		if n.pausedUntil > s.now {
			s.schedule(n.pausedUntil, e)
			return n
		}
		s.flushed(n, e.job)
		return n
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
	if m.admin && s.faultsOver && m.key != int16(kmsg.UpdateFeatures) {
		return n // the nemesis' voter changes end with the fault phase
	}
	if m.key == int16(kmsg.ApiVersions) {
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
	vr, ok := testApis.Versions(key)
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
			msg: &netMsg{from: n.idx, to: n.idx, toInc: n.inc, corr: o.Corr, toID: o.To, key: key, version: vr.Max, isResp: true, err: errUnknownNode}})
		return
	}
	o.Request.SetVersion(vr.Max)
	m := &netMsg{from: n.idx, to: to, fromInc: n.inc, toInc: s.nodes[to].inc, corr: o.Corr, toID: o.To,
		key: key, version: vr.Max, body: o.Request.AppendTo(nil)}
	if !s.nodes[to].up {
		// A stopped process's port refuses connections; a vanished
		// machine's does not answer at all (the request times out).
		if s.rng.IntN(4) != 0 {
			s.answerErr(m, errConnRefused)
		}
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
