package raft_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap/zaptest"

	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/raft/rafttest"
)

// changeCtx is a standalone leader (node 1, dynamic quorum) driven by hand.
type changeCtx struct {
	t    *testing.T
	d    *raft.Driver
	tr   *fakeTransport
	now  time.Time
	refs int
}

func newChangeCtx(t *testing.T) *changeCtx {
	t.Helper()
	l := rafttest.NewMemLog()
	writeTestBootstrapSnapshot(t, l, []int32{1})
	cfg := raft.DefaultConfig()
	cfg.NodeID, cfg.DirectoryID, cfg.ClusterID = 1, testDir(1), testCluster
	cfg.ListenerName = "CONTROLLER"
	cfg.Endpoints = []raft.Endpoint{{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9001}}
	cfg.Bootstrap = []raft.Endpoint{{Host: "127.0.0.1", Port: 9001}}
	cfg.AppendLinger = 0
	c := &changeCtx{t: t, tr: &fakeTransport{}, now: time.Unix(100, 0)}
	d, err := raft.NewDriver(cfg, l, rafttest.NewMemStateStore(), c.tr, rand.New(rand.NewPCG(1, 1)), zaptest.NewLogger(t), c.now)
	if err != nil {
		t.Fatal(err)
	}
	c.d = d
	if st := d.Status(); st.Role != raft.RoleLeader || st.HighWatermark < 1 {
		t.Fatalf("standalone leader: %+v", st)
	}
	return c
}

// step delivers req and returns its answer, nil when it is deferred.
func (c *changeCtx) step(req kmsg.Request) (ref int, resp kmsg.Response) {
	c.t.Helper()
	c.refs++
	ref = c.refs
	n := len(c.tr.replies)
	if err := c.d.Step(c.now, raft.Message{Request: req, Ref: ref}); err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.d.Poll(c.now); err != nil {
		c.t.Fatal(err)
	}
	return ref, c.replyTo(ref, n)
}

// replyTo is the answer to ref among the replies from index n on.
func (c *changeCtx) replyTo(ref, n int) kmsg.Response {
	for _, r := range c.tr.replies[n:] {
		if r.ref == ref {
			return r.resp
		}
	}
	return nil
}

// fetch is a Fetch v17 from replica id with its directory at offset.
func (c *changeCtx) fetch(id int32, offset int64) {
	c.t.Helper()
	f := fetchReq(id, 1, offset, 1, 0)
	f.Topics[0].Partitions[0].ReplicaDirectoryID = testDir(id)
	c.step(f)
}

func (c *changeCtx) addReq(id int32) *kmsg.AddRaftVoterRequest {
	req := kmsg.NewPtrAddRaftVoterRequest()
	req.Version = 1
	req.ClusterID = strp(testCluster)
	req.VoterID, req.VoterDirectoryID = id, testDir(id)
	req.AckWhenCommitted = true
	l := kmsg.NewAddRaftVoterRequestListener()
	l.Name, l.Host, l.Port = "CONTROLLER", "127.0.0.1", uint16(9000+id)
	req.Listeners = append(req.Listeners, l)
	return req
}

func (c *changeCtx) removeReq(id int32) *kmsg.RemoveRaftVoterRequest {
	req := kmsg.NewPtrRemoveRaftVoterRequest()
	req.ClusterID = strp(testCluster)
	req.VoterID, req.VoterDirectoryID = id, testDir(id)
	return req
}

// answerVersions answers the ApiVersions the leader sent to id.
func (c *changeCtx) answerVersions(id int32, resp *kmsg.ApiVersionsResponse) {
	c.t.Helper()
	var o *raft.Outbound
	for i := range c.tr.sent {
		if c.tr.sent[i].To == id && c.tr.sent[i].Request.Key() == int16(kmsg.ApiVersions) {
			o = &c.tr.sent[i]
		}
	}
	if o == nil {
		c.t.Fatalf("no ApiVersions sent to %d; sent %d requests", id, len(c.tr.sent))
	}
	c.tr.sent = nil
	if err := c.d.Step(c.now, raft.Message{From: id, Corr: o.Corr, Response: resp}); err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.d.Poll(c.now); err != nil {
		c.t.Fatal(err)
	}
}

