package network

import (
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// RequestDone describes one request the server answered, for
// ServerConfig.OnRequest. Response is nil when the handler closed the
// connection instead of answering.
type RequestDone struct {
	Listener string
	APIKey   int16
	Response kmsg.Response
	// ErrorCode is the answer's error code as its api's registration reads it
	// (protocol.Api.ErrorCode: the top-level one, else the first of a partition).
	ErrorCode int16
	// Took runs from the request's decoding to its answer (queueing for the
	// write not included).
	Took time.Duration
}

// ListenerStats are a listener's connection and byte counts since start.
type ListenerStats struct {
	Listener string
	Open     int64 // connections open now
	Accepted int64 // connections accepted (and admitted)
	BytesIn  int64 // request frames read, size prefixes included
	BytesOut int64 // response bytes written
}

// listenerStats are counted with atomics on the connection goroutines and
// read by Server.Stats.
type listenerStats struct {
	open, accepted, bytesIn, bytesOut atomic.Int64
}

func newListenerStats(ls []ListenerConfig) map[string]*listenerStats {
	m := make(map[string]*listenerStats, len(ls))
	for _, l := range ls {
		m[l.Name] = &listenerStats{}
	}
	return m
}

// Stats returns each listener's counts, in listener name order.
func (s *Server) Stats() []ListenerStats {
	out := make([]ListenerStats, 0, len(s.stats))
	for name, st := range s.stats {
		out = append(out, ListenerStats{Listener: name, Open: st.open.Load(), Accepted: st.accepted.Load(),
			BytesIn: st.bytesIn.Load(), BytesOut: st.bytesOut.Load()})
	}
	slices.SortFunc(out, func(a, b ListenerStats) int { return strings.Compare(a.Listener, b.Listener) })
	return out
}

// reportRequest tells OnRequest of an answered request.
func (c *conn) reportRequest(key int16, resp kmsg.Response, start time.Time) {
	if f := c.s.cfg.OnRequest; f != nil {
		d := RequestDone{Listener: c.info.Listener, APIKey: key, Response: resp, Took: time.Since(start)}
		if resp != nil {
			d.ErrorCode = c.s.cfg.Apis.ErrorCode(resp)
		}
		f(d)
	}
}

// PeerState is whether the connection to a destination node is up.
type PeerState struct {
	ID        int32 // a node id; bootstrap servers are -2, -3, ...
	Connected bool
}

// States lists each known destination, in id order.
func (p *Peers) States() []PeerState {
	p.mu.Lock()
	out := make([]PeerState, 0, len(p.peers))
	for id, pr := range p.peers {
		pr.mu.Lock()
		out = append(out, PeerState{ID: id, Connected: pr.conn != nil})
		pr.mu.Unlock()
	}
	p.mu.Unlock()
	slices.SortFunc(out, func(a, b PeerState) int { return int(a.ID) - int(b.ID) })
	return out
}
