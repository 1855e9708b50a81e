package network

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/logging"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/security"
)

// Handler serves the requests of every connection except those of the apis the server
// answers itself (Apis).
type Handler interface {
	// Handle is called on the connection's reader goroutine for each decoded request, in
	// order. It must call respond exactly once, possibly later from another goroutine. The
	// connection reads no further request until respond is called, so responses stay in
	// request order (Kafka's one-in-flight-per-connection processing).
	//
	// respond never blocks. The response's version is set to the request's. respond(nil)
	// closes the connection after the responses before it have been written (what a JVM
	// server does when it cannot answer, e.g. a FetchSnapshot error it cannot serialise).
	Handle(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response))
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response))

// Handle calls f.
func (f HandlerFunc) Handle(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	f(c, hdr, req, respond)
}

// ConnInfo describes an inbound connection. The listener name matters to raft: leader
// endpoints are looked up by listener name.
type ConnInfo struct {
	Listener      string
	Local, Remote net.Addr
	// Protocol is the listener's security protocol.
	Protocol security.Protocol
	// Principal is the client's Kafka principal as Kafka's default
	// principal builder names it: User:<SASL user> once authenticated,
	// User:<subject> of a TLS client certificate, else User:ANONYMOUS.
	Principal string
	// Forwarded marks the inner request of an Envelope: the node hands that
	// request on with a copy of its connection's ConnInfo so marked, whose
	// Principal and TokenAuthenticated are then the envelope's (the
	// broker's client's).
	Forwarded          bool
	TokenAuthenticated bool
	conn               *conn // for Taken; nil in a ConnInfo made outside the server
}

// Taken returns the admission share (queued.max.requests, queued.max.request.bytes) of
// the connection's request in flight before its response is written: the handler has
// taken the request off its queue. A Kafka server counts a request against those bounds
// only until a handler thread takes it from its request queue, whatever the request
// waits for afterwards (a commit, a purgatory); held until the response, the shares of
// requests parked for a commit would stop the reading of the requests that commit needs,
// a follower's Fetch. Call it before the request's response is written; once the share
// is returned it does nothing, and the connection still reads nothing more until then.
func (c *ConnInfo) Taken() {
	if c.conn != nil {
		c.conn.releaseRequest()
	}
}

// AnonymousPrincipal is Kafka's KafkaPrincipal.ANONYMOUS.
const AnonymousPrincipal = "User:ANONYMOUS"

// ListenerConfig is one listener: a name (e.g. "CONTROLLER") and a host:port (port 0 picks
// a free port; Server.Addrs reports it).
type ListenerConfig struct {
	Name string
	Addr string
	// Security is the listener's TLS and SASL (nil: PLAINTEXT).
	Security *security.ServerSide
}

// Defaults applied by NewServer to zero ServerConfig fields.
const (
	DefaultIdleTimeout         = 10 * time.Minute // connections.max.idle.ms
	DefaultPartialFrameTimeout = 30 * time.Second
	DefaultWriteTimeout        = 30 * time.Second
	DefaultQueuedMaxRequests   = 500 // queued.max.requests
	// DefaultFDReserve file descriptors are kept free below RLIMIT_NOFILE for log
	// segments, snapshots and quorum-state writes, whose failure would stop the node.
	DefaultFDReserve = 256
)

// NoConnections as MaxConnectionsPerIP allows no connection from an address without an
// override (Kafka's max.connections.per.ip=0).
const NoConnections = -1

