package interop

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kraftd/kraftd/protocol"
)

// probeConn speaks single requests on a raw connection, for the refusal probes.
type probeConn struct {
	nc   net.Conn
	br   *bufio.Reader
	corr int32
}

func (c *probeConn) roundTrip(req kmsg.Request) (kmsg.Response, error) {
	id := "probe"
	c.corr++
	if _, err := c.nc.Write(protocol.AppendRequest(nil, c.corr, &id, req)); err != nil {
		return nil, err
	}
	frame, err := protocol.ReadFrame(c.br, protocol.DefaultMaxFrameSize, nil)
	if err != nil {
		return nil, err
	}
	return protocol.ParseResponse(frame, req.Key(), req.GetVersion())
}

// closedAfter reports whether the server closes the connection within a few seconds.
func (c *probeConn) closedAfter() string {
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.br.ReadByte(); err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return "connection kept"
		}
		return "connection closed"
	}
	return "more data"
}

// authenticate runs SaslAuthenticate v2 rounds with franz-go's client mechanism.
func (c *probeConn) authenticate(mech, password string) string {
	var m sasl.Mechanism
	switch mech {
	case "PLAIN":
		m = plain.Auth{User: secureUser, Pass: password}.AsMechanism()
	case "SCRAM-SHA-256":
		m = scram.Auth{User: secureUser, Pass: password}.AsSha256Mechanism()
	default:
		m = scram.Auth{User: secureUser, Pass: password}.AsSha512Mechanism()
	}
	s, token, err := m.Authenticate(context.Background(), "127.0.0.1")
	if err != nil {
		return "client: " + err.Error()
	}
	for round := 1; round <= 3; round++ {
		resp, err := c.roundTrip(&kmsg.SASLAuthenticateRequest{Version: 2, SASLAuthBytes: token})
		if err != nil {
			return fmt.Sprintf("closed at SaslAuthenticate round %d", round)
		}
		ar := resp.(*kmsg.SASLAuthenticateResponse)
		if ar.ErrorCode != 0 {
			msg := ""
			if ar.ErrorMessage != nil {
				msg = *ar.ErrorMessage
			}
			return fmt.Sprintf("SaslAuthenticate error %d %q, %s", ar.ErrorCode, msg, c.closedAfter())
		}
		done, next, err := s.Challenge(ar.SASLAuthBytes)
		if err != nil {
			return "client: " + err.Error()
		}
		if done {
			if ar.SessionLifetimeMillis != 0 {
				return fmt.Sprintf("authenticated, session lifetime %d ms", ar.SessionLifetimeMillis)
			}
			return "authenticated"
		}
		token = next
	}
	return "exchange did not complete"
}
