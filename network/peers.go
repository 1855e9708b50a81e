package network

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/logging"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/security"
)

// Defaults applied by NewPeers to zero PeerConfig fields (Kafka's names in comments).
const (
	// DefaultRequestTimeout is Kafka's client request.timeout.ms, for a client given
	// none: the peer client decides nothing about raft, and a node passes its
	// controller.quorum.request.timeout.ms (raft.DefaultRequestTimeout by default).
	DefaultRequestTimeout      = 30 * time.Second        // request.timeout.ms
	DefaultReconnectBackoff    = 50 * time.Millisecond   // reconnect.backoff.ms
	DefaultReconnectBackoffMax = 1000 * time.Millisecond // reconnect.backoff.max.ms
	// SoftwareName and SoftwareVersion are sent in ApiVersions v3+ (they must match
	// Kafka's [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?).
	SoftwareName    = "kraftd"
	SoftwareVersion = "0.1.0"
	backoffJitter   = 0.2
	// peerReadBufferSize: responses (Fetch, FetchSnapshot) can be megabytes, and a node
	// has few peers.
	peerReadBufferSize = 64 << 10
	// peerWriteBufferMax: a larger write buffer is dropped after use, not kept.
	peerWriteBufferMax = 256 << 10
)

// PeerConfig configures Peers. Zero durations take the defaults above; MaxFrameSize 0
// takes protocol.DefaultMaxFrameSize (the JVM reads responses without a limit; raft
// responses are at most a few MiB).
type PeerConfig struct {
	ClientID string // request header client id, e.g. "raft-client-1"
	// Apis are the apis the node serves: a request is sent at the highest version
	// both it and the peer list (nil: the server's own apis only, Apis).
	Apis                *protocol.Table
	RequestTimeout      time.Duration
	ReconnectBackoff    time.Duration
	ReconnectBackoffMax time.Duration
	MaxFrameSize        int32 // bytes, for responses
	// Security is TLS and SASL of outbound connections (nil: PLAINTEXT), those of
	// the first controller listener.
	Security *security.ClientSide
	Logger   *zap.Logger
	// OnConnect, when set, is called on a client goroutine after each new connection's
	// ApiVersions exchange with the names of the features the peer supports (its
	// SupportedFeatures): what the peer can do, e.g. run Kafka's QuorumController
	// (metadata.version). It must not block.
	OnConnect func(node int32, features []string)
}

// Errors passed to Send callbacks. Every transport failure (dial, disconnect, timeout,
// undecodable response) also wraps kerr.BrokerNotAvailable, the error the JVM raft client
// synthesises for a disconnect; a version mismatch wraps kerr.UnsupportedVersion.
var (
	ErrPeersClosed    = errors.New("network: peers closed")
	ErrUnknownNode    = errors.New("network: unknown node")
	ErrRequestTimeout = errors.New("network: request timed out")
	// ErrNonRoutable is returned for an address that names no peer (host 0.0.0.0 or
	// port 0), which Kafka uses for voters whose address is not known yet.
	ErrNonRoutable = errors.New("network: non-routable address")
)

// Peers is the outbound client of a node: one connection per destination node id,
// dialed lazily by Send.
//
// Pipelining: Send never waits for an earlier request to the same node, so several
// requests may be in flight on one connection (Kafka's raft client allows one; its
// request manager sends one at a time per destination anyway). A Kafka server answers in
// request order, so responses are matched to requests first-in first-out and each
// correlation id is checked; a mismatch closes the connection. A timed-out request
// closes its connection too, failing the others in flight on it, so a late response can
// never be taken for a newer request's.
type Peers struct {
	cfg      PeerConfig
	log      *zap.Logger
	rlog     *zap.Logger // rate-limited, for failures a misconfigured peer repeats
	clientID *string

	// closed is set by Close before it visits any peer, so a dial that completes
	// concurrently either sees it (under peer.mu) or is visited and closed by Close.
	closed atomic.Bool

	mu    sync.Mutex
	peers map[int32]*peer

	wg sync.WaitGroup // client goroutines (tests wait on it)
}