// ServerConfig configures a Server. Zero values take the defaults above; the zero value
// of every connection limit means unlimited (Kafka's defaults).
type ServerConfig struct {
	Listeners []ListenerConfig
	// Apis are the apis the server decodes and lists in ApiVersions (required): its
	// own (Apis: ApiVersions, the SASL apis), answered by the server, and the
	// Handler's.
	Apis         *protocol.Table
	MaxFrameSize int32 // bytes; socket.request.max.bytes, default protocol.DefaultMaxFrameSize
	// MaxConnections bounds open inbound connections over all listeners
	// (max.connections). At the limit the server accepts nothing until one closes.
	MaxConnections int
	// MaxConnectionsPerIP bounds the connections from one address
	// (max.connections.per.ip; NoConnections: none), except for the addresses of
	// MaxConnectionsPerIPOverrides (host or IP -> limit; max.connections.per.ip.overrides).
	// A connection over its limit is closed at once.
	MaxConnectionsPerIP          int
	MaxConnectionsPerIPOverrides map[string]int
	// MaxConnectionCreationRate bounds new connections per second over all listeners
	// (max.connection.creation.rate): the accept loop waits to stay under it.
	MaxConnectionCreationRate float64
	// QueuedMaxRequests bounds the requests being read or waiting for their handler over
	// all connections (queued.max.requests); QueuedMaxRequestBytes, when positive, their
	// frame bytes (queued.max.request.bytes). At either bound connections stop reading.
	QueuedMaxRequests     int
	QueuedMaxRequestBytes int64
	// FDReserve file descriptors below RLIMIT_NOFILE are never used by connections:
	// an inbound connection that would eat into them is closed at once.
	FDReserve int
	// IdleTimeout closes a connection that sends nothing for this long while no request
	// of it is being served (connections.max.idle.ms); negative: never.
	IdleTimeout time.Duration
	// PartialFrameTimeout bounds the time from the first byte of a frame to its last, so
	// a client that sends half a frame and stalls does not pin a connection.
	PartialFrameTimeout time.Duration
	// WriteTimeout bounds one write of responses to a client that stops reading.
	WriteTimeout time.Duration
	// FinalizedKRaftVersion, when set, is the node's finalized kraft.version, which
	// ApiVersions v3+ lists in FinalizedFeatures once it is above 0, as Kafka's
	// controllers do (kafka-features describe reads it there). Called per request, from
	// connection goroutines.
	FinalizedKRaftVersion func() int16
	// ControllerFeatures, when set, makes ApiVersions answer as a Kafka
	// controller that can be active does (v3+): every feature it supports,
	// metadata.version included, and the finalized levels of its committed
	// image with the image's offset as their epoch. Called per request, from
	// connection goroutines.
	ControllerFeatures func() (finalized map[string]int16, epoch int64)
	// HandshakeTimeout bounds the TLS handshake of an accepted connection.
	HandshakeTimeout time.Duration
	// Refusals logs refused connections (TLS and SASL failures), one line per peer
	// host per interval; nil: one of its own, through Logger.
	Refusals *security.FailureLog
	Logger   *zap.Logger
	// OnRequest, when set, is told of each request answered (ApiVersions
	// included), from connection goroutines; it must be cheap.
	OnRequest func(RequestDone)
}

// ErrServerClosed is returned by Start after Shutdown.
var ErrServerClosed = errors.New("network: server closed")

// Server accepts Kafka protocol connections on its listeners and hands requests to a
// Handler.
type Server struct {
	cfg  ServerConfig
	h    Handler
	log  *zap.Logger
	rlog *zap.Logger // logging.Remote(log), for lines a peer's input causes

	maxFrame int32 // the frame size limit applied before reading a body
	sides    map[string]*security.ServerSide
	refusals *security.FailureLog
	quotas   *connQuotas
	admit    *admission
	quit     chan struct{} // closed when Shutdown begins

	mu        sync.Mutex
	started   bool
	closing   bool
	listeners []net.Listener
	addrs     map[string]net.Addr
	conns     map[*conn]struct{}
	stats     map[string]*listenerStats // by listener name; fixed at NewServer
	connsDone chan struct{}             // closed when conns becomes empty during shutdown; nil otherwise

	acceptWG sync.WaitGroup // accept loops
	connWG   sync.WaitGroup // every connection goroutine
}

