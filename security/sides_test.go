package security

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// One properties file, as every node of a quorum shares: a SASL_SSL
// controller listener with PLAIN, from which the listener and the
// outbound side are built.
func TestSidesFromOneProperties(t *testing.T) {
	ca := newCA(t, "ca")
	node := ca.issue(t, "node", []string{"localhost"}, false)
	dir := t.TempDir()
	p := pemSide(t, dir, "n", node, ca)
	with(p, "listener.name.controller.ssl.client.auth", "required",
		"sasl.enabled.mechanisms", "PLAIN", "sasl.mechanism.controller.protocol", "PLAIN",
		"listener.name.controller.plain.sasl.jaas.config", plainJAAS,
		"listener.name.controller.plain.connections.max.reauth.ms", "30000")
	ls, err := ResolveServer(p, "CONTROLLER", SASLSSL)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ResolveClient(p, "CONTROLLER", SASLSSL)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServerSide(ls, NewScramStore(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := NewClientSide(out, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if cliErr, srvErr, _ := handshake(t, srv.TLS, cli.TLS, "localhost"); cliErr != nil || srvErr != nil {
		t.Fatalf("TLS: client %v, server %v", cliErr, srvErr)
	}
	if srv.TLSConfig() == nil || cli.TLSConfig("localhost").ServerName != "localhost" {
		t.Error("TLS configs")
	}
	a := srv.NewAuthenticator()
	c := cli.NewSASLClient("localhost", 2)
	now := time.Now()
	o := a.Request(17, 1, c.Handshake(), now)
	req, err := c.OnHandshake(context.Background(), o.Response.(*kmsg.SASLHandshakeResponse))
	if err != nil {
		t.Fatal(err)
	}
	o = a.Request(36, 2, req, now)
	_, done, lifetime, err := c.OnAuthenticate(o.Response.(*kmsg.SASLAuthenticateResponse))
	if err != nil || !done || lifetime != 30*time.Second || a.Principal() != "admin" {
		t.Fatalf("done %v lifetime %v err %v principal %q", done, lifetime, err, a.Principal())
	}

	plain, err := NewServerSide(&Listener{Name: "P", Protocol: Plaintext}, nil, nil)
	if err != nil || plain.TLSConfig() != nil || plain.NewAuthenticator() != nil {
		t.Errorf("PLAINTEXT side %+v %v", plain, err)
	}
	pc, err := NewClientSide(&Listener{Name: "P", Protocol: Plaintext}, nil)
	if err != nil || pc.TLSConfig("h") != nil || pc.NewSASLClient("h", 2) != nil {
		t.Errorf("PLAINTEXT client side %+v %v", pc, err)
	}
}

func TestFailureLogRateLimits(t *testing.T) {
	var lines []string
	f := NewFailureLog(time.Minute, func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) })
	now := time.Unix(0, 0)
	err := errors.New("tls: first record does not look like a TLS handshake")
	for i := range 5 {
		f.Refused(fmt.Sprintf("10.0.0.1:%d", 5000+i), "CONTROLLER", err, now.Add(time.Duration(i)*time.Second))
	}
	f.Refused("10.0.0.2:1", "CONTROLLER", err, now)
	f.Refused("10.0.0.1:6000", "CONTROLLER", err, now.Add(time.Minute))
	want := []string{
		"listener CONTROLLER: connection from 10.0.0.1:5000 refused: tls: first record does not look like a TLS handshake",
		"listener CONTROLLER: connection from 10.0.0.2:1 refused: tls: first record does not look like a TLS handshake",
		"listener CONTROLLER: connection from 10.0.0.1:6000 refused: tls: first record does not look like a TLS handshake (4 more from 10.0.0.1 since the last line)",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s", strings.Join(lines, "\n"))
	}
	// Many peers do not grow the table without bound.
	for i := range 2 * maxFailurePeers {
		f.Refused(fmt.Sprintf("h%d:1", i), "C", err, now.Add(2*time.Minute))
	}
	if n := len(f.peers); n > maxFailurePeers {
		t.Errorf("%d peers kept", n)
	}
}

func TestOversized(t *testing.T) {
	a := NewAuthenticator(testServerConfig(t))
	if o := a.Oversized(1 << 20); o.Action != Close || !strings.HasPrefix(o.Err.Error(), "Failing SASL authentication due to invalid receive size") {
		t.Fatalf("%+v", o)
	}
}
