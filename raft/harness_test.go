package raft_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/raft/rafttest"
	"github.com/kraftd/kraftd/topics"
	"github.com/kraftd/kraftd/uuid"
)

// The unit tests drive one Driver the way Kafka's RaftClientTestContext
// drives KafkaRaftClient: a fake transport records what the driver sends
// and replies, the test steps requests/responses in and advances a virtual
// clock.

const testCluster = rafttest.ClusterID

// testApis are the apis of a node's network server and raft driver, as the
// node's table has them: what the tests, the simulator and the fuzz target
// encode and decode at.
var testApis = rafttest.Apis

type reply struct {
	ref  raft.RequestRef
	resp kmsg.Response
}

type fakeTransport struct {
	sent    []raft.Outbound
	replies []reply
	// onEvent, when set, sees every send/reply in order (with a label).
	onEvent func(string)
}

func (f *fakeTransport) Send(o raft.Outbound) {
	f.sent = append(f.sent, o)
	if f.onEvent != nil {
		f.onEvent("send")
	}
}

func (f *fakeTransport) Reply(ref raft.RequestRef, resp kmsg.Response) {
	f.replies = append(f.replies, reply{ref, resp})
	if f.onEvent != nil {
		f.onEvent("reply")
	}
}

type tctx struct {
	t     testing.TB
	cfg   raft.Config
	log   *rafttest.MemLog
	flog  *rafttest.FailingLog
	store *rafttest.MemStateStore
	tr    *fakeTransport
	d     *raft.Driver
	now   time.Time
	seed  uint64
	refs  int
	lg    *zap.Logger             // nil: a test logger at Warn
	wrap  func(raft.Log) raft.Log // wraps the log the driver sees
}

type opt func(*tctx)

func withVoters(ids ...int32) opt {
	return func(c *tctx) {
		c.cfg.Voters = nil
		for _, id := range ids {
			c.cfg.Voters = append(c.cfg.Voters, raft.Voter{ID: id, Endpoints: []raft.Endpoint{{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9000 + id}}})
		}
	}
}

func withState(st raft.ElectionState) opt {
	return func(c *tctx) { _ = c.store.Write(st); c.store.Writes = 0 }
}

func withPreVote(on bool) opt { return func(c *tctx) { c.cfg.PreVote = on } }

func withNodeID(id int32) opt { return func(c *tctx) { c.cfg.NodeID = id } }

func withLogger(lg *zap.Logger) opt { return func(c *tctx) { c.lg = lg } }

func withLogWrap(w func(raft.Log) raft.Log) opt { return func(c *tctx) { c.wrap = w } }

func withLinger(d time.Duration) opt { return func(c *tctx) { c.cfg.AppendLinger = d } }

func withObserver(o raft.Observer) opt { return func(c *tctx) { c.cfg.Observer = o } }

// withLogBatches pre-fills the log: one data batch per epoch given, one
// record each.
func withLogBatches(epochs ...int32) opt {
	return func(c *tctx) {
		for _, e := range epochs {
			c.appendRaw(e, 1)
		}
		_ = c.log.Flush()
	}
}

func newCtx(t testing.TB, local int32, opts ...opt) *tctx {
	t.Helper()
	c := &tctx{t: t, log: rafttest.NewMemLog(), store: rafttest.NewMemStateStore(), tr: &fakeTransport{},
		now: time.Unix(1_700_000_000, 0), seed: 1}
	c.flog = rafttest.NewFailingLog(c.log)
	c.cfg = raft.DefaultConfig()
	c.cfg.NodeID = local
	c.cfg.ClusterID = testCluster
	c.cfg.ListenerName = "CONTROLLER"
	c.cfg.Endpoints = []raft.Endpoint{{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9000 + local}}
	withVoters(1, 2, 3)(c)
	for _, o := range opts {
		o(c)
	}
	lg := c.lg
	if tt, ok := t.(*testing.T); ok && lg == nil {
		lg = zaptest.NewLogger(tt, zaptest.Level(zap.WarnLevel))
	} else if lg == nil {
		lg = zap.NewNop()
	}
	var log raft.Log = c.flog
	if c.wrap != nil {
		log = c.wrap(log)
	}
	d, err := raft.NewDriver(c.cfg, log, c.store, c.tr, rand.New(rand.NewPCG(c.seed, 0)), lg, c.now)
	if err != nil {
		t.Fatalf("NewDriver: %v", err)
	}
	c.d = d
	return c
}