// NewPeers returns a client with no known nodes; add them with SetAddress.
func NewPeers(cfg PeerConfig) *Peers {
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.ReconnectBackoff <= 0 {
		cfg.ReconnectBackoff = DefaultReconnectBackoff
	}
	if cfg.ReconnectBackoffMax <= 0 {
		cfg.ReconnectBackoffMax = DefaultReconnectBackoffMax
	}
	if cfg.ReconnectBackoffMax < cfg.ReconnectBackoff {
		cfg.ReconnectBackoffMax = cfg.ReconnectBackoff
	}
	if cfg.MaxFrameSize <= 0 {
		cfg.MaxFrameSize = protocol.DefaultMaxFrameSize
	}
	if cfg.Apis == nil {
		cfg.Apis = protocol.MustTable(Apis())
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	clientID := cfg.ClientID
	return &Peers{cfg: cfg, log: log, rlog: logging.Remote(log), clientID: &clientID, peers: make(map[int32]*peer)}
}

// SetAddress sets (or changes) the host:port of node id. A changed address closes the
// node's connection and resets its reconnect backoff.
func (p *Peers) SetAddress(id int32, hostport string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Load() {
		return
	}
	pr := p.peers[id]
	if pr == nil {
		p.peers[id] = &peer{p: p, id: id, addr: hostport,
			log: p.log.With(zap.Int32("node", id))}
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.addr == hostport {
		return
	}
	pr.addr = hostport
	pr.failures, pr.nextDial, pr.lastErr = 0, time.Time{}, nil
	if pc := pr.conn; pc != nil {
		pr.conn = nil
		// Callbacks of the requests in flight must not run on the caller's goroutine.
		go pc.fail(fmt.Errorf("network: node %d address changed to %s", id, hostport))
	}
}

// Send sends req to node id and calls cb exactly once, on a client goroutine, with the
// response or an error (timeout, disconnect, unknown node, unsupported version). Send
// never blocks: connecting happens on a client goroutine, and while the node is in
// reconnect backoff after a failed dial, Send fails at once with the dial's error.
//
// The version sent is the highest both kraftd (PeerConfig.Apis) and the peer (its
// ApiVersions answer) support; req's own version is ignored and req is not modified, so
// one request may be sent to several nodes. req must not be modified until cb runs. When
// that version cannot carry a field whose value changes the request's meaning (a Vote
// with PreVote below v2, a Fetch with LastFetchedEpoch below v12), cb gets an error
// wrapping kerr.UnsupportedVersion instead (see protocol.EncodeRequest).
func (p *Peers) Send(id int32, req kmsg.Request, cb func(kmsg.Response, error)) {
	c := &call{to: id, req: req, cb: cb}
	closed := p.closed.Load()
	p.mu.Lock()
	pr := p.peers[id]
	p.mu.Unlock()
	switch {
	case closed:
		go c.finish(nil, ErrPeersClosed)
		return
	case pr == nil:
		go c.finish(nil, fmt.Errorf("network: send %s to node %d: %w", kmsg.NameForKey(req.Key()), id, ErrUnknownNode))
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.stopped != nil { // forgotten (or closed) since it was looked up
		go c.finish(nil, pr.stopped)
		return
	}
	if pr.conn == nil && time.Now().Before(pr.nextDial) && pr.lastErr != nil {
		err := fmt.Errorf("network: send %s to node %d: in reconnect backoff after: %w",
			kmsg.NameForKey(req.Key()), id, pr.lastErr)
		go c.finish(nil, err)
		return
	}
	c.timer = time.AfterFunc(p.cfg.RequestTimeout, c.expire)
	if pr.sendInline(c) {
		return
	}
	pr.queue = append(pr.queue, c)
	if !pr.running {
		pr.running = true
		p.wg.Add(1)
		go pr.run()
	}
}

// Connect opens a connection to node id, on a client goroutine, unless one
// is open, the node is in reconnect backoff or unknown; nothing is sent
// beyond the connection's own ApiVersions exchange, and OnConnect reports
// it as for any new connection. It lets a caller learn a peer's software
// without a request of its own for it.
func (p *Peers) Connect(id int32) {
	if p.closed.Load() {
		return
	}
	p.mu.Lock()
	pr := p.peers[id]
	p.mu.Unlock()
	if pr == nil {
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.stopped != nil || pr.conn != nil || time.Now().Before(pr.nextDial) && pr.lastErr != nil {
		return
	}
	pr.wantConn = true
	if !pr.running {
		pr.running = true
		p.wg.Add(1)
		go pr.run()
	}
}

// Close closes every connection and fails every pending request with ErrPeersClosed
// (callbacks run on client goroutines, not the caller's). Later Sends fail the same way.
func (p *Peers) Close() {
	p.mu.Lock()
	if p.closed.Swap(true) {
		p.mu.Unlock()
		return
	}
	peers := make([]*peer, 0, len(p.peers))
	for _, pr := range p.peers {
		peers = append(peers, pr)
	}
	p.mu.Unlock()
	for _, pr := range peers {
		pr.stop(ErrPeersClosed)
	}
}

// Forget removes node id as if SetAddress had never named it: its pending requests fail
// with ErrUnknownNode and its connection closes. A node learns leaders' addresses from
// the wire; forgetting those it no longer needs keeps this client's memory bounded
// whatever node ids peers advertise.
func (p *Peers) Forget(id int32) {
	p.mu.Lock()
	pr := p.peers[id]
	delete(p.peers, id)
	p.mu.Unlock()
	if pr != nil {
		pr.stop(fmt.Errorf("network: node %d was forgotten: %w", id, ErrUnknownNode))
	}
}

// call is one Send.
type call struct {
	to    int32
	req   kmsg.Request
	cb    func(kmsg.Response, error)
	timer *time.Timer // set before the call is queued; nil for calls failed at once

	done atomic.Bool              // cb has been (or is being) called
	conn atomic.Pointer[peerConn] // connection the request was written to

	// Set by the writer before the request is in flight.
	corr         int32
	key, version int16
}

// finish runs cb unless the call already finished. Invariant: cb runs at most once.
func (c *call) finish(resp kmsg.Response, err error) bool {
	if !c.done.CompareAndSwap(false, true) {
		return false
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	c.cb(resp, err)
	return true
}

// expire is the request timeout. The connection the request went out on is closed
// before cb runs, so a retry from cb cannot go out on it and its late response cannot be
// read at all.
func (c *call) expire() {
	if !c.done.CompareAndSwap(false, true) {
		return
	}
	err := fmt.Errorf("network: %s to node %d: %w (%w)", kmsg.NameForKey(c.req.Key()), c.to,
		ErrRequestTimeout, kerr.BrokerNotAvailable)
	if pc := c.conn.Load(); pc != nil {
		pc.fail(fmt.Errorf("network: connection to node %d closed after a request timed out: %w", c.to, kerr.BrokerNotAvailable))
	}
	c.cb(nil, err)
}

// peer is one destination node. Its run goroutine, started by Send when there is work
// and exiting when there is none, dials and writes; each connection has a reader.
type peer struct {
	p   *Peers
	id  int32
	log *zap.Logger

	mu       sync.Mutex
	addr     string
	queue    []*call // not yet written
	running  bool    // the run goroutine is alive, or an inline send holds the connection
	rest     []byte  // the unwritten part of an inline send (peers_inline.go), on restConn
	restConn *peerConn
	wantConn bool      // Connect asked for a connection with nothing to send
	conn     *peerConn // current connection; nil when none
	failures int       // consecutive failed dials
	nextDial time.Time // no dial before this (reconnect backoff)
	lastErr  error     // why the last dial failed or connection closed; nil after a dial succeeds
	stopped  error     // set by stop: the peer was closed or forgotten; nothing more is sent
}

// stop fails the peer's queued and in-flight requests with err and closes its
// connection; a dial that completes later is closed at once (callbacks never run on the
// caller's goroutine).
func (pr *peer) stop(err error) {
	pr.mu.Lock()
	pr.stopped = err
	queue := pr.queue
	pr.queue = nil
	pc := pr.conn
	pr.conn = nil
	pr.mu.Unlock()
	if len(queue) > 0 {
		go failAll(queue, err)
	}
	if pc != nil {
		go pc.fail(err)
	}
}

// backoff returns the reconnect backoff after n consecutive failures: exponential from
// ReconnectBackoff, capped at ReconnectBackoffMax, with +-20% jitter (Kafka's
// ExponentialBackoff), still within the cap.
func (pr *peer) backoff(n int) time.Duration {
	cfg := &pr.p.cfg
	d := cfg.ReconnectBackoff
	for i := 0; i < n && d < cfg.ReconnectBackoffMax; i++ {
		d *= 2
	}
	d = min(d, cfg.ReconnectBackoffMax)
	d = time.Duration(float64(d) * (1 - backoffJitter + 2*backoffJitter*rand.Float64()))
	return min(d, cfg.ReconnectBackoffMax)
}

func (pr *peer) run() {
	defer pr.p.wg.Done()
	for {
		pr.mu.Lock()
		if rest, pc := pr.rest, pr.restConn; rest != nil {
			pr.rest, pr.restConn = nil, nil
			pr.mu.Unlock()
			pc.writeRest(rest)
			continue
		}
		if len(pr.queue) == 0 && !pr.wantConn {
			pr.running = false
			pr.mu.Unlock()
			return
		}
		calls := pr.queue
		pr.queue, pr.wantConn = nil, false
		pc := pr.conn
		pr.mu.Unlock()
		if pr.p.closed.Load() {
			failAll(calls, ErrPeersClosed)
			continue
		}
		if pc == nil {
			var err error
			if pc, err = pr.dial(); err != nil {
				failAll(calls, err)
				continue
			}
			if f := pr.p.cfg.OnConnect; f != nil {
				f(pr.id, pc.features)
			}
		}
		if len(calls) > 0 {
			pc.send(calls)
		}
	}
}

func failAll(calls []*call, err error) {
	for _, c := range calls {
		c.finish(nil, err)
	}
}

// dial connects and negotiates versions, honouring the reconnect backoff.
func (pr *peer) dial() (*peerConn, error) {
	pr.mu.Lock()
	addr := pr.addr
	start := time.Now()
	if start.Before(pr.nextDial) && pr.lastErr != nil {
		err := fmt.Errorf("network: node %d: in reconnect backoff after: %w", pr.id, pr.lastErr)
		pr.mu.Unlock()
		return nil, err
	}
	pr.mu.Unlock()

	pc, err := pr.connect(addr)

	pr.mu.Lock()
	defer pr.mu.Unlock()
	if err == nil && pr.addr != addr {
		err = fmt.Errorf("network: node %d: address changed to %s while connecting", pr.id, pr.addr)
		pc.nc.Close()
	}
	if err == nil && pr.stopped != nil {
		err = pr.stopped
		pc.nc.Close()
	}
	if err != nil {
		pr.failures++
		wait := pr.backoff(pr.failures - 1)
		// From the failure, not the attempt's start: a dial that took its whole timeout
		// (DNS, SYN lost) still leaves the backoff between attempts.
		pr.nextDial = time.Now().Add(wait)
		pr.lastErr = err
		pr.logDialFailure(addr, wait, err)
		return nil, err
	}
	// Backoff is measured from the start of the last attempt (as Kafka does), so a
	// connection that dies at once is not redialed in a tight loop.
	pr.failures = 0
	pr.nextDial = start.Add(pr.backoff(0))
	pr.lastErr = nil
	pr.conn = pc
	pc.scheduleReauth(pc.lifetime)
	pr.log.Info("connected", zap.String("addr", addr))
	pr.p.wg.Add(1)
	go pc.readLoop()
	return pc, nil
}

// connect dials addr and runs the ApiVersions exchange.
func (pr *peer) connect(addr string) (*peerConn, error) {
	cfg := &pr.p.cfg
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("network: node %d address %q: %w (%w)", pr.id, addr, err, kerr.BrokerNotAvailable)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() || port == "0" || host == "" {
		return nil, fmt.Errorf("network: node %d address %q: %w (%w)", pr.id, addr, ErrNonRoutable, kerr.BrokerNotAvailable)
	}
	d := net.Dialer{Timeout: cfg.RequestTimeout}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("network: connect to node %d at %s: %w (%w)", pr.id, addr, err, kerr.BrokerNotAvailable)
	}
	nc = newCountedConn(nc) // for the server's file descriptor reserve
	if nc, err = pr.secure(nc, host, addr); err != nil {
		return nil, err
	}
	pc := &peerConn{pr: pr, nc: nc, br: bufio.NewReaderSize(nc, peerReadBufferSize), raw: inlineConn(nc)}
	if err := pc.negotiate(); err != nil {
		nc.Close()
		return nil, fmt.Errorf("network: ApiVersions with node %d at %s: %w", pr.id, addr, err)
	}
	if pc.lifetime, err = pc.authenticate(host); err != nil {
		nc.Close()
		return nil, err
	}
	return pc, nil
}

// peerConn is one outbound connection.
type peerConn struct {
	pr       *peer
	nc       net.Conn
	br       *bufio.Reader
	versions map[int16]protocol.VersionRange // the peer's ApiVersions answer; immutable
	features []string                        // the answer's SupportedFeatures names; immutable
	lifetime time.Duration                   // SASL session lifetime granted; 0: none

	// raw is the socket for inline sends (peers_inline.go); nil: TLS.
	raw syscall.RawConn

	// Owned by the peer's run goroutine (or the inline send holding running).
	corr int32
	wbuf []byte

	mu       sync.Mutex
	dead     bool
	inflight []*call // written, awaiting a response, in write order
}

func (pc *peerConn) nextCorr() int32 {
	c := pc.corr
	pc.corr++
	if pc.corr < 0 {
		pc.corr = 0
	}
	return c
}

// negotiate sends ApiVersions (protocol.ClientApiVersionsVersion, or the highest the peer names in an
// UNSUPPORTED_VERSION answer) and records the peer's version ranges.
func (pc *peerConn) negotiate() error {
	cfg := &pc.pr.p.cfg
	pc.nc.SetDeadline(time.Now().Add(cfg.RequestTimeout))
	defer pc.nc.SetDeadline(time.Time{})
	own, _ := cfg.Apis.Versions(int16(kmsg.ApiVersions))
	v := min(protocol.ClientApiVersionsVersion, own.Max)
	for attempt := 0; attempt < 3; attempt++ {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = v
		req.ClientSoftwareName = SoftwareName
		req.ClientSoftwareVersion = SoftwareVersion
		corr := pc.nextCorr()
		if _, err := pc.nc.Write(protocol.AppendRequest(nil, corr, pc.pr.p.clientID, req)); err != nil {
			return fmt.Errorf("write: %w (%w)", err, kerr.BrokerNotAvailable)
		}
		frame, err := protocol.ReadFrame(pc.br, cfg.MaxFrameSize, nil)
		if err != nil {
			return fmt.Errorf("read: %w (%w)", err, kerr.BrokerNotAvailable)
		}
		got, err := protocol.ResponseCorrelationID(frame)
		if err != nil {
			return fmt.Errorf("%w (%w)", err, kerr.BrokerNotAvailable)
		}
		if got != corr {
			return fmt.Errorf("correlation id %d, expected %d (%w)", got, corr, kerr.BrokerNotAvailable)
		}
		// A server that does not know version v answers with UNSUPPORTED_VERSION and
		// its own ApiVersions range (ParseResponse reads that answer's v0 layout).
		kresp, err := protocol.ParseResponse(frame, int16(kmsg.ApiVersions), v)
		if err != nil {
			return fmt.Errorf("decode v%d: %w (%w)", v, err, kerr.BrokerNotAvailable)
		}
		resp := kresp.(*kmsg.ApiVersionsResponse)
		if resp.ErrorCode == kerr.UnsupportedVersion.Code {
			next := int16(-1)
			for _, k := range resp.ApiKeys {
				if k.ApiKey == int16(kmsg.ApiVersions) {
					next = min(k.MaxVersion, own.Max)
				}
			}
			if next < 0 || next >= v {
				return fmt.Errorf("peer refused ApiVersions v%d and offers no lower version: %w", v, kerr.UnsupportedVersion)
			}
			v = next
			continue
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return fmt.Errorf("ApiVersions v%d: %w", v, err)
		}
		pc.versions = make(map[int16]protocol.VersionRange, len(resp.ApiKeys))
		for _, k := range resp.ApiKeys {
			pc.versions[k.ApiKey] = protocol.VersionRange{Min: k.MinVersion, Max: k.MaxVersion}
		}
		for _, f := range resp.SupportedFeatures {
			pc.features = append(pc.features, f.Name)
		}
		return nil
	}
	return fmt.Errorf("no ApiVersions version agreed: %w", kerr.UnsupportedVersion)
}

// versionFor picks the version of req: the highest kraftd, kmsg and the peer support.
func (pc *peerConn) versionFor(req kmsg.Request) (int16, error) {
	key := req.Key()
	ours, ok := pc.pr.p.cfg.Apis.Versions(key)
	if !ok {
		return 0, fmt.Errorf("network: %s: kraftd does not support api key %d: %w", kmsg.NameForKey(key), key, kerr.UnsupportedVersion)
	}
	theirs, ok := pc.versions[key]
	if !ok {
		return 0, fmt.Errorf("network: node %d does not support %s: %w", pc.pr.id, kmsg.NameForKey(key), kerr.UnsupportedVersion)
	}
	hi := min(ours.Max, theirs.Max, req.MaxVersion())
	lo := max(ours.Min, theirs.Min)
	if hi < lo {
		return 0, fmt.Errorf("network: %s: node %d supports v%d-%d, kraftd v%d-%d: %w", kmsg.NameForKey(key),
			pc.pr.id, theirs.Min, theirs.Max, ours.Min, ours.Max, kerr.UnsupportedVersion)
	}
	return hi, nil
}

// send encodes calls into one buffer, registers them as in flight and writes them.
// Called only from the peer's run goroutine.
func (pc *peerConn) send(calls []*call) {
	buf := pc.wbuf[:0]
	for _, c := range calls {
		if c.done.Load() {
			continue // timed out while queued
		}
		start := len(buf)
		v, err := pc.versionFor(c.req)
		if err == nil {
			buf, err = protocol.EncodeRequest(buf, pc.corr, pc.pr.p.clientID, c.req, v)
			if err != nil {
				err = fmt.Errorf("network: node %d supports %s up to v%d: %w", pc.pr.id, kmsg.NameForKey(c.req.Key()), v, err)
			}
		}
		if err != nil {
			c.finish(nil, err)
			continue
		}
		c.corr, c.key, c.version = pc.nextCorr(), c.req.Key(), v
		// Publish the connection before checking done: either expire sees the
		// connection and closes it, or this sees the expiry and drops the request.
		c.conn.Store(pc)
		if c.done.Load() {
			buf = buf[:start]
			continue
		}
		pc.mu.Lock()
		if pc.dead {
			pc.mu.Unlock()
			buf = buf[:start]
			c.finish(nil, fmt.Errorf("network: connection to node %d closed: %w", pc.pr.id, kerr.BrokerNotAvailable))
			continue
		}
		pc.inflight = append(pc.inflight, c)
		pc.mu.Unlock()
	}
	if len(buf) > 0 {
		pc.nc.SetWriteDeadline(time.Now().Add(pc.pr.p.cfg.RequestTimeout))
		if _, err := pc.nc.Write(buf); err != nil {
			pc.fail(fmt.Errorf("network: write to node %d: %w (%w)", pc.pr.id, err, kerr.BrokerNotAvailable))
		}
		pc.nc.SetWriteDeadline(time.Time{}) // inline sends (peers_inline.go) have none
	}
	if cap(buf) <= peerWriteBufferMax {
		pc.wbuf = buf[:0]
	} else {
		pc.wbuf = nil
	}
}

// fail closes the connection and fails every request in flight on it with err, on the
// calling goroutine. Idempotent.
func (pc *peerConn) fail(err error) {
	pc.mu.Lock()
	if pc.dead {
		pc.mu.Unlock()
		return
	}
	pc.dead = true
	inflight := pc.inflight
	pc.inflight = nil
	pc.mu.Unlock()
	pc.nc.Close()
	pr := pc.pr
	pr.mu.Lock()
	if pr.conn == pc {
		pr.conn = nil
		// A connection that dies within the backoff of its own dial is not redialed
		// before that backoff ends.
		pr.lastErr = err
	}
	pr.mu.Unlock()
	if !errors.Is(err, ErrPeersClosed) {
		pr.log.Info("connection closed", zap.Int("in_flight", len(inflight)), zap.Error(err))
	}
	failAll(inflight, err)
}

// readLoop reads responses and completes the matching calls, in order.
func (pc *peerConn) readLoop() {
	defer pc.pr.p.wg.Done()
	id := pc.pr.id
	for {
		// A fresh buffer per response: decoded byte fields (Fetch records) alias it and
		// go on to the raft driver.
		frame, err := protocol.ReadFrame(pc.br, pc.pr.p.cfg.MaxFrameSize, nil)
		if err != nil {
			pc.fail(fmt.Errorf("network: read from node %d: %w (%w)", id, err, kerr.BrokerNotAvailable))
			return
		}
		corr, err := protocol.ResponseCorrelationID(frame)
		if err != nil {
			pc.fail(fmt.Errorf("network: response from node %d: %w (%w)", id, err, kerr.BrokerNotAvailable))
			return
		}
		pc.mu.Lock()
		var c *call
		if len(pc.inflight) > 0 {
			c = pc.inflight[0]
			pc.inflight[0] = nil
			pc.inflight = pc.inflight[1:]
		}
		pc.mu.Unlock()
		if c == nil || c.corr != corr {
			err := fmt.Errorf("network: node %d answered correlation id %d, none or another expected (%w)", id, corr, kerr.BrokerNotAvailable)
			if c != nil {
				c.finish(nil, err)
			}
			pc.fail(err)
			return
		}
		resp, err := protocol.ParseResponse(frame, c.key, c.version)
		if err != nil {
			err = fmt.Errorf("network: decode %s v%d response from node %d: %w (%w)", kmsg.NameForKey(c.key),
				c.version, id, err, kerr.BrokerNotAvailable)
			c.finish(nil, err)
			pc.fail(err)
			return
		}
		c.finish(resp, nil)
	}
}
