package network

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
)

// A client pipelines Vote requests (interleaved with ApiVersions, which the server answers
// itself) on one connection; the handler answers each from another goroutine after a
// random delay. Responses must come back in request order, and the handler must never
// hold two requests of the connection at once.
func TestPipelinedRequestsAnsweredInOrder(t *testing.T) {
	var active, maxActive atomic.Int32
	h := HandlerFunc(func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		n := active.Add(1)
		for {
			m := maxActive.Load()
			if n <= m || maxActive.CompareAndSwap(m, n) {
				break
			}
		}
		resp := voteResponseFor(req.(*kmsg.VoteRequest))
		delay := time.Duration(rand.IntN(2000)) * time.Microsecond
		go func() {
			time.Sleep(delay) // the scenario: answers come late and out of order
			active.Add(-1)
			respond(resp)
		}()
	})
	_, addr := startServer(t, ServerConfig{}, h)
	c := dialRaw(t, addr)

	const n = 60
	var out []byte
	id := "test"
	for i := range int32(n) {
		if i%3 == 0 {
			req := kmsg.NewPtrApiVersionsRequest()
			req.Version = 4
			req.ClientSoftwareName, req.ClientSoftwareVersion = "test", "1"
			out = protocol.AppendRequest(out, i, &id, req)
			continue
		}
		out = protocol.AppendRequest(out, i, &id, voteRequest(i))
	}
	c.write(out) // all requests in one write: the server sees them pipelined
	for i := range int32(n) {
		if i%3 == 0 {
			resp := c.recv(i, int16(kmsg.ApiVersions), 4).(*kmsg.ApiVersionsResponse)
			if resp.ErrorCode != 0 {
				t.Fatalf("ApiVersions %d: error %d", i, resp.ErrorCode)
			}
			continue
		}
		if got := votePartition(c.recv(i, int16(kmsg.Vote), 1)); got != i {
			t.Fatalf("response %d carries partition %d", i, got)
		}
	}
	if m := maxActive.Load(); m != 1 {
		t.Fatalf("handler held %d requests of one connection at once, want 1", m)
	}
}

// A real Kafka client library (franz-go kgo) gets a correct ApiVersions answer. kgo
// first sends ApiVersions at the newest version it knows; kraftd answers
// UNSUPPORTED_VERSION with its range and kgo retries, as against a JVM controller.
func TestKgoApiVersions(t *testing.T) {
	_, addr := startServer(t, ServerConfig{}, echoHandler)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("ApiVersions through kgo: %v", err)
	}
	if resp.ErrorCode != 0 {
		t.Fatalf("error code %d", resp.ErrorCode)
	}
	if resp.Version != 5 {
		t.Errorf("kgo settled on ApiVersions v%d, want v5 (Kafka 4.4.0's max)", resp.Version)
	}
	if got := apiTable(resp.ApiKeys); got != kafka440RaftApis {
		t.Fatalf("the client sees the apis\n%s\nwant Kafka 4.4.0's raft and network apis\n%s", got, kafka440RaftApis)
	}
	if len(resp.SupportedFeatures) != 1 || resp.SupportedFeatures[0].Name != "kraft.version" {
		t.Errorf("features %+v, want kraft.version", resp.SupportedFeatures)
	}
}

// kafka440RaftApis are the apis a Kafka 4.4.0 controller lists in ApiVersions for its
// network layer and its raft client, with its ranges, as a client reads them: key name
// min-max, ascending by key. The test server serves exactly these (network's own and
// raft's registrations); node's TestAdvertisementIsKafka440Controller checks a node's whole
// list, and the interop tests compare it with a live 4.4.0 controller's.
const kafka440RaftApis = `1 Fetch 4-18
17 SASLHandshake 0-1
18 ApiVersions 0-5
36 SASLAuthenticate 0-2
52 Vote 0-2
53 BeginQuorumEpoch 0-1
54 EndQuorumEpoch 0-1
55 DescribeQuorum 0-2
57 UpdateFeatures 0-2
59 FetchSnapshot 0-1
80 AddRaftVoter 0-1
81 RemoveRaftVoter 0-0
82 UpdateRaftVoter 0-0`

