package network

import (
	"bufio"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/protocol"
)

// fakePeer is a scripted Kafka server: it advertises the given version ranges (answering
// a too-new ApiVersions with UNSUPPORTED_VERSION in the v0 layout, as Kafka does) and
// hands every other request to handle.
type fakePeer struct {
	t      *testing.T
	ln     net.Listener
	apis   []kmsg.ApiVersionsResponseApiKey
	handle func(fc *fakeConn, hdr protocol.RawRequestHeader, req kmsg.Request)

	mu          sync.Mutex
	apiVersions []int16 // ApiVersions versions received, in order
	conns       []*fakeConn
}

type fakeConn struct {
	nc     net.Conn
	mu     sync.Mutex
	closed chan struct{} // closed when the client closed the connection
}

func (fc *fakeConn) reply(corr int32, resp kmsg.Response) error {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	_, err := fc.nc.Write(protocol.AppendResponse(nil, corr, resp))
	return err
}

func apiKey(key, lo, hi int16) kmsg.ApiVersionsResponseApiKey {
	k := kmsg.NewApiVersionsResponseApiKey()
	k.ApiKey, k.MinVersion, k.MaxVersion = key, lo, hi
	return k
}

func startFakePeer(t *testing.T, apis []kmsg.ApiVersionsResponseApiKey, handle func(fc *fakeConn, hdr protocol.RawRequestHeader, req kmsg.Request)) *fakePeer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakePeer{t: t, ln: ln, apis: apis, handle: handle}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		f.mu.Lock()
		for _, c := range f.conns {
			c.nc.Close()
		}
		f.mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			fc := &fakeConn{nc: nc, closed: make(chan struct{})}
			f.mu.Lock()
			f.conns = append(f.conns, fc)
			f.mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				f.serve(fc)
			}()
		}
	}()
	return f
}

func (f *fakePeer) addr() string { return f.ln.Addr().String() }

func (f *fakePeer) connCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.conns)
}

func (f *fakePeer) serve(fc *fakeConn) {
	defer close(fc.closed)
	defer fc.nc.Close()
	br := bufio.NewReader(fc.nc)
	for {
		frame, err := protocol.ReadFrame(br, protocol.DefaultMaxFrameSize, nil)
		if err != nil {
			return
		}
		hdr, body, err := protocol.ParseRequestHeader(frame)
		if err != nil {
			f.t.Errorf("fake peer: %v", err)
			return
		}
		if hdr.APIKey == int16(kmsg.ApiVersions) {
			f.mu.Lock()
			f.apiVersions = append(f.apiVersions, hdr.APIVersion)
			f.mu.Unlock()
			resp := kmsg.NewPtrApiVersionsResponse()
			var own kmsg.ApiVersionsResponseApiKey
			for _, k := range f.apis {
				if k.ApiKey == int16(kmsg.ApiVersions) {
					own = k
				}
			}
			if hdr.APIVersion > own.MaxVersion {
				resp.Version = 0
				resp.ErrorCode = kerr.UnsupportedVersion.Code
				resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{own}
			} else {
				resp.Version = hdr.APIVersion
				resp.ApiKeys = f.apis
			}
			if fc.reply(hdr.CorrelationID, resp) != nil {
				return
			}
			continue
		}
		req := kmsg.RequestForKey(hdr.APIKey)
		req.SetVersion(hdr.APIVersion)
		if err := req.ReadFrom(body); err != nil {
			f.t.Errorf("fake peer: decode %s v%d: %v", kmsg.NameForKey(hdr.APIKey), hdr.APIVersion, err)
			return
		}
		f.handle(fc, hdr, req)
	}
}

// sendSync sends and waits for the callback.
func sendSync(t *testing.T, p *Peers, id int32, req kmsg.Request) (kmsg.Response, error) {
	t.Helper()
	type result struct {
		resp kmsg.Response
		err  error
	}
	ch := make(chan result, 1)
	p.Send(id, req, func(resp kmsg.Response, err error) { ch <- result{resp, err} })
	select {
	case r := <-ch:
		return r.resp, r.err
	case <-time.After(testTimeout):
		t.Fatalf("no callback for %s to node %d", kmsg.NameForKey(req.Key()), id)
		return nil, nil
	}
}

