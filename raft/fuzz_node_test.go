package raft_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/raft/rafttest"
)

// FuzzNode plays hostile or broken peers against one whole node: a real
// Driver (node 1 of voters 1, 2, 3, pre-vote on) over a MemLog and a
// MemStateStore, on a virtual clock. The input is a script of operations
// (the fuzz* constants): raw request frames from anyone, raw response frames or
// transport failures from voters 2 and 3 to one of the node's requests
// pending to them, time advances and leader appends. Frames go through
// the table's ParseRequest / ParseResponse, as the network would take them off
// the wire; what does not decode is dropped (a request) or fails the request
// it answers (a response: the connection closes).
//
// After every operation the node must keep its safety invariants (those of
// the simulator that hold for one node whatever its peers say): the epoch
// never decreases, an epoch never has two leaders, the high watermark never
// moves back nor above the log end, committed batches are never truncated or
// changed. It must never fail fatally, answer every request once with an
// encodable response, and send only encodable requests; at the end every
// request must be answered.
func FuzzNode(f *testing.F) {
	f.Fuzz(func(t *testing.T, script []byte) {
		n := newFuzzNode(t)
		for len(script) > 0 {
			script = n.apply(script)
			n.check()
		}
		n.drain()
	})
}

// Operations: the first byte's value mod fuzzOps picks one. For a peer op,
// sel = byte/fuzzOps names the peer (voter 2 + sel%2) and which of the
// requests pending to it is answered: the newest when sel/2 is 0, else
// counting back from it (the node may have several in flight to one peer).
const (
	fuzzRequest  = iota // u16 length, request frame (header and body, no size prefix)
	fuzzResponse        // u16 length, response frame to a pending request
	fuzzFailure         // a pending request fails (timeout, closed connection)
	fuzzAdvance         // u16 milliseconds to move the clock (requests time out meanwhile)
	fuzzAppend          // u8 n: a leader appends n%4+1 records
	fuzzOps
)

// fuzzNode is the node under test and what the checks remember of it.
type fuzzNode struct {
	t       *testing.T
	cfg     raft.Config
	log     *rafttest.MemLog
	store   *rafttest.MemStateStore
	drv     *raft.Driver
	now     time.Time
	pending map[int32][]fuzzPending // per peer, in sending order
	open    map[int]kmsg.Request    // requests not answered yet, by ref
	refs    int

	persistedEpoch int32
	lastEpoch      int32
	lastHW         int64
	leaders        map[int32]int32 // epoch -> the leader the node saw for it
	committed      []committedBatch
	committedEnd   int64
}

// fuzzPending is a request the node sent, at the version the transport
// negotiated with a kraftd peer.
type fuzzPending struct {
	out     raft.Outbound
	version int16
	sent    time.Time
}

type committedBatch struct {
	base, last int64
	epoch      int32
	data       []byte
}

func newFuzzNode(t *testing.T) *fuzzNode {
	cfg := raft.DefaultConfig()
	cfg.NodeID = 1
	cfg.ClusterID = testCluster
	cfg.ListenerName = "CONTROLLER"
	cfg.Endpoints = []raft.Endpoint{{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9001}}
	for _, id := range []int32{1, 2, 3} {
		cfg.Voters = append(cfg.Voters, raft.Voter{ID: id, Endpoints: []raft.Endpoint{{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9000 + id}}})
	}
	cfg.AppendLinger = 0
	n := &fuzzNode{t: t, cfg: cfg, log: rafttest.NewMemLog(), store: rafttest.NewMemStateStore(),
		now: time.Unix(1_700_000_000, 0), pending: map[int32][]fuzzPending{}, open: map[int]kmsg.Request{},
		lastHW: -1, leaders: map[int32]int32{}}
	n.store.OnWrite = func(st raft.ElectionState) {
		if st.Epoch < n.persistedEpoch {
			t.Fatalf("persisted epoch went from %d to %d", n.persistedEpoch, st.Epoch)
		}
		n.persistedEpoch = st.Epoch
		n.noteLeader(st.Epoch, st.LeaderID, "persisted")
	}
	drv, err := raft.NewDriver(cfg, n.log, n.store, (*fuzzTransport)(n), rand.New(rand.NewPCG(1, 0)), zap.NewNop(), n.now)
	if err != nil {
		t.Fatalf("NewDriver: %v", err)
	}
	n.drv = drv
	n.poll()
	return n
}