// apiTable prints an ApiVersions list as kafka440RaftApis does.
func apiTable(keys []kmsg.ApiVersionsResponseApiKey) string {
	lines := make([]string, len(keys))
	for i, k := range keys {
		lines[i] = fmt.Sprintf("%d %s %d-%d", k.ApiKey, kmsg.NameForKey(k.ApiKey), k.MinVersion, k.MaxVersion)
	}
	return strings.Join(lines, "\n")
}

// An ApiVersions version above kraftd's gets UNSUPPORTED_VERSION in the v0 body layout
// (header v0) listing ApiVersions' range, and the connection stays usable.
func TestApiVersionsUnsupportedVersion(t *testing.T) {
	_, addr := startServer(t, ServerConfig{}, echoHandler)
	c := dialRaw(t, addr)
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 6 // one above kraftd's max; flexible: header v2
	req.ClientSoftwareName, req.ClientSoftwareVersion = "test", "1"
	c.send(7, req)
	frame, err := protocol.ReadFrame(c.br, protocol.DefaultMaxFrameSize, nil)
	if err != nil {
		t.Fatal(err)
	}
	// correlation id, then the v0 body: error code, int32 array length 1, {18, 0, 5}.
	want := []byte{0, 0, 0, 7, 0, 35, 0, 0, 0, 1, 0, 18, 0, 0, 0, 5}
	if string(frame) != string(want) {
		t.Fatalf("frame % x, want % x", frame, want)
	}
	c.apiVersionsRoundTrip(8)

	// A version no one knows yet, with a body kraftd cannot parse: only the header (v2)
	// is read, the answer is the same.
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = append(b, 0, 18, 0, 99, 0, 0, 0, 9, 0xff, 0xff, 0) // key, version, corr, null client id, no tags
	b = append(b, 0xde, 0xad, 0xbe, 0xef)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	c.write(b)
	frame, err = protocol.ReadFrame(c.br, protocol.DefaultMaxFrameSize, nil)
	if err != nil {
		t.Fatal(err)
	}
	want[3] = 9
	if string(frame) != string(want) {
		t.Fatalf("v99: frame % x, want % x", frame, want)
	}
	c.apiVersionsRoundTrip(10)
}

