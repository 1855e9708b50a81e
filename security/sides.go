package security

import (
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sasl"
)

// ServerSide is what one listener needs to accept connections of its
// protocol: TLS material when it uses TLS, the SASL configuration its
// connections' Authenticators share when it uses SASL.
type ServerSide struct {
	Listener *Listener
	TLS      *TLSMaterial      // nil unless Listener.Protocol.UsesTLS()
	SASL     *SASLServerConfig // nil unless Listener.Protocol.UsesSASL()
}

// NewServerSide loads l's stores. scram holds the SCRAM credentials
// (shared by every listener); logf receives reload lines.
func NewServerSide(l *Listener, scram *ScramStore, logf func(format string, args ...any)) (*ServerSide, error) {
	s := &ServerSide{Listener: l}
	if l.Protocol.UsesTLS() {
		m, err := NewTLSMaterial(l.SSL, true, logf)
		if err != nil {
			return nil, fmt.Errorf("listener %s: %w", l.Name, err)
		}
		s.TLS = m
	}
	if l.Protocol.UsesSASL() {
		s.SASL = NewSASLServerConfig(l.Name, l.SASL, scram)
	}
	return s, nil
}

// TLSConfig is the listener's server *tls.Config, nil without TLS.
func (s *ServerSide) TLSConfig() *tls.Config {
	if s.TLS == nil {
		return nil
	}
	return s.TLS.ServerConfig()
}

// NewAuthenticator starts the SASL exchange of an accepted connection; nil
// without SASL (the connection is served at once).
func (s *ServerSide) NewAuthenticator() *Authenticator {
	if s.SASL == nil {
		return nil
	}
	return NewAuthenticator(s.SASL)
}

// ClientSide is what outbound connections to voters need.
type ClientSide struct {
	Listener  *Listener
	TLS       *TLSMaterial   // nil unless TLS
	Mechanism sasl.Mechanism // nil unless SASL
}

// NewClientSide loads the outbound stores and the SASL mechanism.
func NewClientSide(l *Listener, logf func(format string, args ...any)) (*ClientSide, error) {
	c := &ClientSide{Listener: l}
	if l.Protocol.UsesTLS() {
		m, err := NewTLSMaterial(l.SSL, false, logf)
		if err != nil {
			return nil, fmt.Errorf("outbound connections (listener %s): %w", l.Name, err)
		}
		c.TLS = m
	}
	if l.Protocol.UsesSASL() {
		m, err := ClientMechanism(l.SASL)
		if err != nil {
			return nil, err
		}
		c.Mechanism = m
	}
	return c, nil
}

// TLSConfig is the *tls.Config for a connection to host, nil without TLS.
func (c *ClientSide) TLSConfig(host string) *tls.Config {
	if c.TLS == nil {
		return nil
	}
	return c.TLS.ClientConfig(host)
}

// NewSASLClient starts the client exchange of a new connection to host with
// SaslAuthenticate at authVersion (the highest both sides serve); nil
// without SASL.
func (c *ClientSide) NewSASLClient(host string, authVersion int16) *SASLClient {
	if c.Mechanism == nil {
		return nil
	}
	return NewSASLClient(c.Mechanism, host, authVersion)
}

// FailureLog rate-limits the log lines of refused connections (TLS
// handshake failures, SASL failures, plaintext on a TLS port): one line per
// peer host per interval, the next line counting those suppressed, so a
// misconfigured or hostile peer retrying in a loop cannot flood the log.
// Safe for concurrent use.
type FailureLog struct {
	interval time.Duration
	logf     func(format string, args ...any)

	mu    sync.Mutex
	peers map[string]*failureEntry
}

type failureEntry struct {
	last       time.Time
	suppressed int
}

// maxFailurePeers bounds the per-peer table; past it, entries older than
// the interval are dropped, then the table is cleared.
const maxFailurePeers = 4096

// NewFailureLog logs through logf at most once per interval per peer host.
func NewFailureLog(interval time.Duration, logf func(format string, args ...any)) *FailureLog {
	return &FailureLog{interval: interval, logf: logf, peers: map[string]*failureEntry{}}
}

// Refused records that a connection from peer (host:port) to listener was
// refused because of err, and logs it unless that host was logged within
// the interval.
func (f *FailureLog) Refused(peer, listener string, err error, now time.Time) {
	host, _, splitErr := net.SplitHostPort(peer)
	if splitErr != nil {
		host = peer
	}
	f.mu.Lock()
	e := f.peers[host]
	if e != nil && now.Sub(e.last) < f.interval {
		e.suppressed++
		f.mu.Unlock()
		return
	}
	suppressed := 0
	if e != nil {
		suppressed = e.suppressed
	}
	if e == nil && len(f.peers) >= maxFailurePeers {
		for h, old := range f.peers {
			if now.Sub(old.last) >= f.interval {
				delete(f.peers, h)
			}
		}
		if len(f.peers) >= maxFailurePeers {
			clear(f.peers)
		}
	}
	f.peers[host] = &failureEntry{last: now}
	f.mu.Unlock()
	if suppressed > 0 {
		f.logf("listener %s: connection from %s refused: %v (%d more from %s since the last line)", listener, peer, err, suppressed, host)
		return
	}
	f.logf("listener %s: connection from %s refused: %v", listener, peer, err)
}
