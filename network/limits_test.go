package network

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
)

// parkingHandler holds every Vote request until release is closed and reports each
// arrival on arrived.
func parkingHandler(arrived chan<- int32, release <-chan struct{}) Handler {
	return HandlerFunc(func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		v := req.(*kmsg.VoteRequest)
		arrived <- votePartition(voteResponseFor(v))
		go func() {
			<-release
			respond(voteResponseFor(v))
		}()
	})
}

// expectNoArrival asserts that no request reaches the handler for a while.
func expectNoArrival(t *testing.T, arrived <-chan int32) {
	t.Helper()
	select {
	case i := <-arrived:
		t.Fatalf("request %d was read beyond the queued request bound", i)
	case <-time.After(300 * time.Millisecond):
	}
}

// At queued.max.requests requests being served, connections stop reading until one is
// answered.
func TestQueuedMaxRequests(t *testing.T) {
	arrived := make(chan int32, 3)
	release := make(chan struct{})
	_, addr := startServer(t, ServerConfig{QueuedMaxRequests: 2}, parkingHandler(arrived, release))
	conns := make([]*rawClient, 3)
	for i := range conns {
		conns[i] = dialRaw(t, addr)
		conns[i].send(int32(i), voteRequest(int32(i)))
		if i < 2 {
			<-arrived
		}
	}
	expectNoArrival(t, arrived)
	close(release)
	if got := <-arrived; got != 2 {
		t.Fatalf("arrived %d, want 2", got)
	}
	for i, c := range conns {
		if got := votePartition(c.recv(int32(i), int16(kmsg.Vote), 1)); got != int32(i) {
			t.Fatalf("response %d carries %d", i, got)
		}
	}
}