func newTestPeers(t *testing.T, cfg PeerConfig) *Peers {
	if cfg.Apis == nil {
		cfg.Apis = testApis
	}
	p := NewPeers(cfg)
	t.Cleanup(func() {
		p.Close()
		done := make(chan struct{})
		go func() { p.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(testTimeout):
			t.Error("peer goroutines still running after Close")
		}
	})
	return p
}

// Against a peer advertising older versions: ApiVersions falls back from v4 to the
// peer's max, each request goes out at min(kraftd max, peer max), Fetch tagged fields of
// later versions are not written, and apis without overlap fail with UNSUPPORTED_VERSION.
func TestPeersVersionNegotiation(t *testing.T) {
	got := make(chan kmsg.Request, 10)
	f := startFakePeer(t, []kmsg.ApiVersionsResponseApiKey{
		apiKey(int16(kmsg.ApiVersions), 0, 2),
		apiKey(int16(kmsg.Fetch), 4, 12),
		apiKey(int16(kmsg.Vote), 0, 0),
		apiKey(int16(kmsg.BeginQuorumEpoch), 5, 6), // no overlap with kraftd's 0-1
	}, func(fc *fakeConn, hdr protocol.RawRequestHeader, req kmsg.Request) {
		got <- req
		resp := req.ResponseKind()
		resp.SetVersion(hdr.APIVersion)
		fc.reply(hdr.CorrelationID, resp)
	})
	p := newTestPeers(t, PeerConfig{ClientID: "raft-client-1"})
	p.SetAddress(2, f.addr())

	fetch := kmsg.NewPtrFetchRequest()
	fetch.ReplicaState.ID = 1
	topic := kmsg.NewFetchRequestTopic()
	part := kmsg.NewFetchRequestTopicPartition()
	part.ReplicaDirectoryID = [16]byte{1, 2, 3}
	part.HighWatermark = 10
	topic.Partitions = append(topic.Partitions, part)
	fetch.Topics = append(fetch.Topics, topic)
	fetch.Version = 17

	resp, err := sendSync(t, p, 2, fetch)
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	if resp.GetVersion() != 12 {
		t.Fatalf("fetch response v%d, want 12", resp.GetVersion())
	}
	sent := (<-got).(*kmsg.FetchRequest)
	if sent.Version != 12 {
		t.Fatalf("fetch sent at v%d, want 12", sent.Version)
	}
	if sent.ReplicaID != 1 || sent.ReplicaState.ID != -1 {
		t.Fatalf("fetch v12 replica id %d, replica state %+v: want the id in ReplicaID and no ReplicaState tag", sent.ReplicaID, sent.ReplicaState)
	}
	sp := sent.Topics[0].Partitions[0]
	if sp.ReplicaDirectoryID != [16]byte{} || sp.HighWatermark != math.MaxInt64 || sp.UnknownTags.Len() != 0 || sent.UnknownTags.Len() != 0 {
		t.Fatalf("fetch v12 carries tagged fields of later versions: %+v", sp)
	}
	// The caller's request is untouched.
	if fetch.Version != 17 || fetch.ReplicaState.ID != 1 || fetch.Topics[0].Partitions[0].ReplicaDirectoryID[0] != 1 {
		t.Fatalf("Send modified the caller's request: %+v", fetch)
	}

	if _, err := sendSync(t, p, 2, voteRequest(1)); err != nil {
		t.Fatalf("vote: %v", err)
	}
	if v := (<-got).GetVersion(); v != 0 {
		t.Fatalf("vote sent at v%d, want 0", v)
	}

	for _, req := range []kmsg.Request{kmsg.NewPtrBeginQuorumEpochRequest(), kmsg.NewPtrDescribeQuorumRequest(), kmsg.NewPtrMetadataRequest()} {
		_, err := sendSync(t, p, 2, req)
		if !errors.Is(err, kerr.UnsupportedVersion) {
			t.Fatalf("%s: %v, want UNSUPPORTED_VERSION", kmsg.NameForKey(req.Key()), err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.apiVersions) != 2 || f.apiVersions[0] != 4 || f.apiVersions[1] != 2 {
		t.Fatalf("ApiVersions versions sent: %v, want [4 2]", f.apiVersions)
	}
	if len(f.conns) != 1 {
		t.Fatalf("%d connections, want 1", len(f.conns))
	}
}

// A version that cannot carry a field whose value changes the request's meaning is not
// used: a pre-vote to a peer that knows Vote only up to v1 would arrive as a real vote,
// and a Fetch below v12 would lose LastFetchedEpoch (divergence detection). Send fails
// with UNSUPPORTED_VERSION and nothing is written; the same requests without those
// fields, and a pre-vote to a peer with Vote v2, go out.
func TestPeersRefusesMeaningChangingDowngrade(t *testing.T) {
	newPeer := func(vote, fetch int16) (*Peers, chan kmsg.Request) {
		got := make(chan kmsg.Request, 10)
		f := startFakePeer(t, []kmsg.ApiVersionsResponseApiKey{
			apiKey(int16(kmsg.ApiVersions), 0, 3),
			apiKey(int16(kmsg.Vote), 0, vote),
			apiKey(int16(kmsg.Fetch), 4, fetch),
		}, func(fc *fakeConn, hdr protocol.RawRequestHeader, req kmsg.Request) {
			got <- req
			resp := req.ResponseKind()
			resp.SetVersion(hdr.APIVersion)
			fc.reply(hdr.CorrelationID, resp)
		})
		p := newTestPeers(t, PeerConfig{ClientID: "raft-client-1"})
		p.SetAddress(2, f.addr())
		return p, got
	}
	preVote := func(on bool) *kmsg.VoteRequest {
		req := voteRequest(7)
		req.Topics[0].Partitions[0].PreVote = on
		return req
	}
	fetchAt := func(lastFetchedEpoch int32) *kmsg.FetchRequest {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaState.ID = 1
		topic := kmsg.NewFetchRequestTopic()
		topic.Topic = "__cluster_metadata"
		part := kmsg.NewFetchRequestTopicPartition()
		part.FetchOffset = 10
		part.LastFetchedEpoch = lastFetchedEpoch
		topic.Partitions = append(topic.Partitions, part)
		req.Topics = append(req.Topics, topic)
		return req
	}

	old, got := newPeer(1, 11)
	for _, req := range []kmsg.Request{preVote(true), fetchAt(3)} {
		_, err := sendSync(t, old, 2, req)
		if !errors.Is(err, kerr.UnsupportedVersion) {
			t.Fatalf("%s to a peer without the field's version: %v, want UNSUPPORTED_VERSION", kmsg.NameForKey(req.Key()), err)
		}
	}
	// Plain requests still go out on the same connection, at the peer's highest version;
	// nothing was written for the refused ones (the fake peer sees these first).
	if _, err := sendSync(t, old, 2, preVote(false)); err != nil {
		t.Fatalf("vote: %v", err)
	}
	if sent := (<-got).(*kmsg.VoteRequest); sent.Version != 1 || sent.Topics[0].Partitions[0].PreVote || sent.Topics[0].Partitions[0].Partition != 7 {
		t.Fatalf("vote sent at v%d, %+v; want a plain vote at v1", sent.Version, sent.Topics[0].Partitions[0])
	}
	if _, err := sendSync(t, old, 2, fetchAt(-1)); err != nil {
		t.Fatalf("fetch without a last fetched epoch: %v", err)
	}
	if sent := (<-got).(*kmsg.FetchRequest); sent.Version != 11 || sent.ReplicaID != 1 {
		t.Fatalf("fetch sent at v%d replica %d, want v11 replica 1", sent.Version, sent.ReplicaID)
	}
	select {
	case req := <-got:
		t.Fatalf("unexpected %s v%d reached the peer", kmsg.NameForKey(req.Key()), req.GetVersion())
	default:
	}

	cur, got := newPeer(2, 12)
	if _, err := sendSync(t, cur, 2, preVote(true)); err != nil {
		t.Fatalf("pre-vote to a Vote v2 peer: %v", err)
	}
	if sent := (<-got).(*kmsg.VoteRequest); sent.Version != 2 || !sent.Topics[0].Partitions[0].PreVote {
		t.Fatalf("pre-vote sent at v%d, %+v; want PreVote at v2", sent.Version, sent.Topics[0].Partitions[0])
	}
	if _, err := sendSync(t, cur, 2, fetchAt(3)); err != nil {
		t.Fatalf("fetch to a Fetch v12 peer: %v", err)
	}
	if sent := (<-got).(*kmsg.FetchRequest); sent.Version != 12 || sent.Topics[0].Partitions[0].LastFetchedEpoch != 3 {
		t.Fatalf("fetch sent at v%d, %+v; want v12 with last fetched epoch 3", sent.Version, sent.Topics[0].Partitions[0])
	}
}

// Against a kraftd server: Fetch goes out at v17 with its v15+/v17+ tags, but not the
// v18 HighWatermark tag.
func TestPeersFetchMaxVersionAgainstServer(t *testing.T) {
	got := make(chan *kmsg.FetchRequest, 1)
	h := HandlerFunc(func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		got <- req.(*kmsg.FetchRequest)
		respond(kmsg.NewPtrFetchResponse())
	})
	_, addr := startServer(t, ServerConfig{}, h)
	p := newTestPeers(t, PeerConfig{ClientID: "raft-client-1"})
	p.SetAddress(1, addr)
	fetch := kmsg.NewPtrFetchRequest()
	fetch.ReplicaID = 3 // the old field: moved into ReplicaState at v15+
	topic := kmsg.NewFetchRequestTopic()
	part := kmsg.NewFetchRequestTopicPartition()
	part.ReplicaDirectoryID = [16]byte{9}
	part.HighWatermark = 5
	topic.Partitions = append(topic.Partitions, part)
	fetch.Topics = append(fetch.Topics, topic)
	resp, err := sendSync(t, p, 1, fetch)
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetVersion() != 18 {
		t.Fatalf("response v%d", resp.GetVersion())
	}
	sent := <-got
	if sent.Version != 18 || sent.ReplicaState.ID != 3 {
		t.Fatalf("sent v%d replica state %+v", sent.Version, sent.ReplicaState)
	}
	sp := sent.Topics[0].Partitions[0]
	if sp.ReplicaDirectoryID != [16]byte{9} || sp.HighWatermark != 5 {
		t.Fatalf("partition %+v: want the directory id and the v18 high watermark", sp)
	}
}

// Many requests sent back to back on one connection come back matched to their callers.
func TestPeersPipelining(t *testing.T) {
	_, addr := startServer(t, ServerConfig{}, echoHandler)
	p := newTestPeers(t, PeerConfig{})
	p.SetAddress(1, addr)
	const n = 200
	var wg sync.WaitGroup
	var bad atomic.Int32
	for i := range int32(n) {
		wg.Add(1)
		p.Send(1, voteRequest(i), func(resp kmsg.Response, err error) {
			defer wg.Done()
			if err != nil || votePartition(resp) != i {
				bad.Add(1)
			}
		})
	}
	waitGroup(t, &wg)
	if bad.Load() != 0 {
		t.Fatalf("%d of %d requests failed or got another's response", bad.Load(), n)
	}
}

func waitGroup(t *testing.T, wg *sync.WaitGroup) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(testTimeout):
		t.Fatal("callbacks missing")
	}
}

