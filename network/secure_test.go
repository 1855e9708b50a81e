package network

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/internal/testpki"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/security"
)

type props map[string]string

func (p props) Get(k string) (string, bool) { v, ok := p[k]; return v, ok }

func newTestCA(t *testing.T) *testpki.CA {
	t.Helper()
	ca, err := testpki.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// sslProps are PEM key and trust stores of one node, mutual TLS required.
func sslProps(t *testing.T, ca *testpki.CA, proto string) props {
	leaf, err := ca.IssueLocal("node")
	if err != nil {
		t.Fatal(err)
	}
	return props{
		"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": leaf.CertPEM, "ssl.keystore.key": leaf.KeyPEM,
		"ssl.truststore.type": "PEM", "ssl.truststore.certificates": ca.PEM,
		"ssl.client.auth": "required", "listener.name.controller.ssl.client.auth": "required",
		"listener.security.protocol.map": "CONTROLLER:" + proto,
	}
}

func saslProps(p props, mech, user, pass string) props {
	p["sasl.enabled.mechanisms"] = mech
	p["sasl.mechanism.controller.protocol"] = mech
	module := security.ScramLoginModule
	extra := ""
	if mech == security.MechPlain {
		module = security.PlainLoginModule
		extra = ` user_` + user + `="` + pass + `"`
	}
	p["listener.name.controller."+strings.ToLower(mech)+".sasl.jaas.config"] = module + ` required username="` + user + `" password="` + pass + `"` + extra + ";"
	return p
}

func sides(t *testing.T, p props, proto security.Protocol, scram *security.ScramStore) (*security.ServerSide, *security.ClientSide) {
	t.Helper()
	sl, err := security.ResolveServer(p, "CONTROLLER", proto)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := security.NewServerSide(sl, scram, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := security.ResolveClient(p, "CONTROLLER", proto)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := security.NewClientSide(cl, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	return ss, cs
}

// countingHandler counts requests that reach it: none may before authentication.
type countingHandler struct{ n atomic.Int32 }

func (h *countingHandler) Handle(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	h.n.Add(1)
	echoHandler.Handle(c, hdr, req, respond)
}

// Peers reach a server over SSL (mutual TLS), SASL_SSL with PLAIN and with SCRAM-SHA-512,
// and SASL_PLAINTEXT; the raft request is answered by the handler.
func TestSecureServerAndPeers(t *testing.T) {
	ca := newTestCA(t)
	scram := security.NewScramStore()
	cred, err := security.NewScramCredential(security.MechScramSHA512, "s3cret", []byte("salt-salt-salt"), 4096)
	if err != nil {
		t.Fatal(err)
	}
	scram.Put(security.MechScramSHA512, "controller", cred)
	cases := []struct {
		name  string
		proto security.Protocol
		p     props
	}{
		{"SSL", security.SSL, sslProps(t, ca, "SSL")},
		{"SASL_SSL/PLAIN", security.SASLSSL, saslProps(sslProps(t, ca, "SASL_SSL"), security.MechPlain, "controller", "pw")},
		{"SASL_SSL/SCRAM-SHA-512", security.SASLSSL, saslProps(sslProps(t, ca, "SASL_SSL"), security.MechScramSHA512, "controller", "s3cret")},
		{"SASL_PLAINTEXT/SCRAM-SHA-512", security.SASLPlaintext, saslProps(props{"listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT"}, security.MechScramSHA512, "controller", "s3cret")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ss, cs := sides(t, tc.p, tc.proto, scram)
			h := &countingHandler{}
			_, addr := startServer(t, ServerConfig{Listeners: []ListenerConfig{{Name: "CONTROLLER", Addr: "127.0.0.1:0", Security: ss}}}, h)
			p := newTestPeers(t, PeerConfig{ClientID: "raft-client-2", Security: cs})
			p.SetAddress(1, addr)
			resp, err := sendSync(t, p, 1, voteRequest(7))
			if err != nil {
				t.Fatal(err)
			}
			if votePartition(resp) != 7 || h.n.Load() != 1 {
				t.Fatalf("partition %d, handler saw %d", votePartition(resp), h.n.Load())
			}
		})
	}
}

// Refusals: a plaintext client on an SSL port, a client of an unknown CA, a wrong
// password, an unsupported mechanism, a raft request before authentication. None reaches
// the handler, each closes the connection, and each is logged naming the peer.
func TestSecureRefusals(t *testing.T) {
	ca := newTestCA(t)
	p := saslProps(sslProps(t, ca, "SASL_SSL"), security.MechPlain, "controller", "pw")
	ss, cs := sides(t, p, security.SASLSSL, nil)
	lg, logs := observedLogger()
	h := &countingHandler{}
	// Every refusal logged (the default is one line per host per interval).
	refusals := security.NewFailureLog(0, func(format string, args ...any) { lg.Warn(fmt.Sprintf(format, args...)) })
	_, addr := startServer(t, ServerConfig{Logger: lg, Refusals: refusals, Listeners: []ListenerConfig{{Name: "CONTROLLER", Addr: "127.0.0.1:0", Security: ss}}}, h)

	t.Run("plaintext on SSL port", func(t *testing.T) {
		c := dialRaw(t, addr)
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 3
		req.ClientSoftwareName, req.ClientSoftwareVersion = "test", "1.0"
		c.send(1, req)
		c.expectClosed(testTimeout)
		waitLog(t, logs, "SSL handshake failed")
	})
	t.Run("unknown CA", func(t *testing.T) {
		other := newTestCA(t)
		q := sslProps(t, other, "SSL")
		_, badClient := sides(t, q, security.SSL, nil)
		peers := newTestPeers(t, PeerConfig{Security: badClient})
		peers.SetAddress(1, addr)
		if _, err := sendSync(t, peers, 1, voteRequest(1)); !errors.Is(err, kerr.BrokerNotAvailable) {
			t.Fatalf("err %v, want a failed handshake", err)
		}
	})
	for _, c := range []struct{ name, mech, pass, want string }{
		{"bad password", security.MechPlain, "wrong", "Invalid username or password"},
		{"unsupported mechanism", security.MechScramSHA256, "pw", "does not enable SASL mechanism"},
	} {
		c := c
		t.Run(c.name, func(t *testing.T) {
			q := saslProps(sslProps(t, ca, "SASL_SSL"), c.mech, "controller", c.pass)
			_, client := sides(t, q, security.SASLSSL, nil)
			peers := newTestPeers(t, PeerConfig{Security: client})
			peers.SetAddress(1, addr)
			_, err := sendSync(t, peers, 1, voteRequest(1))
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, kerr.BrokerNotAvailable) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
			waitLog(t, logs, "refused: "+map[string]string{"bad password": "Authentication failed", "unsupported mechanism": "Unsupported SASL mechanism SCRAM-SHA-256"}[c.name])
		})
	}
	t.Run("raft request before authentication", func(t *testing.T) {
		tlsConf := cs.TLSConfig("127.0.0.1")
		nc, err := tls.Dial("tcp", addr, tlsConf)
		if err != nil {
			t.Fatal(err)
		}
		c := &rawClient{t: t, nc: nc, br: bufio.NewReader(nc)}
		t.Cleanup(func() { nc.Close() })
		nc.SetDeadline(time.Now().Add(testTimeout))
		c.apiVersionsRoundTrip(1)
		c.send(2, voteRequest(3))
		c.expectClosed(testTimeout)
		waitLog(t, logs, "Unexpected Kafka request of type VOTE")
	})
	if n := h.n.Load(); n != 0 {
		t.Fatalf("%d requests reached the handler before authentication", n)
	}
}

// On a PLAINTEXT listener, SaslHandshake is answered with ILLEGAL_SASL_STATE, as Kafka's
// controller does.
func TestSaslHandshakeOnPlaintextListener(t *testing.T) {
	_, addr := startServer(t, ServerConfig{}, echoHandler)
	c := dialRaw(t, addr)
	c.send(1, &kmsg.SASLHandshakeRequest{Version: 1, Mechanism: "PLAIN"})
	resp := c.recv(1, int16(kmsg.SASLHandshake), 1).(*kmsg.SASLHandshakeResponse)
	if resp.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("error code %d", resp.ErrorCode)
	}
	c.apiVersionsRoundTrip(2)
}

