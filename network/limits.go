package network

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// openSockets counts the process's open TCP connections, inbound and outbound: file
// descriptors are a per-process resource, so the count is too. countedConn keeps it.
var openSockets atomic.Int64

// countedConn is a net.Conn counted in openSockets until its first Close.
type countedConn struct {
	net.Conn
	once sync.Once
}

func newCountedConn(nc net.Conn) *countedConn {
	openSockets.Add(1)
	return &countedConn{Conn: nc}
}

func (c *countedConn) Close() error {
	c.once.Do(func() { openSockets.Add(-1) })
	return c.Conn.Close()
}

// connQuotas holds the accept-side limits of a server: max.connections,
// max.connections.per.ip (+ overrides), max.connection.creation.rate and the file
// descriptor reserve.
type connQuotas struct {
	max      int                // 0: unlimited
	perIP    int                // 0: unlimited, < 0: none unless overridden
	override map[netip.Addr]int // per-IP limits by address
	rate     float64            // connections per second; 0: unlimited
	fdLimit  int64              // RLIMIT_NOFILE read at start; 0: unknown
	reserve  int64              // descriptors kept free below fdLimit

	mu      sync.Mutex
	total   int
	byIP    map[netip.Addr]int
	changed chan struct{} // closed and replaced when total drops
	tokens  float64       // creation-rate bucket
	last    time.Time     // of the last refill
}

func newConnQuotas(cfg *ServerConfig, override map[netip.Addr]int, fdLimit int64) *connQuotas {
	return &connQuotas{
		max:      cfg.MaxConnections,
		perIP:    cfg.MaxConnectionsPerIP,
		override: override,
		rate:     cfg.MaxConnectionCreationRate,
		fdLimit:  fdLimit,
		reserve:  int64(cfg.FDReserve),
		byIP:     make(map[netip.Addr]int),
		changed:  make(chan struct{}),
		tokens:   cfg.MaxConnectionCreationRate,
	}
}

// creationDelay takes a token for a new connection and returns how long the accept loop
// must wait to keep under max.connection.creation.rate. Like Kafka it waits at most one
// second (its quota window) per connection.
func (q *connQuotas) creationDelay(now time.Time) time.Duration {
	if q.rate <= 0 {
		return 0
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.last.IsZero() {
		q.tokens = min(q.rate, q.tokens+now.Sub(q.last).Seconds()*q.rate)
	}
	q.last = now
	q.tokens--
	if q.tokens >= 0 {
		return 0
	}
	return min(time.Duration(-q.tokens/q.rate*float64(time.Second)), time.Second)
}

// admit counts a new connection from addr. At max.connections it waits, calling waiting
// once, until a connection closes (Kafka's acceptor waits for a slot too rather than
// refusing; later clients wait in the listen backlog) or quit is closed (then it reports
// false with no refusal). It refuses, with the reason, a connection over its address's
// limit (Kafka closes those too) or one that would leave fewer than the reserve of file
// descriptors for the log and quorum-state writes.
func (q *connQuotas) admit(addr netip.Addr, quit <-chan struct{}, waiting func()) (refusal string, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.max > 0 && q.total >= q.max {
		if waiting != nil {
			waiting()
			waiting = nil
		}
		changed := q.changed
		q.mu.Unlock()
		select {
		case <-changed:
		case <-quit:
			q.mu.Lock()
			return "", false
		}
		q.mu.Lock()
	}
	if q.fdLimit > 0 && openSockets.Load()+q.reserve > q.fdLimit {
		return "file descriptor reserve reached", false
	}
	limit, overridden := q.override[addr]
	if !overridden {
		limit = q.perIP
	}
	if (overridden || limit != 0) && q.byIP[addr] >= max(limit, 0) {
		return "too many connections from this address", false
	}
	q.byIP[addr]++
	q.total++
	return "", true
}

// release uncounts a connection admitted from addr.
func (q *connQuotas) release(addr netip.Addr) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.byIP[addr]--; q.byIP[addr] <= 0 {
		delete(q.byIP, addr)
	}
	q.total--
	close(q.changed)
	q.changed = make(chan struct{})
}

// remoteIP is the address per-IP limits key on (IPv4-mapped IPv6 unmapped).
func remoteIP(a net.Addr) netip.Addr {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// admission bounds the requests being read or waiting for their handler over all
// connections (queued.max.requests) and their frame bytes (queued.max.request.bytes). A
// reader takes a share once a frame's size is known, before reading its body, and the
// share is returned when the handler takes the request (ConnInfo.Taken) or, at the
// latest, when the response has been written: a reader that cannot take one stops
// reading, as a Kafka processor does when its request queue or memory pool is full.
type admission struct {
	maxRequests int
	maxBytes    int64 // <= 0: no byte bound

	mu       sync.Mutex
	requests int
	bytes    int64
	changed  chan struct{} // closed and replaced on every release
}

func newAdmission(maxRequests int, maxBytes int64) *admission {
	return &admission{maxRequests: maxRequests, maxBytes: maxBytes, changed: make(chan struct{})}
}

// acquire takes a share for a frame of size bytes, waiting until one is free or stop is
// closed (then it reports false). As Kafka's non-strict memory pool, a frame is admitted
// while fewer than maxBytes are held, so one frame may take the total above it.
func (a *admission) acquire(size int64, stop1, stop2 <-chan struct{}) bool {
	for {
		a.mu.Lock()
		if a.requests < a.maxRequests && (a.maxBytes <= 0 || a.bytes < a.maxBytes) {
			a.requests++
			a.bytes += size
			a.mu.Unlock()
			return true
		}
		changed := a.changed
		a.mu.Unlock()
		select {
		case <-changed:
		case <-stop1:
			return false
		case <-stop2:
			return false
		}
	}
}

// release returns a share taken by acquire.
func (a *admission) release(size int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests--
	a.bytes -= size
	close(a.changed)
	a.changed = make(chan struct{})
}

// held reports the requests and bytes currently admitted.
func (a *admission) held() (requests int, bytes int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.requests, a.bytes
}