// ApiVersions v3+ with an invalid client software name is answered INVALID_REQUEST.
func TestApiVersionsInvalidSoftwareName(t *testing.T) {
	_, addr := startServer(t, ServerConfig{}, echoHandler)
	c := dialRaw(t, addr)
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "-bad name", "1"
	c.send(1, req)
	resp := c.recv(1, int16(kmsg.ApiVersions), 3).(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != kerr.InvalidRequest.Code || len(resp.ApiKeys) != 0 {
		t.Fatalf("error %d with %d keys, want INVALID_REQUEST and none", resp.ErrorCode, len(resp.ApiKeys))
	}
	c.apiVersionsRoundTrip(2)
}

func TestValidSoftwareString(t *testing.T) {
	for s, want := range map[string]bool{
		"apache-kafka-java": true, "4.0.0": true, "a": true, "a.b-c": true,
		"": false, "-a": false, "a-": false, "a b": false, "a_b": false, ".": false,
	} {
		if got := validSoftwareString(s); got != want {
			t.Errorf("validSoftwareString(%q) = %v, want %v", s, got, want)
		}
	}
}

// Misbehaving clients are cut off, each with a logged reason, while a well-behaved client
// on the same server keeps being served.
func TestBadClientsAreCutOff(t *testing.T) {
	const partial = 300 * time.Millisecond
	log, logs := observedLogger()
	_, addr := startServer(t, ServerConfig{MaxFrameSize: 1 << 10, PartialFrameTimeout: partial, Logger: log}, echoHandler)

	good := dialRaw(t, addr)
	stopGood := make(chan struct{})
	goodDone := make(chan error, 1)
	go func() {
		// The well-behaved client: a Vote round trip every few milliseconds throughout.
		id := "good"
		for i := int32(0); ; i++ {
			select {
			case <-stopGood:
				goodDone <- nil
				return
			default:
			}
			if _, err := good.nc.Write(protocol.AppendRequest(nil, i, &id, voteRequest(i))); err != nil {
				goodDone <- err
				return
			}
			frame, err := protocol.ReadFrame(good.br, 1<<20, nil)
			if err != nil {
				goodDone <- err
				return
			}
			resp, err := protocol.ParseResponse(frame, int16(kmsg.Vote), 1)
			if err != nil {
				goodDone <- err
				return
			}
			if got := votePartition(resp); got != i {
				goodDone <- errors.New("good client got a wrong response")
				return
			}
			time.Sleep(2 * time.Millisecond) // the good client's pace
		}
	}()

	be32 := func(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
	id := "x"
	voteFrame := protocol.AppendRequest(nil, 1, &id, voteRequest(1))
	cases := []struct {
		name   string
		send   func(c *rawClient)
		reason string
		within time.Duration
	}{
		{"half frame", func(c *rawClient) { c.write(voteFrame[:len(voteFrame)/2]) }, "partial frame", partial + 2*time.Second},
		{"half size prefix", func(c *rawClient) { c.write([]byte{0, 0}) }, "partial frame", partial + 2*time.Second},
		{"trickle", func(c *rawClient) {
			// Keeps sending, one byte every 50 ms: the frame deadline still applies.
			for _, b := range voteFrame[:len(voteFrame)-1] {
				if _, err := c.nc.Write([]byte{b}); err != nil {
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}, "partial frame", partial + 3*time.Second},
		{"oversized", func(c *rawClient) { c.write(be32(1<<10 + 1)) }, "frame too large", 2 * time.Second},
		{"negative size", func(c *rawClient) { c.write(be32(-5)) }, "negative frame size", 2 * time.Second},
		{"http", func(c *rawClient) { c.write([]byte("GET / HTTP/1.1\r\n\r\n")) }, "HTTP", 2 * time.Second},
		{"garbage header", func(c *rawClient) { c.write(append(be32(3), 1, 2, 3)) }, "bad request", 2 * time.Second},
		{"unsupported api", func(c *rawClient) {
			c.send(1, kmsg.NewPtrMetadataRequest())
		}, "unsupported api", 2 * time.Second},
		{"unsupported version", func(c *rawClient) {
			r := voteRequest(1)
			r.Version = 0
			b := protocol.AppendRequest(nil, 1, &id, r)
			binary.BigEndian.PutUint16(b[6:], 9) // Vote v9
			c.write(b)
		}, "unsupported api version", 2 * time.Second},
		{"undecodable body", func(c *rawClient) {
			b := protocol.AppendRequest(nil, 1, &id, voteRequest(1))
			b = b[:len(b)-3]
			binary.BigEndian.PutUint32(b, uint32(len(b)-4))
			c.write(b)
		}, "decode", 2 * time.Second},
	}
	var wg sync.WaitGroup
	for _, tc := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dialRaw(t, addr)
			c.apiVersionsRoundTrip(0)
			tc.send(c)
			c.expectClosed(tc.within)
		}()
	}
	wg.Wait()
	for _, tc := range cases {
		waitLog(t, logs, tc.reason)
	}
	close(stopGood)
	if err := <-goodDone; err != nil {
		t.Fatalf("well-behaved client: %v", err)
	}
}

// A client that pipelines Fetch requests and never reads is not served ahead of its
// reading: the server holds one response of it at a time (Kafka keeps a connection muted
// until its response is sent), and cuts it off after WriteTimeout once the socket buffers
// are full.
func TestNonReadingClientIsCutOff(t *testing.T) {
	const (
		requests    = 3000
		recordBytes = 64 << 10
	)
	var handled atomic.Int64
	h := HandlerFunc(func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		handled.Add(1)
		respond(fetchResponse(hdr.APIVersion, make([]byte, recordBytes))) // a leader reads records afresh
	})
	log, logs := observedLogger()
	_, addr := startServer(t, ServerConfig{WriteTimeout: 2 * time.Second, Logger: log}, h)
	c := dialRaw(t, addr)
	id := "x"
	var batch []byte
	for i := range int32(requests) {
		batch = protocol.AppendRequest(batch, i, &id, fetchRequest())
	}
	before := liveHeap()
	c.write(batch)
	// The server cuts the client off once its writes stall for WriteTimeout. By then a
	// server that reads ahead of the client's reading would have handled every request:
	// one that holds one response at a time handled only what the socket buffers took.
	waitLog(t, logs, "write:")
	c.expectClosed(testTimeout)
	n := handled.Load()
	grown := int64(liveHeap()) - int64(before)
	t.Logf("%d pipelined Fetch requests of %d bytes each, answers of %d KiB unread: %d handled before the cut-off, live heap grew %.1f MiB",
		requests, len(batch)/requests, recordBytes>>10, n, float64(grown)/(1<<20))
	if n >= requests/2 {
		t.Errorf("%d of %d requests of a client that reads nothing were handled: the server answers ahead of its reading", n, requests)
	}
	if grown > 32<<20 {
		t.Errorf("live heap grew by %d MiB for one non-reading client", grown>>20)
	}
}

// liveHeap returns the bytes of live heap objects after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// fetchRequest is a follower's Fetch v17 of the metadata partition.
func fetchRequest() *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 17
	req.ReplicaState.ID = 2
	req.MaxWaitMillis = 500
	topic := kmsg.NewFetchRequestTopic()
	topic.TopicID = [16]byte{15: 1}
	p := kmsg.NewFetchRequestTopicPartition()
	p.FetchOffset = 10
	topic.Partitions = append(topic.Partitions, p)
	req.Topics = append(req.Topics, topic)
	return req
}