func code(resp kmsg.Response) int16 {
	if a := testApis.Lookup(resp.Key()); a != nil && a.TopError != nil {
		return *a.TopError(resp)
	}
	return -100
}

// An observer is added once it answers ApiVersions with kraft.version 0-1
// and is caught up; the answer waits for the Voters record to commit, which
// needs the new voter's fetch. Removing the leader then commits on the new
// voter alone and makes the leader resign.
func TestAddThenRemoveLeader(t *testing.T) {
	c := newChangeCtx(t)
	leo := c.d.Status().LogEndOffset
	c.fetch(2, leo) // caught up observer
	ref, resp := c.step(c.addReq(2))
	if resp != nil {
		t.Fatalf("add answered before the ApiVersions round: %+v", resp)
	}
	n := len(c.tr.replies)
	c.answerVersions(2, testApis.ApiVersionsResponse(4))
	st := c.d.Status()
	if st.Voters.Len() != 2 || !st.Voters.Contains(raft.ReplicaKey{ID: 2, DirectoryID: testDir(2)}) {
		t.Fatalf("voters after append %v", st.Voters)
	}
	if c.replyTo(ref, n) != nil {
		t.Fatal("add answered before the Voters record committed")
	}
	// A second change is refused while this one is in flight.
	if _, r := c.step(c.removeReq(1)); code(r) != kerr.RequestTimedOut.Code {
		t.Fatalf("remove while an add is pending: %v", r)
	}
	c.fetch(2, st.LogEndOffset)
	if r := c.replyTo(ref, n); r == nil || code(r) != 0 {
		t.Fatalf("add after commit: %+v", r)
	}
	// Removing the leader: committed by voter 2 alone, then the leader resigns.
	ref, resp = c.step(c.removeReq(1))
	if resp != nil {
		t.Fatalf("remove answered before commit: %+v", resp)
	}
	n = len(c.tr.replies)
	if c.d.Status().Voters.Len() != 1 || c.d.Status().Role != raft.RoleLeader {
		t.Fatalf("after remove append: %+v", c.d.Status())
	}
	c.fetch(2, c.d.Status().LogEndOffset)
	if r := c.replyTo(ref, n); r == nil || code(r) != 0 {
		t.Fatalf("remove after commit: %+v", r)
	}
	if _, err := c.d.Poll(c.now); err != nil {
		t.Fatal(err)
	}
	if st := c.d.Status(); st.Role != raft.RoleResigned {
		t.Fatalf("removed leader did not resign: %+v", st)
	}
}

// The refusals that come before any change, in Kafka's order.
func TestVoterChangeRefusals(t *testing.T) {
	c := newChangeCtx(t)
	if _, r := c.step(c.addReq(1)); code(r) != kerr.DuplicateVoter.Code {
		t.Fatalf("add of a voter id: %+v", r)
	} else if m := r.(*kmsg.AddRaftVoterResponse).ErrorMessage; m == nil || *m == "" {
		t.Fatal("DUPLICATE_VOTER without a message")
	}
	// No endpoint on the default listener: Kafka 4.4's words, listeners in
	// its HashMap order, a repeated name keeping its first place.
	noDefault := c.addReq(3)
	noDefault.Listeners = nil
	for i, name := range []string{"plaintext", "CONTROLLER2", "SSL", "PLAINTEXT"} {
		l := kmsg.NewAddRaftVoterRequestListener()
		l.Name, l.Host, l.Port = name, "h"+name, uint16(9000+i)
		noDefault.Listeners = append(noDefault.Listeners, l)
	}
	want := "Add voter request didn't include the endpoint (Endpoints(endpoints={ListenerName(SSL)=hSSL/<unresolved>:9002, " +
		"ListenerName(PLAINTEXT)=hPLAINTEXT/<unresolved>:9003, ListenerName(CONTROLLER2)=hCONTROLLER2/<unresolved>:9001})) " +
		"for the default listener ListenerName(CONTROLLER)"
	if _, r := c.step(noDefault); code(r) != kerr.InvalidRequest.Code {
		t.Fatalf("add without the default listener: %+v", r)
	} else if m := r.(*kmsg.AddRaftVoterResponse).ErrorMessage; m == nil || *m != want {
		t.Fatalf("add without the default listener: message %v\nwant %q", m, want)
	}
	if _, r := c.step(c.removeReq(3)); code(r) != kerr.VoterNotFound.Code {
		t.Fatalf("remove of a non-voter: %+v", r)
	}
	if _, r := c.step(c.removeReq(1)); code(r) != kerr.VoterNotFound.Code {
		t.Fatalf("remove of the only voter: %+v", r)
	}
	// Not caught up: the observer never fetched.
	ref, _ := c.step(c.addReq(3))
	n := len(c.tr.replies)
	c.answerVersions(3, testApis.ApiVersionsResponse(4))
	if r := c.replyTo(ref, n); code(r) != kerr.RequestTimedOut.Code {
		t.Fatalf("add of a lagging observer: %+v", r)
	}
	// No kraft.version range (ApiVersions v3 shows none): INVALID_REQUEST.
	c.fetch(3, c.d.Status().LogEndOffset)
	ref, _ = c.step(c.addReq(3))
	n = len(c.tr.replies)
	c.answerVersions(3, testApis.ApiVersionsResponse(3))
	if r := c.replyTo(ref, n); code(r) != kerr.InvalidRequest.Code {
		t.Fatalf("add of a voter without kraft.version 1: %+v", r)
	}
	// A pending add times out after the request timeout.
	ref, _ = c.step(c.addReq(3))
	n = len(c.tr.replies)
	c.now = c.now.Add(raft.DefaultConfig().RequestTimeout)
	if _, err := c.d.Poll(c.now); err != nil {
		t.Fatal(err)
	}
	if r := c.replyTo(ref, n); code(r) != kerr.RequestTimedOut.Code {
		t.Fatalf("add past its deadline: %+v", r)
	}
}

