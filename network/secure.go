package network

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/security"
)

// Server side of listener security (package security holds the rules; this file
// drives them, as security/doc.go describes):
//
//   - a TLS listener wraps each accepted connection in tls.Server; the handshake runs
//     on the connection's reader goroutine (never the accept loop), bounded by
//     HandshakeTimeout. A failure (a plaintext client, an unknown CA, no client
//     certificate when one is required) closes the connection with one rate-limited
//     line naming the peer.
//   - a SASL listener hands every frame to the connection's Authenticator until it
//     has authenticated: only ApiVersions, SaslHandshake and SaslAuthenticate are
//     answered, frames are bounded by sasl.server.max.receive.size before their body
//     is read, and nothing reaches the Handler. Afterwards SaslHandshake and
//     SaslAuthenticate still go to the Authenticator (re-authentication), and any
//     other request on a connection whose session expired closes it.
//   - on a listener without SASL, SaslHandshake and SaslAuthenticate are answered
//     with ILLEGAL_SASL_STATE, as Kafka's ControllerApis does.

// DefaultHandshakeTimeout bounds a TLS handshake of an accepted connection.
const DefaultHandshakeTimeout = 10 * time.Second

// refusalInterval is how often one peer host's refused connections are logged.
const refusalInterval = 10 * time.Second

func newRefusalLog(log *zap.Logger) *security.FailureLog {
	return security.NewFailureLog(refusalInterval, func(format string, args ...any) {
		log.Warn(fmt.Sprintf(format, args...))
	})
}

// reasonRefused closes a connection whose refusal went to the FailureLog already.
var reasonRefused = reason{why: "connection refused", quiet: true}

// refused logs err once (rate-limited per peer host) for this connection.
func (c *conn) refused(err error) {
	c.s.refusals.Refused(c.info.Remote.String(), c.info.Listener, err, time.Now())
}

// tlsHandshake completes the server handshake of a TLS connection; false means it
// failed and the connection is closed.
func (c *conn) tlsHandshake() bool {
	tc, ok := c.nc.(*tls.Conn)
	if !ok {
		return true
	}
	// beginShutdown's read deadline ends a handshake in progress too.
	if !c.setReadDeadline(c.s.cfg.HandshakeTimeout) {
		c.close(localReason("server shutdown"))
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.s.cfg.HandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		if _, shutdown := c.mustStop(); shutdown {
			c.close(localReason("server shutdown"))
			return false
		}
		c.refused(fmt.Errorf("SSL handshake failed: %w", err))
		c.close(reasonRefused)
		return false
	}
	if st := tc.ConnectionState(); len(st.PeerCertificates) > 0 {
		c.log.Debug("TLS client authenticated", zap.String("subject", st.PeerCertificates[0].Subject.String()))
		if c.auth == nil { // on SASL_SSL the SASL user is the principal
			c.info.Principal = "User:" + st.PeerCertificates[0].Subject.String()
		}
	}
	return true
}

// saslLimit is the frame size limit before authentication, or 0 when none applies.
func (c *conn) saslLimit() int32 {
	if c.auth == nil || c.auth.Authenticated() {
		return 0
	}
	return c.auth.MaxReceiveSize()
}

// errSASLRefused: the Authenticator refused the connection while a frame was read.
var errSASLRefused = errors.New("network: SASL authentication refused")

// checkSASLSize applies sasl.server.max.receive.size to a frame's size prefix before
// any of its body is read.
func (c *conn) checkSASLSize(prefix []byte) error {
	limit := c.saslLimit()
	if limit <= 0 {
		return nil
	}
	size := int32(binary.BigEndian.Uint32(prefix))
	if size >= 0 && size <= limit {
		return nil
	}
	c.act(c.auth.Oversized(int64(size)), protocol.RequestHeader{}, nil)
	return errSASLRefused
}

// serveSASL handles frame on a SASL connection. handled reports that the frame went
// to the Authenticator (or closed the connection); queued that an answer is being
// written, so the reader must wait for it; ok false that reading must stop.
func (c *conn) serveSASL(frame []byte) (handled, queued, ok bool) {
	a := c.auth
	now := time.Now()
	if a.ExpectsRawToken() {
		queued, ok = c.act(a.RawToken(frame, now), protocol.RequestHeader{}, nil)
		return true, queued, ok
	}
	if a.Authenticated() {
		raw, _, err := protocol.ParseRequestHeader(frame)
		if err != nil {
			return false, false, true // the usual path refuses it
		}
		key := raw.Header().APIKey
		if key != int16(kmsg.SASLHandshake) && key != int16(kmsg.SASLAuthenticate) {
			if a.SessionExpired(now) {
				c.refused(errors.New("SASL session expired (connections.max.reauth.ms) without re-authentication"))
				c.close(reasonRefused)
				return true, false, false
			}
			return false, false, true
		}
	}
	hdr, req, err := c.s.cfg.Apis.ParseRequest(frame)
	var out security.Outcome
	switch {
	case err != nil && hdr.APIKey == int16(kmsg.ApiVersions) && errors.Is(err, protocol.ErrUnsupportedVersion):
		out = a.Request(hdr.APIKey, hdr.APIVersion, nil, now)
	case err != nil:
		out = a.Unparsable(err)
	default:
		out = a.Request(hdr.APIKey, hdr.APIVersion, req, now)
	}
	queued, ok = c.act(out, hdr, req)
	return true, queued, ok
}

// act carries out an Authenticator's outcome for the request with header hdr.
func (c *conn) act(out security.Outcome, hdr protocol.RequestHeader, req kmsg.Request) (queued, ok bool) {
	if out.Err != nil {
		c.refused(out.Err)
	}
	if out.Authenticated {
		msg := "SASL authenticated"
		if out.Reauthenticated {
			msg = "SASL re-authenticated"
		}
		c.info.Principal = "User:" + c.auth.Principal()
		c.log.Info(msg, zap.String("mechanism", c.auth.Mechanism()), zap.String("principal", c.info.Principal))
	}
	switch out.Action {
	case security.Respond:
		switch {
		case out.RawResponse != nil:
			c.beginRequest()
			c.enqueue(outItem{raw: out.RawResponse, isRaw: true})
			return true, true
		case out.Response != nil:
			c.answerSelf(hdr, out.Response)
			return true, true
		}
		c.releaseRequest()
		return false, true
	case security.ServeApiVersions:
		if av, isAV := req.(*kmsg.ApiVersionsRequest); isAV {
			c.answerSelf(hdr, c.s.apiVersionsResponse(av))
		} else {
			c.answerSelf(hdr, c.s.cfg.Apis.ApiVersionsResponse(hdr.APIVersion))
		}
		return true, true
	case security.RespondAndClose:
		if out.Response != nil {
			c.answerSelf(hdr, out.Response)
		}
		c.stopReading(reasonRefused)
		return false, false
	default:
		c.close(reasonRefused)
		return false, false
	}
}