// A frame above the request limit is refused from its size prefix: none of its body is
// read or allocated, whatever socket.request.max.bytes allows.
func TestOversizedFrameRefusedFromItsPrefix(t *testing.T) {
	log, logs := observedLogger()
	_, addr := startServer(t, ServerConfig{Logger: log}, echoHandler)
	c := dialRaw(t, addr)
	const size = protocol.DefaultMaxFrameSize - 1 // allowed by socket.request.max.bytes
	chunk := make([]byte, 1<<20)
	before := totalAlloc()
	c.nc.SetWriteDeadline(time.Now().Add(testTimeout))
	sent := 0
	if _, err := c.nc.Write(binary.BigEndian.AppendUint32(nil, uint32(size))); err == nil {
		for sent < int(size) {
			n, err := c.nc.Write(chunk[:min(len(chunk), int(size)-sent)])
			sent += n
			if err != nil {
				break
			}
		}
	}
	c.expectClosed(testTimeout)
	allocated := totalAlloc() - before
	t.Logf("frame announcing %d MiB: client sent %.1f MiB before the close, the process allocated %.1f MiB",
		size>>20, float64(sent)/(1<<20), float64(allocated)/(1<<20))
	waitLog(t, logs, "frame too large")
	if allocated > 8<<20 {
		t.Errorf("refusing a %d MiB frame allocated %d MiB", size>>20, allocated>>20)
	}
}

func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// At MaxConnections the server accepts nothing more (as Kafka's acceptor, it waits for a
// slot rather than refusing); a waiting connection is served once another closes.
func TestMaxConnections(t *testing.T) {
	log, logs := observedLogger()
	_, addr := startServer(t, ServerConfig{MaxConnections: 2, Logger: log}, echoHandler)
	a := dialRaw(t, addr)
	b := dialRaw(t, addr)
	a.apiVersionsRoundTrip(1)
	b.apiVersionsRoundTrip(1)
	extra := dialRaw(t, addr)
	req := kmsg.NewPtrApiVersionsRequest()
	extra.send(7, req)
	waitLog(t, logs, "too many connections")
	extra.nc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := extra.br.Peek(1); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("connection over the limit was served or closed: %v", err)
	}
	a.apiVersionsRoundTrip(2) // the others are unaffected

	// Once a slot frees up, the waiting connection is served.
	b.nc.Close()
	extra.nc.SetReadDeadline(time.Now().Add(testTimeout))
	extra.recv(7, int16(kmsg.ApiVersions), 0)
}

