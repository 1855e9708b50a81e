package network

import (
	"testing"

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
		if got := votePartition(c.recv(i, protocol.KeyVote, 1)); got != i {
			t.Fatalf("vote %d: %d", i, got)
		}
		if n := <-out; n == 0 {
			t.Fatalf("answer %d: nothing written when respond returned", i)
		}
	}
}