// NewServer validates cfg and returns a server that is not yet listening.
func NewServer(cfg ServerConfig, h Handler) (*Server, error) {
	if h == nil {
		return nil, errors.New("network: new server: nil handler")
	}
	if len(cfg.Listeners) == 0 {
		return nil, errors.New("network: new server: no listeners")
	}
	if cfg.Apis == nil {
		return nil, errors.New("network: new server: no api table")
	}
	seen := make(map[string]bool)
	for _, l := range cfg.Listeners {
		if l.Name == "" {
			return nil, fmt.Errorf("network: new server: listener %q has no name", l.Addr)
		}
		if seen[l.Name] {
			return nil, fmt.Errorf("network: new server: duplicate listener name %q", l.Name)
		}
		seen[l.Name] = true
	}
	if cfg.MaxFrameSize == 0 {
		cfg.MaxFrameSize = protocol.DefaultMaxFrameSize
	}
	if cfg.MaxFrameSize < 0 {
		return nil, fmt.Errorf("network: new server: negative max frame size %d", cfg.MaxFrameSize)
	}
	if cfg.MaxConnections < 0 || cfg.MaxConnectionsPerIP < NoConnections || cfg.MaxConnectionCreationRate < 0 ||
		cfg.QueuedMaxRequests < 0 || cfg.FDReserve < 0 {
		return nil, fmt.Errorf("network: new server: negative connection or request limit")
	}
	override, err := resolveOverrides(cfg.MaxConnectionsPerIPOverrides)
	if err != nil {
		return nil, err
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.PartialFrameTimeout <= 0 {
		cfg.PartialFrameTimeout = DefaultPartialFrameTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if cfg.QueuedMaxRequests == 0 {
		cfg.QueuedMaxRequests = DefaultQueuedMaxRequests
	}
	if cfg.FDReserve == 0 {
		cfg.FDReserve = DefaultFDReserve
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	sides := make(map[string]*security.ServerSide)
	for _, l := range cfg.Listeners {
		if l.Security != nil {
			sides[l.Name] = l.Security
		}
	}
	refusals := cfg.Refusals
	if refusals == nil {
		refusals = newRefusalLog(log)
	}
	return &Server{
		cfg: cfg, h: h, log: log, rlog: logging.Remote(log), sides: sides, refusals: refusals,
		// No served request is larger than protocol.MaxRequestSize, so a larger frame is
		// refused from its size prefix instead of being read first.
		maxFrame: min(cfg.MaxFrameSize, protocol.MaxRequestSize),
		quotas:   newConnQuotas(&cfg, override, fileLimit()),
		admit:    newAdmission(cfg.QueuedMaxRequests, cfg.QueuedMaxRequestBytes),
		quit:     make(chan struct{}),
		conns:    make(map[*conn]struct{}),
		stats:    newListenerStats(cfg.Listeners),
	}, nil
}

// resolveOverrides turns max.connections.per.ip.overrides hosts into addresses (a host
// name counts for every address it resolves to, once, at start as Kafka does).
func resolveOverrides(hosts map[string]int) (map[netip.Addr]int, error) {
	out := make(map[netip.Addr]int)
	for host, n := range hosts {
		if n < 0 {
			return nil, fmt.Errorf("network: new server: negative connection limit %d for %q", n, host)
		}
		if a, err := netip.ParseAddr(host); err == nil {
			out[a.Unmap()] = n
			continue
		}
		ips, err := net.LookupIP(host)
		if err != nil {
			return nil, fmt.Errorf("network: new server: connection limit override for %q: %w", host, err)
		}
		for _, ip := range ips {
			if a, ok := netip.AddrFromSlice(ip); ok {
				out[a.Unmap()] = n
			}
		}
	}
	return out, nil
}

// Start listens on every listener and starts accepting. Either every listener is bound
// or none is.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return ErrServerClosed
	}
	if s.started {
		return errors.New("network: server already started")
	}
	var lns []net.Listener
	addrs := make(map[string]net.Addr)
	for _, l := range s.cfg.Listeners {
		ln, err := net.Listen("tcp", l.Addr)
		if err != nil {
			for _, o := range lns {
				o.Close()
			}
			return fmt.Errorf("network: listen %s on %s: %w", l.Name, l.Addr, err)
		}
		lns = append(lns, ln)
		addrs[l.Name] = ln.Addr()
	}
	s.started = true
	s.listeners = lns
	s.addrs = addrs
	for i, ln := range lns {
		name := s.cfg.Listeners[i].Name
		s.log.Info("listening", zap.String("listener", name), zap.Stringer("addr", ln.Addr()))
		s.acceptWG.Add(1)
		go s.acceptLoop(name, ln)
	}
	return nil
}

// Addrs returns the bound address of each listener by name (port 0 resolved). Empty
// before Start.
func (s *Server) Addrs() map[string]net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]net.Addr, len(s.addrs))
	for k, v := range s.addrs {
		out[k] = v
	}
	return out
}