func (c *tctx) appendRaw(epoch int32, n int) {
	recs := make([]protocol.Record, n)
	for i := range recs {
		recs[i] = protocol.Record{Value: []byte{byte(i)}}
	}
	b := protocol.AppendBatch(nil, protocol.Batch{BaseOffset: c.log.EndOffset().Offset, PartitionLeaderEpoch: epoch, Records: recs})
	if _, err := c.log.Append(b); err != nil {
		c.t.Fatalf("append raw: %v", err)
	}
}

func (c *tctx) advance(d time.Duration) {
	c.now = c.now.Add(d)
	if _, err := c.d.Poll(c.now); err != nil {
		c.t.Fatalf("poll: %v", err)
	}
}

func (c *tctx) poll() time.Time {
	next, err := c.d.Poll(c.now)
	if err != nil {
		c.t.Fatalf("poll: %v", err)
	}
	return next
}

// request steps an inbound request in and returns its reply (nil if parked).
func (c *tctx) request(req kmsg.Request) kmsg.Response {
	c.t.Helper()
	c.refs++
	ref := c.refs
	n := len(c.tr.replies)
	if err := c.d.Step(c.now, raft.Message{Request: req, Ref: ref}); err != nil {
		c.t.Fatalf("step: %v", err)
	}
	for _, r := range c.tr.replies[n:] {
		if r.ref == ref {
			if r.resp.GetVersion() != req.GetVersion() {
				c.t.Fatalf("reply version %d, request version %d", r.resp.GetVersion(), req.GetVersion())
			}
			return r.resp
		}
	}
	return nil
}

// respond answers an Outbound the driver sent.
func (c *tctx) respond(o raft.Outbound, resp kmsg.Response) {
	c.t.Helper()
	resp.SetVersion(o.Request.GetVersion())
	if err := c.d.Step(c.now, raft.Message{From: o.To, Corr: o.Corr, Response: resp}); err != nil {
		c.t.Fatalf("step response: %v", err)
	}
}

// takeSent returns and forgets the outbounds sent so far.
func (c *tctx) takeSent() []raft.Outbound {
	s := c.tr.sent
	c.tr.sent = nil
	return s
}

// sentOf returns the sent outbounds with the given api key.
func sentOf(out []raft.Outbound, key int16) []raft.Outbound {
	var r []raft.Outbound
	for _, o := range out {
		if o.Request.Key() == key {
			r = append(r, o)
		}
	}
	return r
}

func (c *tctx) status() raft.Status { return c.d.Status() }

func (c *tctx) wantRole(role raft.Role, epoch int32) {
	c.t.Helper()
	st := c.status()
	if st.Role != role || st.Epoch != epoch {
		c.t.Fatalf("state %s epoch %d, want %s epoch %d (status %+v)", st.Role, st.Epoch, role, epoch, st)
	}
}

// wantElectionAfter checks a Follower of epoch becomes Prospective exactly d
// from now (its shortened fetch timer): still following 1 ms before.
func (c *tctx) wantElectionAfter(d time.Duration, epoch int32) {
	c.t.Helper()
	if d > 0 {
		c.advance(d - time.Millisecond)
		c.wantRole(raft.RoleFollower, epoch)
		c.advance(time.Millisecond)
	} else {
		c.poll()
	}
	c.wantRole(raft.RoleProspective, epoch)
}

func strp(s string) *string { return &s }

// --- request builders (JVM-like) ---

// Short names for rafttest's builders, which every test here uses.
var (
	voteReq  = rafttest.VoteRequest
	beginReq = rafttest.BeginQuorumEpochRequest
	endReq   = rafttest.EndQuorumEpochRequest
	fetchReq = rafttest.FetchRequest
	testDir  = rafttest.DirectoryID
)

// writeTestBootstrapSnapshot writes the 0-0 snapshot kafka-storage format
// --initial-controllers writes for voters (rafttest.WriteBootstrapSnapshot).
func writeTestBootstrapSnapshot(t *testing.T, l *rafttest.MemLog, voters []int32) {
	t.Helper()
	if err := rafttest.WriteBootstrapSnapshot(l, voters); err != nil {
		t.Fatalf("bootstrap snapshot: %v", err)
	}
}