// An idle connection is closed after IdleTimeout; a connection whose request is being
// served for longer than that is not idle.
func TestIdleTimeout(t *testing.T) {
	const idle = 200 * time.Millisecond
	release := make(chan struct{})
	h := HandlerFunc(func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		resp := voteResponseFor(req.(*kmsg.VoteRequest))
		go func() {
			<-release
			respond(resp)
		}()
	})
	log, logs := observedLogger()
	_, addr := startServer(t, ServerConfig{IdleTimeout: idle, Logger: log}, h)

	idleConn := dialRaw(t, addr)
	idleConn.apiVersionsRoundTrip(1)
	busy := dialRaw(t, addr)
	busy.send(5, voteRequest(5))

	took := idleConn.expectClosed(testTimeout)
	if took < idle/2 {
		t.Fatalf("idle connection closed after %v, before the idle timeout %v", took, idle)
	}
	waitLog(t, logs, "idle for")
	// The scenario: the busy connection's request stays parked well past the idle
	// timeout (a wrong idle check would close it in this time).
	time.Sleep(2 * idle)
	close(release)
	if got := votePartition(busy.recv(5, int16(kmsg.Vote), 1)); got != 5 {
		t.Fatalf("parked response carries %d", got)
	}
}

// Shutdown refuses new connections, lets a request being served finish and its response
// be written, then closes; with an expired context it cuts connections and says so.
func TestGracefulShutdown(t *testing.T) {
	release := make(chan struct{})
	handed := make(chan struct{}, 1)
	h := HandlerFunc(func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		resp := voteResponseFor(req.(*kmsg.VoteRequest))
		handed <- struct{}{}
		go func() {
			<-release
			respond(resp)
		}()
	})
	s, err := NewServer(ServerConfig{Apis: testApis, Listeners: []ListenerConfig{{Name: "C", Addr: "127.0.0.1:0"}}}, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	addr := s.Addrs()["C"].String()
	idle := dialRaw(t, addr)
	idle.apiVersionsRoundTrip(1)
	busy := dialRaw(t, addr)
	busy.send(3, voteRequest(3))
	<-handed

	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		done <- s.Shutdown(ctx)
	}()
	idle.expectClosed(testTimeout)
	// No new connections once shutting down.
	deadline := time.Now().Add(testTimeout)
	for {
		nc, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		nc.Close()
		if time.Now().After(deadline) {
			t.Fatal("still accepting during shutdown")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A window for a Shutdown that does not wait for the request in flight to return
	// early (a slow machine can only hide that, never fail a correct one).
	select {
	case err := <-done:
		t.Fatalf("shutdown returned (%v) with a request in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if got := votePartition(busy.recv(3, int16(kmsg.Vote), 1)); got != 3 {
		t.Fatalf("in-flight response carries %d", got)
	}
	busy.expectClosed(testTimeout)
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := s.Start(); !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Start after Shutdown: %v", err)
	}
}

func TestShutdownDeadline(t *testing.T) {
	handed := make(chan struct{})
	h := HandlerFunc(func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		close(handed) // and never responds
	})
	s, err := NewServer(ServerConfig{Apis: testApis, Listeners: []ListenerConfig{{Name: "C", Addr: "127.0.0.1:0"}}}, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	c := dialRaw(t, s.Addrs()["C"].String())
	c.apiVersionsRoundTrip(0)
	c.send(1, voteRequest(1))
	<-handed
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("shutdown: %v, want deadline exceeded", err)
	}
	c.expectClosed(testTimeout)
}

// A handler panic closes that connection only.
func TestHandlerPanicClosesOnlyThatConnection(t *testing.T) {
	h := HandlerFunc(func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		v := req.(*kmsg.VoteRequest)
		if v.Topics[0].Partitions[0].Partition == 666 {
			panic("boom")
		}
		respond(voteResponseFor(v))
	})
	log, logs := observedLogger()
	_, addr := startServer(t, ServerConfig{Logger: log}, h)
	other := dialRaw(t, addr)
	bad := dialRaw(t, addr)
	bad.send(1, voteRequest(666))
	bad.expectClosed(testTimeout)
	waitLog(t, logs, "handler panic")
	other.send(2, voteRequest(2))
	if got := votePartition(other.recv(2, int16(kmsg.Vote), 1)); got != 2 {
		t.Fatalf("got %d", got)
	}
}

