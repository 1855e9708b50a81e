package network

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/security"
)

// Client side of the security of outbound connections (PeerConfig.Security): TLS is
// negotiated right after the TCP connection, then ApiVersions, then the SASL exchange,
// all before any raft request goes out. A failure fails the dial: the node's requests
// fail with BrokerNotAvailable and it is redialed after the reconnect backoff, as after
// a refused connection; the failure is logged rate-limited (logging.Remote).
//
// Re-authentication: a Kafka client re-authenticates in-band when its session nears
// connections.max.reauth.ms. kraftd's peer client instead retires the connection at the
// same point (85-95% of the lifetime granted): new requests dial a fresh, freshly
// authenticated connection, and the old one is closed once its requests in flight have
// timed out or been answered. The server sees the same thing as from Kafka: no request
// on a session past its lifetime.

// errSecurity marks dial failures of TLS or SASL (logged rate-limited).
var errSecurity = errors.New("network: secure connection setup failed")

// secure runs the TLS handshake on nc when the peers use TLS, and returns the
// connection to speak Kafka over.
func (pr *peer) secure(nc net.Conn, host, addr string) (net.Conn, error) {
	sec := pr.p.cfg.Security
	if sec == nil {
		return nc, nil
	}
	tc := sec.TLSConfig(host)
	if tc == nil {
		return nc, nil
	}
	conn := tls.Client(nc, tc)
	ctx, cancel := context.WithTimeout(context.Background(), pr.p.cfg.RequestTimeout)
	defer cancel()
	if err := conn.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, fmt.Errorf("network: SSL handshake with node %d at %s failed: %w (%w, %w)", pr.id, addr, err, errSecurity, kerr.BrokerNotAvailable)
	}
	return conn, nil
}

// authenticate runs the SASL exchange after ApiVersions and returns the session
// lifetime the server granted (0: no re-authentication needed).
func (pc *peerConn) authenticate(host string) (time.Duration, error) {
	sec := pc.pr.p.cfg.Security
	if sec == nil || sec.Mechanism == nil {
		return 0, nil
	}
	fail := func(err error) (time.Duration, error) {
		return 0, fmt.Errorf("network: SASL authentication with node %d: %w (%w, %w)", pc.pr.id, err, errSecurity, kerr.BrokerNotAvailable)
	}
	ours, _ := pc.pr.p.cfg.Apis.Versions(int16(kmsg.SASLAuthenticate))
	theirs, ok := pc.versions[int16(kmsg.SASLAuthenticate)]
	if _, hs := pc.versions[int16(kmsg.SASLHandshake)]; !ok || !hs {
		return fail(errors.New("the node does not serve SaslHandshake and SaslAuthenticate"))
	}
	v := min(ours.Max, theirs.Max)
	if v < max(ours.Min, theirs.Min) {
		return fail(fmt.Errorf("no common SaslAuthenticate version (node v%d-%d): %w", theirs.Min, theirs.Max, kerr.UnsupportedVersion))
	}
	cfg := &pc.pr.p.cfg
	ctx, cancel := context.WithTimeout(context.Background(), cfg.RequestTimeout)
	defer cancel()
	pc.nc.SetDeadline(time.Now().Add(cfg.RequestTimeout))
	defer pc.nc.SetDeadline(time.Time{})

	sc := sec.NewSASLClient(host, v)
	hsReq := sc.Handshake()
	resp, err := pc.roundTrip(hsReq, hsReq.Version)
	if err != nil {
		return fail(err)
	}
	areq, err := sc.OnHandshake(ctx, resp.(*kmsg.SASLHandshakeResponse))
	if err != nil {
		return fail(err)
	}
	// SCRAM needs two round trips, PLAIN one; a server asking for more is broken.
	for range 4 {
		resp, err := pc.roundTrip(areq, v)
		if err != nil {
			return fail(err)
		}
		next, done, lifetime, err := sc.OnAuthenticate(resp.(*kmsg.SASLAuthenticateResponse))
		if err != nil {
			return fail(err)
		}
		if done {
			return lifetime, nil
		}
		areq = next
	}
	return fail(errors.New("the exchange did not complete"))
}

// roundTrip sends one request at version v and reads its response, on a connection
// that is not yet handed to the reader goroutine.
func (pc *peerConn) roundTrip(req kmsg.Request, v int16) (kmsg.Response, error) {
	corr := pc.nextCorr()
	buf, err := protocol.EncodeRequest(nil, corr, pc.pr.p.clientID, req, v)
	if err != nil {
		return nil, err
	}
	if _, err := pc.nc.Write(buf); err != nil {
		return nil, fmt.Errorf("write %s: %w", kmsg.NameForKey(req.Key()), err)
	}
	frame, err := protocol.ReadFrame(pc.br, pc.pr.p.cfg.MaxFrameSize, nil)
	if err != nil {
		return nil, fmt.Errorf("read %s response: %w", kmsg.NameForKey(req.Key()), err)
	}
	got, err := protocol.ResponseCorrelationID(frame)
	if err != nil {
		return nil, err
	}
	if got != corr {
		return nil, fmt.Errorf("correlation id %d, expected %d", got, corr)
	}
	return protocol.ParseResponse(frame, req.Key(), v)
}

// scheduleReauth retires pc at a random 85-95% of the session lifetime (see above).
func (pc *peerConn) scheduleReauth(lifetime time.Duration) {
	if lifetime <= 0 {
		return
	}
	delay := security.ReauthDelay(lifetime, rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())))
	time.AfterFunc(delay, func() {
		pr := pc.pr
		pr.mu.Lock()
		retired := pr.conn == pc
		if retired {
			pr.conn = nil
		}
		pr.mu.Unlock()
		if !retired {
			return
		}
		pr.log.Debug("SASL session nears its lifetime: new requests use a new connection", zap.Duration("lifetime", lifetime))
		time.AfterFunc(pr.p.cfg.RequestTimeout, func() {
			pc.fail(fmt.Errorf("network: connection to node %d retired before its SASL session expired: %w", pr.id, kerr.BrokerNotAvailable))
		})
	})
}

// logDialFailure logs a failed dial: a TLS or SASL failure rate-limited (a
// misconfigured quorum retries it every backoff), other failures as before.
func (pr *peer) logDialFailure(addr string, wait time.Duration, err error) {
	if errors.Is(err, errSecurity) {
		pr.p.rlog.Warn("secure connection to node refused", zap.Int32("node", pr.id), zap.String("addr", addr),
			zap.Duration("backoff", wait), zap.Error(err))
		return
	}
	pr.log.Warn("connect failed", zap.String("addr", addr), zap.Duration("backoff", wait), zap.Error(err))
}
