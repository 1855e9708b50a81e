package security

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// ClientMechanism is franz-go's mechanism for sasl.mechanism.controller.protocol
// with the username and password of its JAAS entry.
func ClientMechanism(s *SASLSettings) (sasl.Mechanism, error) {
	switch s.ClientMechanism {
	case MechPlain:
		return plain.Auth{User: s.ClientUsername, Pass: s.ClientPassword}.AsMechanism(), nil
	case MechScramSHA256:
		return scram.Auth{User: s.ClientUsername, Pass: s.ClientPassword}.AsSha256Mechanism(), nil
	case MechScramSHA512:
		return scram.Auth{User: s.ClientUsername, Pass: s.ClientPassword}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("security: SASL mechanism %s is not supported by kraftd", s.ClientMechanism)
}

// SASLClient is the client side of SASL on one outbound connection, as pure
// steps the peer client drives: send Handshake(), hand its answer to
// OnHandshake, send the SaslAuthenticate it returns, hand each answer to
// OnAuthenticate until done. Kafka's client uses SaslHandshake v1 and
// SaslAuthenticate at the highest version both sides serve.
type SASLClient struct {
	mech    sasl.Mechanism
	host    string
	version int16 // SaslAuthenticate version
	session sasl.Session
	done    bool
}

// NewSASLClient starts an exchange with host (for mechanisms that use it)
// with SaslAuthenticate at authVersion.
func NewSASLClient(m sasl.Mechanism, host string, authVersion int16) *SASLClient {
	return &SASLClient{mech: m, host: host, version: authVersion}
}

// Handshake is the first request.
func (c *SASLClient) Handshake() *kmsg.SASLHandshakeRequest {
	return &kmsg.SASLHandshakeRequest{Version: 1, Mechanism: c.mech.Name()}
}

// OnHandshake checks the handshake answer and returns the first
// SaslAuthenticate request.
func (c *SASLClient) OnHandshake(ctx context.Context, resp *kmsg.SASLHandshakeResponse) (*kmsg.SASLAuthenticateRequest, error) {
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		if errors.Is(err, kerr.UnsupportedSaslMechanism) {
			return nil, fmt.Errorf("security: the server does not enable SASL mechanism %s (it enables %v): %w", c.mech.Name(), resp.SupportedMechanisms, err)
		}
		return nil, fmt.Errorf("security: SaslHandshake: %w", err)
	}
	s, first, err := c.mech.Authenticate(ctx, c.host)
	if err != nil {
		return nil, fmt.Errorf("security: SASL %s: %w", c.mech.Name(), err)
	}
	c.session = s
	return &kmsg.SASLAuthenticateRequest{Version: c.version, SASLAuthBytes: first}, nil
}

// OnAuthenticate handles a SaslAuthenticate answer. It returns the next
// request, or done with the session lifetime the server granted (0: no
// re-authentication needed).
func (c *SASLClient) OnAuthenticate(resp *kmsg.SASLAuthenticateResponse) (next *kmsg.SASLAuthenticateRequest, done bool, lifetime time.Duration, err error) {
	if c.session == nil || c.done {
		return nil, false, 0, errors.New("security: SaslAuthenticate answer out of turn")
	}
	if e := kerr.ErrorForCode(resp.ErrorCode); e != nil {
		msg := ""
		if resp.ErrorMessage != nil {
			msg = ": " + *resp.ErrorMessage
		}
		return nil, false, 0, fmt.Errorf("security: SASL %s authentication failed%s: %w", c.mech.Name(), msg, e)
	}
	fin, out, err := c.session.Challenge(resp.SASLAuthBytes)
	if err != nil {
		return nil, false, 0, fmt.Errorf("security: SASL %s: %w", c.mech.Name(), err)
	}
	if fin {
		c.done = true
		return nil, true, time.Duration(max(resp.SessionLifetimeMillis, 0)) * time.Millisecond, nil
	}
	return &kmsg.SASLAuthenticateRequest{Version: c.version, SASLAuthBytes: out}, false, 0, nil
}

// ReauthDelay is when a client re-authenticates within a session lifetime:
// at a random 85% to 95% of it, as Kafka's SaslClientAuthenticator (spread
// so many connections do not re-authenticate at once). 0 means never.
func ReauthDelay(lifetime time.Duration, r *rand.Rand) time.Duration {
	if lifetime <= 0 {
		return 0
	}
	f := 0.85 + 0.10*r.Float64()
	return time.Duration(float64(lifetime) * f)
}