func votePart(resp kmsg.Response) (top int16, p kmsg.VoteResponseTopicPartition) {
	v := resp.(*kmsg.VoteResponse)
	if len(v.Topics) == 0 {
		return v.ErrorCode, kmsg.NewVoteResponseTopicPartition()
	}
	return v.ErrorCode, v.Topics[0].Partitions[0]
}

func voteResp(epoch, leader int32, granted bool) *kmsg.VoteResponse {
	r := kmsg.NewPtrVoteResponse()
	t := kmsg.NewVoteResponseTopic()
	t.Topic = topics.ClusterMetadata
	p := kmsg.NewVoteResponseTopicPartition()
	p.LeaderEpoch, p.LeaderID, p.VoteGranted = epoch, leader, granted
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	return r
}

func beginPart(resp kmsg.Response) (int16, kmsg.BeginQuorumEpochResponseTopicPartition) {
	v := resp.(*kmsg.BeginQuorumEpochResponse)
	if len(v.Topics) == 0 {
		return v.ErrorCode, kmsg.NewBeginQuorumEpochResponseTopicPartition()
	}
	return v.ErrorCode, v.Topics[0].Partitions[0]
}

func fetchPart(resp kmsg.Response) (int16, kmsg.FetchResponseTopicPartition) {
	v := resp.(*kmsg.FetchResponse)
	if len(v.Topics) == 0 {
		return v.ErrorCode, kmsg.NewFetchResponseTopicPartition()
	}
	return v.ErrorCode, v.Topics[0].Partitions[0]
}

// fetchResp builds a leader's answer to a follower fetch.
func fetchResp(leader, epoch int32, hw int64, records []byte) *kmsg.FetchResponse {
	r := kmsg.NewPtrFetchResponse()
	t := kmsg.NewFetchResponseTopic()
	t.TopicID = uuid.MetadataTopicID
	p := kmsg.NewFetchResponseTopicPartition()
	p.HighWatermark = hw
	p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = leader, epoch
	p.RecordBatches = records
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	return r
}

// dataBatch encodes a batch of n one-byte records.
func dataBatch(base int64, epoch int32, n int) []byte {
	recs := make([]protocol.Record, n)
	for i := range recs {
		recs[i] = protocol.Record{Value: []byte{'v', byte(i)}}
	}
	return protocol.AppendBatch(nil, protocol.Batch{BaseOffset: base, PartitionLeaderEpoch: epoch, Records: recs})
}

// recListener records listener callbacks.
type recListener struct {
	commits []raft.CommittedBatch
	leaders []raft.LeaderAndEpoch
	loads   []raft.OffsetAndEpoch
	shut    int
	panicOn string
}

func (l *recListener) HandleCommit(b []raft.CommittedBatch) {
	if l.panicOn == "commit" {
		panic("listener boom")
	}
	l.commits = append(l.commits, b...)
}
func (l *recListener) HandleLoadSnapshot(id raft.OffsetAndEpoch, r raft.SnapshotReader) {
	l.loads = append(l.loads, id)
}
func (l *recListener) HandleLeaderChange(le raft.LeaderAndEpoch) { l.leaders = append(l.leaders, le) }
func (l *recListener) BeginShutdown()                            { l.shut++ }

// electLocal makes the local node (voter set 1,2,3) leader of epoch 1
// through a standard election (pre-vote off) and answers its
// BeginQuorumEpochs.
func (c *tctx) electLocal() {
	c.t.Helper()
	c.advance(2 * c.cfg.ElectionTimeout)
	for _, o := range sentOf(c.takeSent(), 52) {
		c.respond(o, voteResp(c.status().Epoch, -1, true))
	}
	if c.status().Role != raft.RoleLeader {
		c.t.Fatalf("not leader after votes: %+v", c.status())
	}
	c.takeSent()
}

var errInjected = rafttest.ErrInjected

func newStore(st raft.ElectionState) *rafttest.MemStateStore {
	s := rafttest.NewMemStateStore()
	_ = s.Write(st)
	return s
}

func newDriver(cfg raft.Config, store raft.QuorumStateStore) (*raft.Driver, error) {
	return raft.NewDriver(cfg, rafttest.NewMemLog(), store, &fakeTransport{}, rand.New(rand.NewPCG(1, 0)), zap.NewNop(), time.Unix(1_700_000_000, 0))
}