// A request its handler took (ConnInfo.Taken) no longer counts against
// queued.max.requests while it waits for its answer: with the bound at 1 and that request
// parked, another connection's request is read and answered, and the parked one is still
// answered later.
func TestTakenRequestLeavesTheQueue(t *testing.T) {
	arrived := make(chan int32, 2)
	release := make(chan struct{})
	h := HandlerFunc(func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		v := req.(*kmsg.VoteRequest)
		resp := voteResponseFor(v)
		if votePartition(resp) == 0 {
			c.Taken()
			c.Taken() // a second call does nothing
			go func() {
				<-release
				respond(resp)
			}()
		} else {
			respond(resp)
		}
		arrived <- votePartition(resp)
	})
	s, addr := startServer(t, ServerConfig{QueuedMaxRequests: 1}, h)
	a, b := dialRaw(t, addr), dialRaw(t, addr)
	a.send(0, voteRequest(0))
	<-arrived
	b.send(1, voteRequest(1))
	select {
	case got := <-arrived:
		if got != 1 {
			t.Fatalf("arrived %d, want 1", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a taken request still held the only queued request share")
	}
	if got := votePartition(b.recv(1, int16(kmsg.Vote), 1)); got != 1 {
		t.Fatalf("response carries %d, want 1", got)
	}
	close(release)
	if got := votePartition(a.recv(0, int16(kmsg.Vote), 1)); got != 0 {
		t.Fatalf("response carries %d, want 0", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for n, _ := s.admit.held(); n != 0; n, _ = s.admit.held() {
		if time.Now().After(deadline) {
			t.Fatalf("%d admission shares held after every response", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// At queued.max.request.bytes of request frames being read or served, connections stop
// reading until one is answered; a frame is admitted while the total is below the bound
// (Kafka's non-strict memory pool).
func TestQueuedMaxRequestBytes(t *testing.T) {
	arrived := make(chan int32, 3)
	release := make(chan struct{})
	s, addr := startServer(t, ServerConfig{QueuedMaxRequestBytes: 1}, parkingHandler(arrived, release))
	a, b := dialRaw(t, addr), dialRaw(t, addr)
	a.send(1, voteRequest(1))
	<-arrived
	b.send(2, voteRequest(2))
	expectNoArrival(t, arrived)
	if n, bytes := s.admit.held(); n != 1 || bytes <= 1 {
		t.Fatalf("admitted %d requests of %d bytes, want the first one only", n, bytes)
	}
	close(release)
	<-arrived
	b.recv(2, int16(kmsg.Vote), 1)
	a.recv(1, int16(kmsg.Vote), 1)
}

// A connection over max.connections.per.ip (or its override) is closed at once.
func TestMaxConnectionsPerIP(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     ServerConfig
		allowed int
	}{
		{"default", ServerConfig{MaxConnectionsPerIP: 1}, 1},
		{"override", ServerConfig{MaxConnectionsPerIP: 1, MaxConnectionsPerIPOverrides: map[string]int{"127.0.0.1": 3}}, 3},
		{"none but override", ServerConfig{MaxConnectionsPerIP: NoConnections, MaxConnectionsPerIPOverrides: map[string]int{"localhost": 2}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, logs := observedLogger()
			tc.cfg.Logger = log
			_, addr := startServer(t, tc.cfg, echoHandler)
			for i := range tc.allowed {
				dialRaw(t, addr).apiVersionsRoundTrip(int32(i))
			}
			dialRaw(t, addr).expectClosed(testTimeout)
			waitLog(t, logs, "too many connections from this address")
		})
	}
}

// max.connection.creation.rate makes the accept loop wait: connections beyond a second's
// worth are served no faster than the rate.
func TestConnectionCreationRate(t *testing.T) {
	const rate, conns = 10, 20
	_, addr := startServer(t, ServerConfig{MaxConnectionCreationRate: rate}, echoHandler)
	start := time.Now()
	for i := range conns {
		c := dialRaw(t, addr)
		c.apiVersionsRoundTrip(int32(i))
		c.nc.Close()
	}
	if took, want := time.Since(start), time.Duration(conns-rate-1)*time.Second/rate; took < want {
		t.Fatalf("%d connections served in %v at %d per second, want at least %v", conns, took, rate, want)
	}
}

// A connection that would eat into the file descriptor reserve is closed at once.
func TestFileDescriptorReserve(t *testing.T) {
	log, logs := observedLogger()
	s, addr := startServer(t, ServerConfig{FDReserve: 10, Logger: log}, echoHandler)
	first := dialRaw(t, addr)
	first.apiVersionsRoundTrip(0)
	// Pretend the process may open only the sockets it has open now plus the reserve.
	setFDLimit(s, openSockets.Load()+10)
	dialRaw(t, addr).expectClosed(testTimeout)
	waitLog(t, logs, "file descriptor reserve reached")
	first.apiVersionsRoundTrip(1)
	setFDLimit(s, openSockets.Load()+14) // room again
	dialRaw(t, addr).apiVersionsRoundTrip(0)
}

func setFDLimit(s *Server, n int64) {
	s.quotas.mu.Lock()
	defer s.quotas.mu.Unlock()
	s.quotas.fdLimit = n
}

// connections.max.idle.ms < 0 means never close an idle connection.
func TestNegativeIdleTimeoutNeverCloses(t *testing.T) {
	s, addr := startServer(t, ServerConfig{IdleTimeout: -1}, echoHandler)
	if s.cfg.IdleTimeout >= 0 {
		t.Fatalf("IdleTimeout -1 became %v", s.cfg.IdleTimeout)
	}
	c := dialRaw(t, addr)
	c.apiVersionsRoundTrip(0)
	c.nc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := c.br.Peek(1); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("idle connection: %v", err)
	}
	c.nc.SetReadDeadline(time.Now().Add(testTimeout))
	c.apiVersionsRoundTrip(1)
}

// Shutdown unblocks an accept loop waiting at max.connections.
func TestShutdownWhileAcceptWaits(t *testing.T) {
	log, logs := observedLogger()
	s, err := NewServer(ServerConfig{Apis: testApis, Listeners: []ListenerConfig{{Name: "C", Addr: "127.0.0.1:0"}}, MaxConnections: 1, Logger: log}, echoHandler)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	addr := s.Addrs()["C"].String()
	dialRaw(t, addr).apiVersionsRoundTrip(0)
	waiting := dialRaw(t, addr)
	waitLog(t, logs, "too many connections")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	waiting.expectClosed(testTimeout)
}