// A request that gets no answer within RequestTimeout fails, its connection is closed,
// and the late answer is never delivered: the next request uses a new connection and
// gets its own response.
func TestPeersRequestTimeout(t *testing.T) {
	const timeout = 150 * time.Millisecond
	var first sync.Once
	lateSent := make(chan struct{})
	f := startFakePeer(t, []kmsg.ApiVersionsResponseApiKey{apiKey(18, 0, 4), apiKey(int16(kmsg.Vote), 0, 2)},
		func(fc *fakeConn, hdr protocol.RawRequestHeader, req kmsg.Request) {
			resp := voteResponseFor(req.(*kmsg.VoteRequest))
			resp.Version = hdr.APIVersion
			late := false
			first.Do(func() { late = true })
			if late {
				go func() {
					defer close(lateSent)
					select {
					case <-fc.closed: // the client gave up on it
					case <-time.After(testTimeout):
					}
					fc.reply(hdr.CorrelationID, resp) // too late: the client has closed
				}()
				return
			}
			fc.reply(hdr.CorrelationID, resp)
		})
	p := newTestPeers(t, PeerConfig{RequestTimeout: timeout, ReconnectBackoff: time.Millisecond, ReconnectBackoffMax: time.Millisecond})
	p.SetAddress(1, f.addr())
	start := time.Now()
	_, err := sendSync(t, p, 1, voteRequest(1))
	took := time.Since(start)
	if !errors.Is(err, ErrRequestTimeout) || !errors.Is(err, kerr.BrokerNotAvailable) {
		t.Fatalf("err %v, want a request timeout", err)
	}
	if took < timeout || took > testTimeout {
		t.Fatalf("timed out after %v, timeout %v", took, timeout)
	}
	f.mu.Lock()
	fc := f.conns[0]
	f.mu.Unlock()
	select {
	case <-fc.closed:
	case <-time.After(testTimeout):
		t.Fatal("connection of the timed-out request not closed")
	}
	resp, err := sendSync(t, p, 1, voteRequest(2))
	if err != nil {
		t.Fatal(err)
	}
	if got := votePartition(resp); got != 2 {
		t.Fatalf("second request got the answer to %d", got)
	}
	if n := f.connCount(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
	// The late answer went to the closed connection: the next request still gets its own.
	<-lateSent
	resp, err = sendSync(t, p, 1, voteRequest(3))
	if err != nil || votePartition(resp) != 3 {
		t.Fatalf("after the late answer: %v, answer to %d", err, votePartition(resp))
	}
}

// After the server restarts on the same address, sends succeed again.
func TestPeersReconnectAfterServerRestart(t *testing.T) {
	s1, err := NewServer(ServerConfig{Apis: testApis, Listeners: []ListenerConfig{{Name: "C", Addr: "127.0.0.1:0"}}}, echoHandler)
	if err != nil {
		t.Fatal(err)
	}
	if err := s1.Start(); err != nil {
		t.Fatal(err)
	}
	addr := s1.Addrs()["C"].String()
	p := newTestPeers(t, PeerConfig{RequestTimeout: 500 * time.Millisecond})
	p.SetAddress(1, addr)
	if _, err := sendSync(t, p, 1, voteRequest(1)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := s1.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sendSync(t, p, 1, voteRequest(2)); err == nil {
		t.Fatal("send to a stopped server succeeded")
	}
	_, _ = startServer(t, ServerConfig{Listeners: []ListenerConfig{{Name: "CONTROLLER", Addr: addr}}}, echoHandler)
	deadline := time.Now().Add(testTimeout)
	for i := int32(3); ; i++ {
		resp, err := sendSync(t, p, 1, voteRequest(i))
		if err == nil {
			if votePartition(resp) != i {
				t.Fatalf("got answer %d for %d", votePartition(resp), i)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reconnect: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Addresses that cannot work fail fast and never block Send; the node keeps retrying and
// succeeds once given a real address.
func TestPeersBadAddresses(t *testing.T) {
	p := newTestPeers(t, PeerConfig{RequestTimeout: 500 * time.Millisecond})
	p.SetAddress(1, "0.0.0.0:9093")
	p.SetAddress(2, "127.0.0.1:0")
	p.SetAddress(3, "kraftd-test-host.invalid:9093")
	p.SetAddress(4, "no-port")
	for _, id := range []int32{1, 2, 3, 4} {
		start := time.Now()
		ch := make(chan error, 1)
		p.Send(id, voteRequest(1), func(_ kmsg.Response, err error) { ch <- err })
		// A hang bound: Send dials nothing itself, whatever the machine's speed.
		if d := time.Since(start); d > testTimeout/2 {
			t.Fatalf("Send to node %d blocked for %v", id, d)
		}
		var err error
		select {
		case err = <-ch:
		case <-time.After(testTimeout):
			t.Fatalf("node %d: no callback", id)
		}
		if err == nil || !errors.Is(err, kerr.BrokerNotAvailable) {
			t.Fatalf("node %d: err %v", id, err)
		}
		if id <= 2 && !errors.Is(err, ErrNonRoutable) {
			t.Fatalf("node %d: err %v, want non-routable", id, err)
		}
		// A second send right away fails fast from the reconnect backoff.
		start = time.Now()
		if _, err := sendSync(t, p, id, voteRequest(2)); err == nil || !strings.Contains(err.Error(), "backoff") {
			t.Fatalf("node %d second send: %v", id, err)
		}
		if d := time.Since(start); d > testTimeout/2 {
			t.Fatalf("node %d: backoff failure took %v", id, d)
		}
	}
	_, addr := startServer(t, ServerConfig{}, echoHandler)
	p.SetAddress(1, addr)
	if _, err := sendSync(t, p, 1, voteRequest(3)); err != nil {
		t.Fatalf("after the address became valid: %v", err)
	}
	if _, err := sendSync(t, p, 9, voteRequest(1)); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("unknown node: %v", err)
	}
}

// Every callback runs exactly once, with responses racing timeouts, and Close fails what
// is pending.
func TestPeersCallbackExactlyOnce(t *testing.T) {
	const timeout = 100 * time.Millisecond
	f := startFakePeer(t, []kmsg.ApiVersionsResponseApiKey{apiKey(18, 0, 4), apiKey(int16(kmsg.Vote), 0, 2)},
		func(fc *fakeConn, hdr protocol.RawRequestHeader, req kmsg.Request) {
			resp := voteResponseFor(req.(*kmsg.VoteRequest))
			resp.Version = hdr.APIVersion
			// Most answers are prompt; one in five comes around or after the timeout.
			d := time.Duration(rand.IntN(int(timeout / 4)))
			if rand.IntN(5) == 0 {
				d = timeout/2 + time.Duration(rand.IntN(int(timeout)))
			}
			// Answered in order, one at a time, as a Kafka server does (the
			// scenario: answers racing the timeouts).
			time.Sleep(d)
			fc.reply(hdr.CorrelationID, resp)
		})
	p := NewPeers(PeerConfig{Apis: testApis, RequestTimeout: timeout, ReconnectBackoff: time.Millisecond, ReconnectBackoffMax: 2 * time.Millisecond})
	p.SetAddress(1, f.addr())
	const n = 300
	var calls [n]atomic.Int32
	var ok, failed atomic.Int32
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range int32(n) {
		p.Send(1, voteRequest(i), func(resp kmsg.Response, err error) {
			if calls[i].Add(1) == 1 {
				wg.Done()
			}
			if err == nil {
				if votePartition(resp) != i {
					t.Errorf("request %d got the answer to %d", i, votePartition(resp))
				}
				ok.Add(1)
			} else {
				failed.Add(1)
			}
		})
		if i%10 == 0 {
			time.Sleep(time.Duration(rand.IntN(int(timeout / 2)))) // the pace of the sends
		}
	}
	waitGroup(t, &wg)
	p.Close()
	p.wg.Wait()
	// Every request's timeout timer is due by now (RequestTimeout after its Send, the
	// last one before Close): a second callback from a timer would have run. A slow
	// machine can only delay such a wrong callback past the check, not fail a correct
	// client.
	time.Sleep(3 * timeout)
	for i := range calls {
		if c := calls[i].Load(); c != 1 {
			t.Fatalf("callback of request %d ran %d times", i, c)
		}
	}
	t.Logf("%d answered, %d failed", ok.Load(), failed.Load())
	if ok.Load() == 0 {
		t.Fatal("no request succeeded")
	}
}

func TestPeersClose(t *testing.T) {
	arrived := make(chan struct{}, 1)
	f := startFakePeer(t, []kmsg.ApiVersionsResponseApiKey{apiKey(18, 0, 4), apiKey(int16(kmsg.Vote), 0, 2)},
		func(fc *fakeConn, hdr protocol.RawRequestHeader, req kmsg.Request) { arrived <- struct{}{} }) // never answers
	p := NewPeers(PeerConfig{Apis: testApis, RequestTimeout: testTimeout})
	p.SetAddress(1, f.addr())
	errs := make(chan error, 2)
	p.Send(1, voteRequest(1), func(_ kmsg.Response, err error) { errs <- err })
	select {
	case <-arrived: // the request is out, pending an answer
	case <-time.After(testTimeout):
		t.Fatal("the request never reached the peer")
	}
	p.Close()
	if err := <-errs; !errors.Is(err, ErrPeersClosed) {
		t.Fatalf("pending request: %v", err)
	}
	p.Send(1, voteRequest(2), func(_ kmsg.Response, err error) { errs <- err })
	if err := <-errs; !errors.Is(err, ErrPeersClosed) {
		t.Fatalf("send after close: %v", err)
	}
	p.wg.Wait()
}

// Forget fails the node's pending request, closes its connection, and later sends to it
// fail as to a node never set; the other nodes are untouched.
func TestPeersForget(t *testing.T) {
	silent := startFakePeer(t, []kmsg.ApiVersionsResponseApiKey{apiKey(18, 0, 4), apiKey(int16(kmsg.Vote), 0, 2)},
		func(fc *fakeConn, hdr protocol.RawRequestHeader, req kmsg.Request) {}) // never answers
	answering := startFakePeer(t, []kmsg.ApiVersionsResponseApiKey{apiKey(18, 0, 4), apiKey(int16(kmsg.Vote), 0, 2)},
		func(fc *fakeConn, hdr protocol.RawRequestHeader, req kmsg.Request) {
			resp := voteResponseFor(req.(*kmsg.VoteRequest))
			resp.Version = hdr.APIVersion
			fc.reply(hdr.CorrelationID, resp)
		})
	p := newTestPeers(t, PeerConfig{RequestTimeout: testTimeout})
	p.SetAddress(1, silent.addr())
	p.SetAddress(2, answering.addr())
	errs := make(chan error, 1)
	p.Send(1, voteRequest(1), func(_ kmsg.Response, err error) { errs <- err })
	deadline := time.Now().Add(testTimeout)
	for silent.connCount() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	p.Forget(1)
	if err := <-errs; !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("pending request of a forgotten node: %v", err)
	}
	silent.mu.Lock()
	fc := silent.conns[0]
	silent.mu.Unlock()
	select {
	case <-fc.closed:
	case <-time.After(testTimeout):
		t.Fatal("connection of the forgotten node not closed")
	}
	if _, err := sendSync(t, p, 1, voteRequest(2)); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("send to a forgotten node: %v", err)
	}
	if _, err := sendSync(t, p, 2, voteRequest(3)); err != nil {
		t.Fatalf("send to another node: %v", err)
	}
	p.mu.Lock()
	n := len(p.peers)
	p.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d peers kept, want 1", n)
	}
}

func TestPeersBackoff(t *testing.T) {
	p := NewPeers(PeerConfig{Apis: testApis})
	pr := &peer{p: p}
	for n := 0; n < 10; n++ {
		base := min(float64(DefaultReconnectBackoff)*math.Pow(2, float64(n)), float64(DefaultReconnectBackoffMax))
		for range 50 {
			d := pr.backoff(n)
			if float64(d) < 0.8*base-1 || float64(d) > min(1.2*base, float64(DefaultReconnectBackoffMax)) {
				t.Fatalf("backoff(%d) = %v, outside 50ms*2^n +-20%% capped at 1s", n, d)
			}
		}
	}
}

// Changing a node's address closes its connection; the next request goes to the new one.
func TestPeersSetAddressMovesNode(t *testing.T) {
	hits := make(chan string, 4)
	handler := func(name string) Handler {
		return HandlerFunc(func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
			hits <- name
			respond(voteResponseFor(req.(*kmsg.VoteRequest)))
		})
	}
	_, a := startServer(t, ServerConfig{}, handler("a"))
	_, b := startServer(t, ServerConfig{}, handler("b"))
	p := newTestPeers(t, PeerConfig{})
	p.SetAddress(1, a)
	if _, err := sendSync(t, p, 1, voteRequest(1)); err != nil {
		t.Fatal(err)
	}
	p.SetAddress(1, b)
	if _, err := sendSync(t, p, 1, voteRequest(2)); err != nil {
		t.Fatal(err)
	}
	if first, second := <-hits, <-hits; first != "a" || second != "b" {
		t.Fatalf("requests went to %s then %s, want a then b", first, second)
	}
}

// OnConnect reports the features a new connection's peer supports: a kraftd server names
// kraft.version only (a Kafka controller adds metadata.version; see the interop tests).
func TestPeersOnConnectFeatures(t *testing.T) {
	h := HandlerFunc(func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		resp := req.ResponseKind()
		resp.SetVersion(hdr.APIVersion)
		respond(resp)
	})
	_, addr := startServer(t, ServerConfig{}, h)
	type connected struct {
		node     int32
		features []string
	}
	got := make(chan connected, 4)
	p := newTestPeers(t, PeerConfig{ClientID: "raft-client-1", OnConnect: func(node int32, features []string) {
		got <- connected{node, features}
	}})
	p.SetAddress(7, addr)
	for range 2 { // one connection: reported once
		if _, err := sendSync(t, p, 7, voteRequest(0)); err != nil {
			t.Fatal(err)
		}
	}
	c := <-got
	if c.node != 7 || !slices.Equal(c.features, []string{features.KRaftVersionName}) {
		t.Fatalf("OnConnect(%d, %q), want (7, [%s])", c.node, c.features, features.KRaftVersionName)
	}
	if len(got) != 0 {
		t.Fatalf("OnConnect called again without a new connection: %+v", <-got)
	}
}