// respond(nil) closes the connection after the responses queued before it; respond
// twice is ignored; a response of the wrong api closes the connection.
func TestRespondEdgeCases(t *testing.T) {
	h := HandlerFunc(func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		v := req.(*kmsg.VoteRequest)
		switch v.Topics[0].Partitions[0].Partition {
		case 1:
			respond(voteResponseFor(v))
			respond(voteResponseFor(v)) // ignored
		case 2:
			respond(nil)
		case 3:
			respond(kmsg.NewPtrFetchResponse())
		}
	})
	log, logs := observedLogger()
	_, addr := startServer(t, ServerConfig{Logger: log}, h)
	c := dialRaw(t, addr)
	c.send(1, voteRequest(1))
	c.send(2, voteRequest(2))
	if got := votePartition(c.recv(1, int16(kmsg.Vote), 1)); got != 1 {
		t.Fatalf("got %d", got)
	}
	c.expectClosed(testTimeout) // no second response to 1, and 2 closes
	waitLog(t, logs, "respond called twice")
	waitLog(t, logs, "handler closed the connection")

	c = dialRaw(t, addr)
	c.send(3, voteRequest(3))
	c.expectClosed(testTimeout)
	waitLog(t, logs, "wrong api")
}

// Tagged fields the response's version does not define are not written.
func TestResponseTaggedFieldsClearedForVersion(t *testing.T) {
	h := HandlerFunc(func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		resp := voteResponseFor(req.(*kmsg.VoteRequest))
		ep := kmsg.NewVoteResponseNodeEndpoint()
		ep.NodeID, ep.Host, ep.Port = 1, "h", 9
		resp.NodeEndpoints = append(resp.NodeEndpoints, ep)
		respond(resp)
	})
	_, addr := startServer(t, ServerConfig{}, h)
	c := dialRaw(t, addr)
	for _, v := range []int16{0, 1} {
		req := voteRequest(int32(v))
		req.Version = v
		c.send(int32(v), req)
		resp := c.recv(int32(v), int16(kmsg.Vote), v).(*kmsg.VoteResponse)
		if v == 0 && (len(resp.NodeEndpoints) != 0 || resp.UnknownTags.Len() != 0) {
			t.Fatalf("v0 response carries NodeEndpoints (tag of v1+)")
		}
		if v == 1 && len(resp.NodeEndpoints) != 1 {
			t.Fatalf("v1 response lost NodeEndpoints")
		}
	}
}

func TestServerConfigValidation(t *testing.T) {
	for name, cfg := range map[string]ServerConfig{
		"no listeners":   {Apis: testApis},
		"unnamed":        {Apis: testApis, Listeners: []ListenerConfig{{Addr: "127.0.0.1:0"}}},
		"duplicate name": {Apis: testApis, Listeners: []ListenerConfig{{Name: "A", Addr: "127.0.0.1:0"}, {Name: "A", Addr: "127.0.0.1:0"}}},
		"negative frame": {Apis: testApis, Listeners: []ListenerConfig{{Name: "A", Addr: "127.0.0.1:0"}}, MaxFrameSize: -1},
		"no api table":   {Listeners: []ListenerConfig{{Name: "A", Addr: "127.0.0.1:0"}}},
	} {
		if _, err := NewServer(cfg, echoHandler); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// Two listeners, one of them unbindable: none stays bound.
	s, err := NewServer(ServerConfig{Apis: testApis, Listeners: []ListenerConfig{{Name: "A", Addr: "127.0.0.1:0"}, {Name: "B", Addr: "256.0.0.1:0"}}}, echoHandler)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err == nil {
		t.Fatal("Start with an unbindable listener succeeded")
	}
}

func TestMultipleListeners(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	h := HandlerFunc(func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		mu.Lock()
		seen[c.Listener] = true
		mu.Unlock()
		respond(voteResponseFor(req.(*kmsg.VoteRequest)))
	})
	s, _ := startServer(t, ServerConfig{Listeners: []ListenerConfig{{Name: "CONTROLLER", Addr: "127.0.0.1:0"}, {Name: "OTHER", Addr: "127.0.0.1:0"}}}, h)
	addrs := s.Addrs()
	for _, name := range []string{"CONTROLLER", "OTHER"} {
		c := dialRaw(t, addrs[name].String())
		c.send(1, voteRequest(1))
		c.recv(1, int16(kmsg.Vote), 1)
	}
	mu.Lock()
	defer mu.Unlock()
	if !seen["CONTROLLER"] || !seen["OTHER"] {
		t.Fatalf("listeners seen by the handler: %v", seen)
	}
}

