package network

import (
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
)

// The server counts each listener's connections and bytes, and tells
// OnRequest of every answer, the ones it gives itself included, with its
// error code as the api's registration reads it.
func TestListenerStatsAndRequestHook(t *testing.T) {
	var (
		mu   sync.Mutex
		done []RequestDone
	)
	cfg := ServerConfig{OnRequest: func(d RequestDone) {
		mu.Lock()
		done = append(done, d)
		mu.Unlock()
	}}
	s, addr := startServer(t, cfg, HandlerFunc(func(_ *ConnInfo, _ protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		resp := voteResponseFor(req.(*kmsg.VoteRequest))
		resp.Topics[0].Partitions[0].ErrorCode = kerr.FencedLeaderEpoch.Code
		respond(resp)
	}))
	c := dialRaw(t, addr)
	c.apiVersionsRoundTrip(1)
	c.send(2, voteRequest(1))
	c.recv(2, int16(kmsg.Vote), voteRequest(1).Version)

	st := s.Stats()
	if len(st) != 1 || st[0].Listener != "CONTROLLER" || st[0].Open != 1 || st[0].Accepted != 1 || st[0].BytesIn <= 0 || st[0].BytesOut <= 0 {
		t.Fatalf("stats %+v", st)
	}
	mu.Lock()
	if len(done) != 2 || done[0].APIKey != int16(kmsg.ApiVersions) || done[1].APIKey != int16(kmsg.Vote) ||
		done[1].Listener != "CONTROLLER" || done[1].Response == nil || done[1].Took < 0 ||
		done[0].ErrorCode != 0 || done[1].ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Errorf("requests seen %+v", done)
	}
	mu.Unlock()
	c.nc.Close()
	deadline := time.Now().Add(testTimeout)
	for s.Stats()[0].Open != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("closed connection still open: %+v", s.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Peers.States reports each destination and whether its connection is up.
func TestPeerStates(t *testing.T) {
	_, addr := startServer(t, ServerConfig{}, HandlerFunc(func(_ *ConnInfo, _ protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		respond(voteResponseFor(req.(*kmsg.VoteRequest)))
	}))
	p := NewPeers(PeerConfig{Apis: testApis, ClientID: "test"})
	defer p.Close()
	p.SetAddress(2, addr)
	p.SetAddress(-2, "127.0.0.1:1") // never dialed
	if st := p.States(); len(st) != 2 || st[0] != (PeerState{ID: -2}) || st[1] != (PeerState{ID: 2}) {
		t.Fatalf("before any request: %+v", st)
	}
	answered := make(chan error, 1)
	p.Send(2, voteRequest(1), func(_ kmsg.Response, err error) { answered <- err })
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	if st := p.States(); st[1] != (PeerState{ID: 2, Connected: true}) || st[0].Connected {
		t.Fatalf("after a request to 2: %+v", st)
	}
}