// acceptLoop accepts until the listener is closed. Accept errors other than a closed
// listener (EMFILE, ECONNABORTED, ...) are retried with net/http's backoff, 5 ms doubling
// to 1 s, so a burst of them neither spins nor stops the server.
func (s *Server) acceptLoop(name string, ln net.Listener) {
	defer s.acceptWG.Done()
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosing() || errors.Is(err, net.ErrClosed) {
				return
			}
			if delay == 0 {
				delay = 5 * time.Millisecond
			} else {
				delay = min(2*delay, time.Second)
			}
			s.log.Warn("accept failed; retrying", zap.String("listener", name),
				zap.Duration("delay", delay), zap.Error(err))
			time.Sleep(delay)
			continue
		}
		delay = 0
		if !s.serve(name, newCountedConn(nc)) {
			return
		}
	}
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// serve waits out the connection creation rate and max.connections, then registers and
// starts the connection, or closes it when a limit refuses it. It reports false when the
// server is shutting down.
func (s *Server) serve(listener string, nc net.Conn) bool {
	if d := s.quotas.creationDelay(time.Now()); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-s.quit:
			t.Stop()
			nc.Close()
			return false
		}
	}
	ip := remoteIP(nc.RemoteAddr())
	refusal, ok := s.quotas.admit(ip, s.quit, func() {
		s.rlog.Warn("too many connections: accepting none until one closes",
			zap.String("listener", listener), zap.Int("max_connections", s.cfg.MaxConnections))
	})
	if !ok {
		if refusal != "" {
			s.rlog.Warn("refusing connection: "+refusal, zap.String("listener", listener),
				zap.Stringer("remote", nc.RemoteAddr()), zap.Int64("open_sockets", openSockets.Load()))
		}
		nc.Close()
		return refusal != ""
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		s.quotas.release(ip)
		nc.Close()
		return false
	}
	side := s.sides[listener]
	if side != nil {
		if tc := side.TLSConfig(); tc != nil {
			nc = tls.Server(nc, tc) // the handshake runs on the reader goroutine
		}
	}
	c := newConn(s, listener, nc)
	if side != nil {
		c.info.Protocol = side.Listener.Protocol
	}
	c.ip = ip
	c.stats.accepted.Add(1)
	c.stats.open.Add(1)
	if side != nil {
		c.auth = side.NewAuthenticator()
	}
	s.conns[c] = struct{}{}
	s.connWG.Add(2)
	s.mu.Unlock()
	go c.readLoop()
	go c.writeLoop()
	return true
}

// removeConn is called once per connection after both of its goroutines are done with it.
func (s *Server) removeConn(c *conn) {
	c.stats.open.Add(-1)
	c.releaseRequest()
	s.quotas.release(c.ip)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	if len(s.conns) == 0 && s.connsDone != nil {
		close(s.connsDone)
		s.connsDone = nil
	}
}

// Shutdown stops accepting, closes idle connections, lets requests being served finish
// and their responses be written until ctx ends, then closes every remaining connection.
// It returns ctx.Err() if connections had to be cut, nil otherwise.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.closing {
		close(s.quit)
	}
	s.closing = true
	for _, ln := range s.listeners {
		ln.Close()
	}
	done := s.connsDone // a concurrent Shutdown's
	if done == nil && len(s.conns) > 0 {
		done = make(chan struct{})
		s.connsDone = done
	}
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	s.acceptWG.Wait()

	for _, c := range conns {
		c.beginShutdown()
	}
	var err error
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			err = ctx.Err()
			s.mu.Lock()
			for c := range s.conns {
				conns = append(conns, c)
			}
			s.mu.Unlock()
			for _, c := range conns {
				c.close(localReason("server shutdown deadline reached"))
			}
		}
	}
	s.connWG.Wait()
	return err
}
