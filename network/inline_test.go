package network

import (
	"bytes"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
)

// On a plaintext connection an answer given while the write side is idle is written by
// the responding goroutine itself: its bytes are out by the time respond returns.
func TestAnswerWrittenInlineByTheResponder(t *testing.T) {
	var s *Server
	out := make(chan int64, 8)
	h := HandlerFunc(func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		before := s.Stats()[0].BytesOut
		respond(voteResponseFor(req.(*kmsg.VoteRequest)))
		out <- s.Stats()[0].BytesOut - before
	})
	s, addr := startServer(t, ServerConfig{}, h)
	c := dialRaw(t, addr)
	for i := range int32(3) {
		c.send(i, voteRequest(i))
		if got := votePartition(c.recv(i, int16(kmsg.Vote), 1)); got != i {
			t.Fatalf("vote %d: %d", i, got)
		}
		if n := <-out; n == 0 {
			t.Fatalf("answer %d: nothing written when respond returned", i)
		}
	}
}

// A response the writer finished (too large for one non-blocking write) leaves no write
// deadline behind: answers after WriteTimeout are still written inline, and intact.
func TestInlineAfterWriterFinishedALargeAnswer(t *testing.T) {
	records := filled(8<<20, 5)
	var s *Server
	out := make(chan int64, 8)
	h := HandlerFunc(func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		before := s.Stats()[0].BytesOut
		switch r := req.(type) {
		case *kmsg.FetchRequest:
			respond(fetchResponse(r.Version, records))
		case *kmsg.VoteRequest:
			respond(voteResponseFor(r))
		}
		out <- s.Stats()[0].BytesOut - before
	})
	// The client must read the 8 MiB answer within WriteTimeout, which a loaded machine
	// running the race detector may take a second for.
	const writeTimeout = 2 * time.Second
	s, addr := startServer(t, ServerConfig{WriteTimeout: writeTimeout}, h)
	c := dialRaw(t, addr)
	f := kmsg.NewPtrFetchRequest()
	f.Version = 13
	c.send(0, f)
	resp := c.recv(0, int16(kmsg.Fetch), 13).(*kmsg.FetchResponse)
	if !bytes.Equal(resp.Topics[0].Partitions[0].RecordBatches, records) {
		t.Fatal("large fetch answer differs")
	}
	if n := <-out; n >= int64(len(records)) {
		t.Fatalf("%d bytes of an 8 MiB answer written at once: the writer's path was not exercised", n)
	}
	time.Sleep(writeTimeout + 100*time.Millisecond) // the scenario: the writer's WriteTimeout passes idle
	c.send(1, voteRequest(1))
	if got := votePartition(c.recv(1, int16(kmsg.Vote), 1)); got != 1 {
		t.Fatalf("vote: %d", got)
	}
	if n := <-out; n == 0 {
		t.Fatal("answer after the writer's deadline passed was not written inline")
	}
}