// connections.max.reauth.ms: the server grants the session lifetime and closes a
// connection that sends a raft request after it; kraftd's peers replace their connection
// before the session ends, so requests keep succeeding.
func TestSecureSessionLifetime(t *testing.T) {
	p := saslProps(props{"listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT", "connections.max.reauth.ms": "600"},
		security.MechPlain, "controller", "pw")
	ss, cs := sides(t, p, security.SASLPlaintext, nil)
	lg, logs := observedLogger()
	refusals := security.NewFailureLog(0, func(format string, args ...any) { lg.Warn(fmt.Sprintf(format, args...)) })
	h := &countingHandler{}
	_, addr := startServer(t, ServerConfig{Logger: lg, Refusals: refusals, Listeners: []ListenerConfig{{Name: "CONTROLLER", Addr: "127.0.0.1:0", Security: ss}}}, h)

	peers := newTestPeers(t, PeerConfig{Security: cs, RequestTimeout: 200 * time.Millisecond})
	peers.SetAddress(1, addr)
	authenticated := func() int {
		n := 0
		for _, e := range logs.All() {
			if e.Message == "SASL authenticated" {
				n++
			}
		}
		return n
	}
	// Votes every 100 ms until the peer has authenticated a second connection: every
	// one of them must succeed across the replacement.
	deadline := time.Now().Add(testTimeout)
	for i := 0; authenticated() < 2; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("%d authentications in %v of 600 ms sessions: the peer kept its expired connection", authenticated(), testTimeout)
		}
		if _, err := sendSync(t, peers, 1, voteRequest(int32(i))); err != nil {
			t.Fatalf("vote %d: %v", i, err)
		}
		time.Sleep(100 * time.Millisecond) // the pace of the votes
	}

	// A raw client that lets its session expire is closed at its next request.
	nc, err := net.DialTimeout("tcp", addr, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(testTimeout))
	c := &rawClient{t: t, nc: nc, br: bufio.NewReader(nc)}
	c.apiVersionsRoundTrip(1)
	c.send(2, &kmsg.SASLHandshakeRequest{Version: 1, Mechanism: "PLAIN"})
	c.recv(2, int16(kmsg.SASLHandshake), 1)
	c.send(3, &kmsg.SASLAuthenticateRequest{Version: 2, SASLAuthBytes: []byte("\x00controller\x00pw")})
	ar := c.recv(3, int16(kmsg.SASLAuthenticate), 2).(*kmsg.SASLAuthenticateResponse)
	if ar.ErrorCode != 0 || ar.SessionLifetimeMillis <= 0 || ar.SessionLifetimeMillis > 600 {
		t.Fatalf("SaslAuthenticate: error %d, session lifetime %d ms", ar.ErrorCode, ar.SessionLifetimeMillis)
	}
	c.send(4, voteRequest(9))
	c.recv(4, int16(kmsg.Vote), 1)
	// The scenario: the session's lifetime passes without a request.
	time.Sleep(time.Duration(ar.SessionLifetimeMillis)*time.Millisecond + 100*time.Millisecond)
	c.send(5, voteRequest(10))
	c.expectClosed(testTimeout)
	waitLog(t, logs, "SASL session expired")
}