// apply runs the script's first operation and returns the rest.
func (n *fuzzNode) apply(script []byte) []byte {
	op, script := script[0], script[1:]
	sel := int(op / fuzzOps)
	peer := int32(2 + sel%2)
	switch op % fuzzOps {
	case fuzzRequest:
		var frame []byte
		frame, script = fuzzChunk(script)
		n.request(frame)
	case fuzzResponse:
		var frame []byte
		frame, script = fuzzChunk(script)
		n.respond(peer, sel/2, frame)
	case fuzzFailure:
		n.respond(peer, sel/2, nil)
	case fuzzAdvance:
		var ms uint16
		if len(script) >= 2 {
			ms, script = binary.BigEndian.Uint16(script), script[2:]
		}
		n.advance(time.Duration(ms) * time.Millisecond)
	case fuzzAppend:
		count := 1
		if len(script) > 0 {
			count, script = int(script[0]%4)+1, script[1:]
		}
		if st := n.drv.Status(); st.Role == raft.RoleLeader {
			recs := make([][]byte, count)
			for i := range recs {
				recs[i] = fmt.Appendf(nil, "r%d", n.refs+i)
			}
			if _, err := n.drv.Append(n.now, st.Epoch, recs); err != nil && n.drv.Done() {
				n.t.Fatalf("append: %v", err)
			}
		}
	}
	return script
}

// fuzzChunk splits a u16-length-prefixed chunk (cut short at the end).
func fuzzChunk(b []byte) (chunk, rest []byte) {
	if len(b) < 2 {
		return nil, nil
	}
	size := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	size = min(size, len(b))
	return b[:size:size], b[size:]
}

// raftRequest reports whether the network passes req to the driver (the
// node's Handle); it answers everything else itself.
func raftRequest(req kmsg.Request) bool {
	switch req.(type) {
	case *kmsg.VoteRequest, *kmsg.BeginQuorumEpochRequest, *kmsg.EndQuorumEpochRequest,
		*kmsg.FetchRequest, *kmsg.FetchSnapshotRequest, *kmsg.DescribeQuorumRequest,
		*kmsg.AddRaftVoterRequest, *kmsg.RemoveRaftVoterRequest, *kmsg.UpdateRaftVoterRequest:
		return true
	}
	return false
}

func (n *fuzzNode) request(frame []byte) {
	_, req, err := testApis.ParseRequest(frame)
	if err != nil || !raftRequest(req) {
		return
	}
	n.refs++
	n.open[n.refs] = req
	n.step(raft.Message{Request: req, Ref: n.refs})
}

// respond answers a request pending to peer (back = 0: the newest) with
// frame, or with a transport error when frame is nil or does not decode.
func (n *fuzzNode) respond(peer int32, back int, frame []byte) {
	q := n.pending[peer]
	if len(q) == 0 {
		return
	}
	i := len(q) - 1 - back%len(q)
	p := q[i]
	n.pending[peer] = append(q[:i], q[i+1:]...)
	m := raft.Message{From: peer, Corr: p.out.Corr}
	if frame != nil {
		if resp, err := protocol.ParseResponse(frame, p.out.Request.Key(), p.version); err == nil {
			m.Response = resp
		}
	}
	if m.Response == nil {
		m.Err = fmt.Errorf("connection to %d closed", peer)
	}
	n.step(m)
}

func (n *fuzzNode) step(m raft.Message) {
	if err := n.drv.Step(n.now, m); err != nil {
		n.t.Fatalf("fatal after a peer's frame: %v", err)
	}
	n.poll()
}

func (n *fuzzNode) poll() time.Time {
	next, err := n.drv.Poll(n.now)
	if err != nil {
		n.t.Fatalf("fatal: %v", err)
	}
	return next
}

// advance moves the clock by d, polling at every deadline on the way as the
// node's loop does and failing requests unanswered for the request timeout
// as the network does; a driver asking to be polled again and again at the
// same instant would spin its loop.
func (n *fuzzNode) advance(d time.Duration) {
	end := n.now.Add(d)
	for spins := 0; ; {
		next := n.poll()
		if t := n.nextTimeout(); !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
		if next.IsZero() || next.After(end) {
			break
		}
		if next.After(n.now) {
			spins = 0
			n.now = next
		} else if spins++; spins > 100 {
			n.t.Fatalf("driver asks to be polled at %v again and again (status %+v)", next, n.drv.Status())
		}
		n.expireRequests()
		n.check()
	}
	n.now = end
	n.expireRequests()
	n.poll()
}

// nextTimeout is when the oldest pending request times out, zero if none.
func (n *fuzzNode) nextTimeout() time.Time {
	var first time.Time
	for _, q := range n.pending {
		if len(q) > 0 && (first.IsZero() || q[0].sent.Before(first)) {
			first = q[0].sent
		}
	}
	if first.IsZero() {
		return first
	}
	return first.Add(n.cfg.RequestTimeout)
}

// expireRequests fails the requests pending for the request timeout.
func (n *fuzzNode) expireRequests() {
	for _, peer := range slices.Sorted(maps.Keys(n.pending)) {
		for len(n.pending[peer]) > 0 && !n.now.Before(n.pending[peer][0].sent.Add(n.cfg.RequestTimeout)) {
			n.respond(peer, len(n.pending[peer])-1, nil) // the oldest
		}
	}
}

