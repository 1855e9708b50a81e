package node

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/topics"
)

// fakeLeader answers ControllerRegistration with the queued error codes, then
// with success, and records what it was sent.
type fakeLeader struct {
	mu    sync.Mutex
	codes []int16
	got   []*kmsg.ControllerRegistrationRequest
	seen  chan struct{}
}

func (f *fakeLeader) Handle(_ *network.ConnInfo, _ protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	r, ok := req.(*kmsg.ControllerRegistrationRequest)
	if !ok {
		respond(nil)
		return
	}
	resp := r.ResponseKind().(*kmsg.ControllerRegistrationResponse)
	f.mu.Lock()
	f.got = append(f.got, r)
	if len(f.codes) > 0 {
		resp.ErrorCode, f.codes = f.codes[0], f.codes[1:]
		resp.ErrorMessage = kmsg.StringPtr("refused by the test")
	}
	f.mu.Unlock()
	respond(resp)
	select {
	case f.seen <- struct{}{}:
	default:
	}
}

func (f *fakeLeader) requests() []*kmsg.ControllerRegistrationRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*kmsg.ControllerRegistrationRequest(nil), f.got...)
}

// waitRequests waits until the fake leader has seen n registrations.
func (f *fakeLeader) waitRequests(t *testing.T, n int) []*kmsg.ControllerRegistrationRequest {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if got := f.requests(); len(got) >= n {
			return got
		}
		select {
		case <-f.seen:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("fake leader saw %d registrations, want %d", len(f.requests()), n)
		}
	}
}