// SaslHandshake v0: the tokens travel as bare frames without Kafka headers, and the
// connection is served once authenticated.
func TestSecureHandshakeV0RawTokens(t *testing.T) {
	p := saslProps(props{"listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT"}, security.MechPlain, "controller", "pw")
	ss, _ := sides(t, p, security.SASLPlaintext, nil)
	h := &countingHandler{}
	_, addr := startServer(t, ServerConfig{Listeners: []ListenerConfig{{Name: "CONTROLLER", Addr: "127.0.0.1:0", Security: ss}}}, h)
	c := dialRaw(t, addr)
	c.send(1, &kmsg.SASLHandshakeRequest{Version: 0, Mechanism: "PLAIN"})
	if hs := c.recv(1, int16(kmsg.SASLHandshake), 0).(*kmsg.SASLHandshakeResponse); hs.ErrorCode != 0 {
		t.Fatalf("SaslHandshake v0: error %d", hs.ErrorCode)
	}
	token := []byte("\x00controller\x00pw")
	c.write(append([]byte{0, 0, 0, byte(len(token))}, token...))
	frame, err := protocol.ReadFrame(c.br, protocol.DefaultMaxFrameSize, nil)
	if err != nil || len(frame) != 0 {
		t.Fatalf("raw token answer %x, %v; want an empty frame", frame, err)
	}
	c.send(2, voteRequest(5))
	if got := votePartition(c.recv(2, int16(kmsg.Vote), 1)); got != 5 || h.n.Load() != 1 {
		t.Fatalf("vote after v0 authentication: partition %d, handler saw %d", got, h.n.Load())
	}
}