// Connect opens a connection without a request: OnConnect learns the peer's features,
// the peer's handler sees nothing, and a second Connect on the open connection does not
// dial again.
func TestPeersConnectWithoutRequest(t *testing.T) {
	handled := make(chan int16, 4)
	h := HandlerFunc(func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		handled <- req.Key()
		resp := req.ResponseKind()
		resp.SetVersion(hdr.APIVersion)
		respond(resp)
	})
	_, addr := startServer(t, ServerConfig{}, h)
	got := make(chan []string, 4)
	p := newTestPeers(t, PeerConfig{OnConnect: func(node int32, features []string) { got <- features }})
	p.Connect(7) // unknown node: nothing happens
	p.SetAddress(7, addr)
	p.Connect(7)
	select {
	case f := <-got:
		if !slices.Equal(f, []string{features.KRaftVersionName}) {
			t.Fatalf("OnConnect features %q", f)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Connect did not connect within 5s")
	}
	p.Connect(7)
	if _, err := sendSync(t, p, 7, voteRequest(0)); err != nil { // on the same connection
		t.Fatal(err)
	}
	if k := <-handled; k != kmsg.Vote.Int16() {
		t.Fatalf("the peer handled api %d before the Vote", k)
	}
	if len(got) != 0 || len(handled) != 0 {
		t.Fatalf("a second connection (%d) or request (%d)", len(got), len(handled))
	}
}