// registrationNode is node 1 of a static quorum whose voter 2 is a fake
// leader on a free port of 127.0.0.1. Node 1's own address is the fake's
// too (the node's listener never starts), so a registration with itself
// would reach the fake.
func registrationNode(t *testing.T, f *fakeLeader, lg *zap.Logger, topic string) *Node {
	t.Helper()
	srv, err := network.NewServer(network.ServerConfig{
		Apis:      Apis(),
		Listeners: []network.ListenerConfig{{Name: "CONTROLLER", Addr: "127.0.0.1:0"}},
		Logger:    zap.NewNop(),
	}, f)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	port := srv.Addrs()["CONTROLLER"].(*net.TCPAddr).Port
	p, err := config.ParseProperties(fmt.Sprintf("node.id=1\nprocess.roles=controller\n"+
		"listeners=CONTROLLER://127.0.0.1:%[1]d\ncontroller.listener.names=CONTROLLER\n"+
		"controller.quorum.voters=1@127.0.0.1:%[1]d,2@127.0.0.1:%[1]d,3@127.0.0.1:19095\nlog.dirs=%s\n", port, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.New(p, false)
	if err != nil {
		t.Fatal(err)
	}
	n, err := New(cfg, Options{ClusterID: "MkU3OEVBNTcwNTJENDM2Qg", TopicName: topic, Logger: lg, ShutdownTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	n.rcfg.Endpoints = []raft.Endpoint{{Name: "CONTROLLER", Host: "node1.example", Port: 19093}}
	return n
}

// startRegistrar runs n's registrar until the test ends; the watch tells
// which status it last went idle on.
func startRegistrar(t *testing.T, n *Node) *idleWatch {
	t.Helper()
	n.reg = n.newRegistrar()
	w := &idleWatch{ch: make(chan struct{}, 1)}
	n.reg.waiting = w.note
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.reg.run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

// idleWatch follows the registrar's waits (registrar.waiting).
type idleWatch struct {
	mu   sync.Mutex
	last raft.Status
	ch   chan struct{}
}

func (w *idleWatch) note(st raft.Status) {
	w.mu.Lock()
	w.last = st
	w.mu.Unlock()
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// wait waits until the registrar waits after acting on a status with
// want's epoch, leader and high watermark: whatever it sent for that
// status has been answered.
func (w *idleWatch) wait(t *testing.T, want raft.Status) {
	t.Helper()
	same := func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.last.Epoch == want.Epoch && w.last.LeaderID == want.LeaderID && w.last.HighWatermark == want.HighWatermark
	}
	deadline := time.After(10 * time.Second)
	for !same() {
		select {
		case <-w.ch:
		case <-deadline:
			w.mu.Lock()
			defer w.mu.Unlock()
			t.Fatalf("the registrar never waited after acting on leader %d epoch %d (last: leader %d epoch %d)",
				want.LeaderID, want.Epoch, w.last.LeaderID, w.last.Epoch)
		}
	}
}

func (n *Node) setStatus(st raft.Status) {
	n.status.Store(&st)
	n.reg.notify()
}

// A follower registers with the leader: it retries NOT_CONTROLLER and
// UNSUPPORTED_VERSION with backoff, stops once acknowledged, and registers
// again, with the same incarnation, in a new epoch; it never registers with
// itself.
func TestRegistrationWithLeader(t *testing.T) {
	f := &fakeLeader{codes: []int16{kerr.NotController.Code, kerr.UnsupportedVersion.Code}, seen: make(chan struct{}, 1)}
	n := registrationNode(t, f, nil, topics.ClusterMetadata)
	if !n.registrationEnabled() {
		t.Fatal("a controller on __cluster_metadata does not register")
	}
	idle := startRegistrar(t, n)
	leads := raft.Status{NodeID: 1, LeaderID: 1, Epoch: 3} // this node leads: nothing to do
	n.setStatus(leads)
	idle.wait(t, leads)
	if got := f.requests(); len(got) != 0 {
		t.Fatalf("registered with itself: %d requests", len(got))
	}

	start := time.Now()
	n.setStatus(raft.Status{NodeID: 1, LeaderID: 2, Epoch: 4})
	got := f.waitRequests(t, 3)
	// Two refusals: 100 ms, then 200 ms of backoff (+-2 %).
	if el := time.Since(start); el < 290*time.Millisecond {
		t.Errorf("three attempts in %v: no backoff", el)
	}
	req := got[2]
	if req.ControllerID != 1 || req.IncarnationID == ([16]byte{}) || req.ZkMigrationReady {
		t.Errorf("request %+v", req)
	}
	for _, r := range got {
		if r.IncarnationID != req.IncarnationID {
			t.Errorf("incarnation changed between attempts")
		}
	}
	if len(req.Listeners) != 1 || req.Listeners[0].Name != "CONTROLLER" || req.Listeners[0].Host != "node1.example" ||
		req.Listeners[0].Port != 19093 || req.Listeners[0].SecurityProtocol != 0 {
		t.Errorf("listeners %+v", req.Listeners)
	}
	features := map[string][2]int16{}
	for _, f := range req.Features {
		features[f.Name] = [2]int16{f.MinSupportedVersion, f.MaxSupportedVersion}
	}
	if features["kraft.version"] != [2]int16{0, 1} || features["metadata.version"] != [2]int16{7, 33} {
		t.Errorf("features %v", features)
	}

	// Acknowledged: nothing more in this epoch, even when woken.
	woken := raft.Status{NodeID: 1, LeaderID: 2, Epoch: 4, HighWatermark: 10}
	n.setStatus(woken)
	idle.wait(t, woken)
	if got := f.requests(); len(got) != 3 {
		t.Fatalf("%d registrations after the acknowledgement, want 3", len(got))
	}
	n.setStatus(raft.Status{NodeID: 1, LeaderID: 2, Epoch: 5})
	got = f.waitRequests(t, 4)
	if got[3].IncarnationID != req.IncarnationID {
		t.Errorf("a new epoch drew a new incarnation")
	}
}

// A refusal that does not clear up on its own is logged once per epoch
// and retried with backoff, as Kafka retries any refusal.
func TestRegistrationNonRetriableLoggedOnce(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	codes := []int16{kerr.ClusterAuthorizationFailed.Code, kerr.ClusterAuthorizationFailed.Code, kerr.ClusterAuthorizationFailed.Code}
	f := &fakeLeader{codes: codes, seen: make(chan struct{}, 1)}
	n := registrationNode(t, f, zap.New(core), topics.ClusterMetadata)
	startRegistrar(t, n)
	n.setStatus(raft.Status{NodeID: 1, LeaderID: 2, Epoch: 4})
	f.waitRequests(t, 4)
	if w := logs.FilterMessageSnippet("refused this controller's registration").Len(); w != 1 {
		t.Errorf("%d warnings for three refusals, want 1", w)
	}
}

// A leader that does not answer (nothing listens) costs retries, not the
// registrar: it registers once the leader changes to one that answers.
func TestRegistrationUnreachableLeader(t *testing.T) {
	f := &fakeLeader{seen: make(chan struct{}, 1)}
	n := registrationNode(t, f, nil, topics.ClusterMetadata)
	idle := startRegistrar(t, n)
	for _, st := range []raft.Status{
		{NodeID: 1, LeaderID: 3, Epoch: 4}, // 127.0.0.1:19095: nothing listens
		{NodeID: 1, LeaderID: 9, Epoch: 5}, // unknown: no address
	} {
		n.setStatus(st)
		idle.wait(t, st) // the attempt failed and the registrar backs off
	}
	n.setStatus(raft.Status{NodeID: 1, LeaderID: 2, Epoch: 6})
	f.waitRequests(t, 1)
}

// The raft test server's partition has no Kafka controller to register with.
func TestRegistrationOffForPerformanceTopic(t *testing.T) {
	n := registrationNode(t, &fakeLeader{}, nil, topics.RaftPerformanceTest)
	if n.registrationEnabled() {
		t.Error("a __raft_performance_test node registers")
	}
}