// Mutated and random frames from many clients never crash a connection goroutine (no
// recovered panic is logged), every connection ends or is answered, and the server keeps
// serving.
func TestRandomFramesNeverPanic(t *testing.T) {
	h := HandlerFunc(func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		respond(req.ResponseKind())
	})
	log, logs := observedLogger()
	_, addr := startServer(t, ServerConfig{MaxFrameSize: 1 << 16, PartialFrameTimeout: 200 * time.Millisecond, Logger: log}, h)

	// Valid frames of every served api and version, to mutate.
	var valid [][]byte
	id := "fuzz"
	for _, key := range testApis.Keys() {
		rng, _ := testApis.Versions(key)
		for v := rng.Min; v <= rng.Max; v++ {
			req := kmsg.RequestForKey(key)
			req.SetVersion(v)
			valid = append(valid, protocol.AppendRequest(nil, int32(v), &id, req))
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := 0; i < 300; i++ {
		frame := slices.Clone(valid[rnd.IntN(len(valid))])
		switch rnd.IntN(4) {
		case 0: // flip bytes after the size prefix
			for range 1 + rnd.IntN(4) {
				frame[4+rnd.IntN(len(frame)-4)] = byte(rnd.Uint32())
			}
		case 1: // truncate the body, size kept consistent
			frame = frame[:4+rnd.IntN(len(frame)-4)]
			binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
		case 2: // append junk, size kept consistent
			for range 1 + rnd.IntN(64) {
				frame = append(frame, byte(rnd.Uint32()))
			}
			binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
		case 3: // random bytes, random size prefix
			frame = make([]byte, 4+rnd.IntN(64))
			for j := range frame {
				frame[j] = byte(rnd.Uint32())
			}
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			nc, err := net.DialTimeout("tcp", addr, testTimeout)
			if err != nil {
				t.Error(err)
				return
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(testTimeout))
			nc.Write(frame)
			nc.(*net.TCPConn).CloseWrite()
			buf := make([]byte, 4096)
			for {
				if _, err := nc.Read(buf); err != nil {
					if !errors.Is(err, io.EOF) && !isReset(err) {
						t.Errorf("connection not ended by the server: %v", err)
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, e := range logs.All() {
		if strings.Contains(e.Message, "panic") {
			t.Fatalf("%s: %s", e.Message, contextString(e.Context))
		}
	}
	c := dialRaw(t, addr)
	c.apiVersionsRoundTrip(1)
}

// A server advertises and decodes exactly the apis of its table: with only its own
// (ApiVersions and the SASL apis), ApiVersions lists those three, a SASL api off a SASL
// listener is answered ILLEGAL_SASL_STATE by the server, and a Vote request, which the
// table lacks, closes the connection without reaching the handler.
func TestServerServesItsTable(t *testing.T) {
	reached := make(chan struct{}, 1)
	_, addr := startServer(t, ServerConfig{Apis: protocol.MustTable(Apis())}, HandlerFunc(
		func(_ *ConnInfo, _ protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
			reached <- struct{}{}
			respond(req.ResponseKind())
		}))
	c := dialRaw(t, addr)
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "test", "1.0"
	c.send(1, av)
	keys := c.recv(1, int16(kmsg.ApiVersions), 3).(*kmsg.ApiVersionsResponse).ApiKeys
	var got []int16
	for _, k := range keys {
		got = append(got, k.ApiKey)
	}
	if want := []int16{int16(kmsg.SASLHandshake), int16(kmsg.ApiVersions), int16(kmsg.SASLAuthenticate)}; !slices.Equal(got, want) {
		t.Fatalf("ApiVersions lists %v, want %v", got, want)
	}
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version = 1
	c.send(2, hs)
	if r := c.recv(2, int16(kmsg.SASLHandshake), 1).(*kmsg.SASLHandshakeResponse); r.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("SaslHandshake answered %d", r.ErrorCode)
	}
	c.send(3, voteRequest(1))
	c.expectClosed(testTimeout)
	select {
	case <-reached:
		t.Fatal("the handler got a request of an api outside the table")
	default:
	}
}