// followerSends runs node 2 as a follower of leader 1 in a dynamic quorum
// with the given bootstrap voters, answering its fetches, until it sends a
// request other than Fetch (nil after 3s).
func followerSends(t *testing.T, voters []int32, tune func(*raft.Config)) kmsg.Request {
	t.Helper()
	l := rafttest.NewMemLog()
	writeTestBootstrapSnapshot(t, l, voters)
	cfg := raft.DefaultConfig()
	cfg.NodeID, cfg.DirectoryID, cfg.ClusterID = 2, testDir(2), testCluster
	cfg.ListenerName = "CONTROLLER"
	cfg.Endpoints = []raft.Endpoint{{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9002}}
	cfg.Bootstrap = []raft.Endpoint{{Host: "127.0.0.1", Port: 9001}}
	tune(&cfg)
	tr := &fakeTransport{}
	now := time.Unix(100, 0)
	store := newStore(raft.ElectionState{Epoch: 1, LeaderID: 1, VotedID: -1})
	d, err := raft.NewDriver(cfg, l, store, tr, rand.New(rand.NewPCG(1, 1)), zaptest.NewLogger(t), now)
	if err != nil {
		t.Fatal(err)
	}
	if st := d.Status(); st.Role != raft.RoleFollower {
		t.Fatalf("status %+v", st)
	}
	for i := 0; i < 10; i++ {
		now = now.Add(300 * time.Millisecond)
		if _, err := d.Poll(now); err != nil {
			t.Fatal(err)
		}
		sent := tr.sent
		tr.sent = nil
		for _, o := range sent {
			if _, ok := o.Request.(*kmsg.FetchRequest); !ok {
				return o.Request
			}
			if err := d.Step(now, raft.Message{From: o.To, Corr: o.Corr, Response: fetchResp(1, 1, 0, nil)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return nil
}

// A follower whose recorded endpoint is stale sends UpdateRaftVoter to the
// leader once its update period (fetch.timeout) expires.
func TestFollowerSendsUpdateVoter(t *testing.T) {
	req := followerSends(t, []int32{1, 2}, func(c *raft.Config) {
		c.Endpoints[0].Port = 9102 // the set records 9002
	})
	update, ok := req.(*kmsg.UpdateRaftVoterRequest)
	if !ok {
		t.Fatalf("sent %v, want UpdateRaftVoter", req)
	}
	if update.VoterID != 2 || update.VoterDirectoryID != testDir(2) || update.CurrentLeaderEpoch != 1 ||
		len(update.Listeners) != 1 || update.Listeners[0].Port != 9102 || update.KRaftVersionFeature.MaxSupportedVersion != 1 {
		t.Fatalf("update %+v", update)
	}
}

// With auto-join an observer asks to be added (answered at append), and an
// observer whose id is a voter under another directory asks to remove that
// voter first; without it, it only fetches.
func TestAutoJoin(t *testing.T) {
	if req := followerSends(t, []int32{1}, func(*raft.Config) {}); req != nil {
		t.Fatalf("observer without auto-join sent %v", req)
	}
	req := followerSends(t, []int32{1}, func(c *raft.Config) { c.AutoJoin = true })
	add, ok := req.(*kmsg.AddRaftVoterRequest)
	if !ok || add.VoterID != 2 || add.VoterDirectoryID != testDir(2) || add.AckWhenCommitted ||
		len(add.Listeners) != 1 || add.Listeners[0].Port != 9002 {
		t.Fatalf("auto-join sent %+v, want AddRaftVoter of 2 without AckWhenCommitted", req)
	}
	req = followerSends(t, []int32{1, 2}, func(c *raft.Config) { c.AutoJoin, c.DirectoryID = true, testDir(7) })
	rm, ok := req.(*kmsg.RemoveRaftVoterRequest)
	if !ok || rm.VoterID != 2 || rm.VoterDirectoryID != testDir(2) {
		t.Fatalf("auto-join with a new directory sent %+v, want RemoveRaftVoter of 2's old directory", req)
	}
}

// At kraft.version 0, Kafka 4.4's leader takes a voter's UpdateRaftVoter into
// an in-memory copy of the static set (for a later kraft.version upgrade) and
// answers NONE; JVM followers of a kraftd leader in a static quorum send it
// every fetch timeout and log an error for any other answer. Nothing is
// appended: there is no Voters record at kraft.version 0.
func TestUpdateVoterAtKRaftVersion0(t *testing.T) {
	cfg := raft.DefaultConfig()
	cfg.NodeID, cfg.DirectoryID, cfg.ClusterID = 1, testDir(1), testCluster
	cfg.ListenerName = "CONTROLLER"
	cfg.Voters = []raft.Voter{{ID: 1, Endpoints: []raft.Endpoint{{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9001}}}}
	cfg.AppendLinger = 0
	c := &changeCtx{t: t, tr: &fakeTransport{}, now: time.Unix(100, 0)}
	l := rafttest.NewMemLog()
	d, err := raft.NewDriver(cfg, l, rafttest.NewMemStateStore(), c.tr, rand.New(rand.NewPCG(1, 1)), zaptest.NewLogger(t), c.now)
	if err != nil {
		t.Fatal(err)
	}
	c.d = d
	st := d.Status()
	if st.Role != raft.RoleLeader || st.HighWatermark < 1 {
		t.Fatalf("static single voter: %+v", st)
	}
	update := func(id int32) int16 {
		req := kmsg.NewPtrUpdateRaftVoterRequest()
		cluster := testCluster
		req.ClusterID = &cluster
		req.CurrentLeaderEpoch = st.Epoch
		req.VoterID, req.VoterDirectoryID = id, testDir(id)
		l := kmsg.NewUpdateRaftVoterRequestListener()
		l.Name, l.Host, l.Port = "CONTROLLER", "127.0.0.1", 9001
		req.Listeners = append(req.Listeners, l)
		req.KRaftVersionFeature.MinSupportedVersion, req.KRaftVersionFeature.MaxSupportedVersion = 0, 1
		_, resp := c.step(req)
		r, ok := resp.(*kmsg.UpdateRaftVoterResponse)
		if !ok {
			t.Fatalf("UpdateRaftVoter answer %T", resp)
		}
		if r.CurrentLeader.LeaderID != 1 || r.CurrentLeader.LeaderEpoch != st.Epoch {
			t.Errorf("CurrentLeader %+v", r.CurrentLeader)
		}
		return r.ErrorCode
	}
	end := l.EndOffset()
	if code := update(1); code != 0 {
		t.Errorf("update of static voter 1 at kraft.version 0: %v, want NONE", kerr.ErrorForCode(code))
	}
	if code := update(5); code != kerr.VoterNotFound.Code {
		t.Errorf("update of non-voter 5: %v, want VOTER_NOT_FOUND", kerr.ErrorForCode(code))
	}
	if got := l.EndOffset(); got != end {
		t.Errorf("log end moved from %v to %v: nothing may be appended at kraft.version 0", end, got)
	}
}