// drain lets every parked request expire and requires every request to
// have been answered.
func (n *fuzzNode) drain() {
	n.advance(4*n.cfg.MaxFetchWait + time.Second)
	n.check()
	for ref, req := range n.open {
		n.t.Fatalf("request %d (%s v%d) never answered", ref, kmsg.NameForKey(req.Key()), req.GetVersion())
	}
}

func (n *fuzzNode) noteLeader(epoch, leader int32, how string) {
	if leader < 0 {
		return
	}
	if prev, ok := n.leaders[epoch]; ok && prev != leader {
		n.t.Fatalf("epoch %d has two leaders: %d, then %d (%s)", epoch, prev, leader, how)
	}
	n.leaders[epoch] = leader
}

// check verifies the invariants after an operation.
func (n *fuzzNode) check() {
	t := n.t
	st := n.drv.Status()
	if st.Epoch < n.lastEpoch {
		t.Fatalf("epoch went from %d to %d", n.lastEpoch, st.Epoch)
	}
	n.lastEpoch = st.Epoch
	if st.Role == raft.RoleLeader && st.LeaderID != n.cfg.NodeID {
		t.Fatalf("leader of epoch %d names %d as leader", st.Epoch, st.LeaderID)
	}
	n.noteLeader(st.Epoch, st.LeaderID, "status")
	if low, ok := n.log.TakeLowestEnd(); ok && low < n.committedEnd {
		t.Fatalf("log truncated to %d, below its committed end %d (hw %d)", low, n.committedEnd, n.lastHW)
	}
	if hw := st.HighWatermark; hw >= 0 {
		if hw < n.lastHW {
			t.Fatalf("high watermark went back from %d to %d", n.lastHW, hw)
		}
		if hw > st.LogEndOffset {
			t.Fatalf("high watermark %d above the log end %d", hw, st.LogEndOffset)
		}
		n.lastHW = hw
	}
	// Remember the batches that became committed, then check that those
	// still held are unchanged (a snapshot may replace a committed prefix).
	for _, b := range n.log.Batches() {
		if b.BaseOffset >= n.committedEnd && b.LastOffset < n.lastHW {
			n.committed = append(n.committed, committedBatch{b.BaseOffset, b.LastOffset, b.Epoch, bytes.Clone(b.Data)})
			n.committedEnd = b.LastOffset + 1
		}
	}
	start := n.log.StartOffset()
	for _, c := range n.committed {
		if c.base < start {
			continue
		}
		b, ok := n.log.BatchAt(c.base)
		if !ok || b.BaseOffset != c.base || b.LastOffset != c.last || b.Epoch != c.epoch || !bytes.Equal(b.Data, c.data) {
			t.Fatalf("committed batch %d..%d@%d changed or lost (now %+v, ok=%v)", c.base, c.last, c.epoch, b, ok)
		}
	}
}

// fuzzTransport is the node's network: requests wait for the script to
// answer them, replies are checked and counted.
type fuzzTransport fuzzNode

func (tr *fuzzTransport) Send(o raft.Outbound) {
	n := (*fuzzNode)(tr)
	vr, ok := testApis.Versions(o.Request.Key())
	if !ok {
		n.t.Fatalf("sent %s, an api kraftd does not serve", kmsg.NameForKey(o.Request.Key()))
	}
	if _, err := protocol.EncodeRequest(nil, 0, nil, o.Request, vr.Max); err != nil {
		n.t.Fatalf("sent an unencodable %s: %v", kmsg.NameForKey(o.Request.Key()), err)
	}
	n.pending[o.To] = append(n.pending[o.To], fuzzPending{o, vr.Max, n.now})
}

func (tr *fuzzTransport) Reply(ref raft.RequestRef, resp kmsg.Response) {
	n := (*fuzzNode)(tr)
	id, _ := ref.(int)
	req, ok := n.open[id]
	if !ok {
		n.t.Fatalf("reply to request %v, which is not waiting for one", ref)
	}
	delete(n.open, id)
	if resp.Key() != req.Key() || resp.GetVersion() != req.GetVersion() {
		n.t.Fatalf("%s v%d answered with %s v%d", kmsg.NameForKey(req.Key()), req.GetVersion(),
			kmsg.NameForKey(resp.Key()), resp.GetVersion())
	}
	frame := protocol.AppendResponse(nil, 0, resp)[4:]
	if _, err := protocol.ParseResponse(frame, resp.Key(), resp.GetVersion()); err != nil {
		n.t.Fatalf("%s answer does not decode: %v", kmsg.NameForKey(req.Key()), err)
	}
}
