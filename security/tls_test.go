package security

import (
	"crypto/tls"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// handshake runs a TLS handshake between the two materials over a pipe and
// returns the client's and the server's errors and the client's view.
func handshake(t *testing.T, server, client *TLSMaterial, host string) (cliErr, srvErr error, cs tls.ConnectionState) {
	t.Helper()
	// Loopback TCP rather than net.Pipe: a refusing side writes an alert
	// the other may never read, which would block an unbuffered pipe.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	b, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	a, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_ = a.SetDeadline(time.Now().Add(10 * time.Second))
	_ = b.SetDeadline(time.Now().Add(10 * time.Second))
	srv := tls.Server(a, server.ServerConfig())
	cli := tls.Client(b, client.ClientConfig(host))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		srvErr = srv.Handshake()
		if srvErr == nil {
			// TLS 1.3 reports a refused client certificate on the first read.
			_ = srv.SetReadDeadline(time.Now().Add(2 * time.Second))
			_, srvErr = srv.Read(make([]byte, 1))
		}
		srv.Close()
	}()
	cliErr = cli.Handshake()
	if cliErr == nil {
		_, cliErr = cli.Write([]byte{1})
		if cliErr == nil {
			_ = cli.SetReadDeadline(time.Now().Add(2 * time.Second))
			_, err := cli.Read(make([]byte, 1))
			if err != nil && !strings.Contains(err.Error(), "EOF") && !strings.Contains(err.Error(), "closed") {
				cliErr = err
			}
		}
		cs = cli.ConnectionState()
	}
	cli.Close()
	wg.Wait()
	return cliErr, srvErr, cs
}

// pemSide is a node with a PEM key store file and a PEM trust store file.
func pemSide(t *testing.T, dir, name string, c *testCert, trust ...*testCA) props {
	p := props{"ssl.keystore.type": "PEM", "ssl.truststore.type": "PEM"}
	if c != nil {
		p["ssl.keystore.location"] = writeFile(t, dir, name+"-ks.pem", []byte(c.keyPEM(t, "")+certPEM(c.cert)+certPEM(c.ca.cert)))
	}
	var b strings.Builder
	for _, ca := range trust {
		b.WriteString(certPEM(ca.cert))
	}
	p["ssl.truststore.location"] = writeFile(t, dir, name+"-ts.pem", []byte(b.String()))
	return p
}

func material(t *testing.T, p props, server bool, proto Protocol) *TLSMaterial {
	t.Helper()
	var l *Listener
	var err error
	if server {
		l, err = ResolveServer(p, "CONTROLLER", proto)
	} else {
		l, err = ResolveClient(p, "CONTROLLER", proto)
	}
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewTLSMaterial(l.SSL, server, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestTLSHandshakes(t *testing.T) {
	ca, other := newCA(t, "ca"), newCA(t, "other-ca")
	server := ca.issue(t, "server", []string{"localhost", "127.0.0.1"}, false)
	client := ca.issue(t, "client", []string{"client"}, false)
	expired := ca.issue(t, "expired", []string{"localhost"}, true)
	strangerClient := other.issue(t, "stranger", nil, false)
	dir := t.TempDir()

	tests := []struct {
		name             string
		srv, cli         props
		host             string
		wantCli, wantSrv string // substrings of the errors; "" means success
	}{
		{name: "server auth", srv: pemSide(t, dir, "s1", server, ca), cli: pemSide(t, dir, "c1", nil, ca), host: "localhost"},
		{name: "IP SAN", srv: pemSide(t, dir, "s2", server, ca), cli: pemSide(t, dir, "c2", nil, ca), host: "127.0.0.1"},
		{name: "wrong host", srv: pemSide(t, dir, "s3", server, ca), cli: pemSide(t, dir, "c3", nil, ca), host: "other.example",
			wantCli: "certificate is valid for localhost", wantSrv: "bad certificate"},
		{name: "wrong host, identification off", srv: pemSide(t, dir, "s4", server, ca),
			cli: with(pemSide(t, dir, "c4", nil, ca), "ssl.endpoint.identification.algorithm", ""), host: "other.example"},
		{name: "identification off still checks the chain", srv: pemSide(t, dir, "s5", server, ca),
			cli: with(pemSide(t, dir, "c5", nil, other), "ssl.endpoint.identification.algorithm", ""), host: "localhost",
			wantCli: "certificate signed by unknown authority"},
		{name: "unknown CA", srv: pemSide(t, dir, "s6", server, ca), cli: pemSide(t, dir, "c6", nil, other), host: "localhost",
			wantCli: "certificate signed by unknown authority"},
		{name: "expired", srv: pemSide(t, dir, "s7", expired, ca), cli: pemSide(t, dir, "c7", nil, ca), host: "localhost",
			wantCli: "expired"},
		{name: "client auth required, no client certificate", srv: with(pemSide(t, dir, "s8", server, ca), "ssl.client.auth", "required"),
			cli: pemSide(t, dir, "c8", nil, ca), host: "localhost", wantCli: "certificate required", wantSrv: "client didn't provide a certificate"},
		{name: "client auth required", srv: with(pemSide(t, dir, "s9", server, ca), "ssl.client.auth", "required"),
			cli: pemSide(t, dir, "c9", client, ca), host: "localhost"},
		{name: "client auth required, client of another CA", srv: with(pemSide(t, dir, "s10", server, ca), "ssl.client.auth", "required"),
			cli: pemSide(t, dir, "c10", strangerClient, ca), host: "localhost", wantSrv: "unknown authority"},
		{name: "client auth requested, no certificate", srv: with(pemSide(t, dir, "s11", server, ca), "ssl.client.auth", "requested"),
			cli: pemSide(t, dir, "c11", nil, ca), host: "localhost"},
		{name: "client auth requested, bad certificate", srv: with(pemSide(t, dir, "s12", server, ca), "ssl.client.auth", "requested"),
			cli: pemSide(t, dir, "c12", strangerClient, ca), host: "localhost", wantSrv: "unknown authority"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cliErr, srvErr, _ := handshake(t, material(t, tt.srv, true, SSL), material(t, tt.cli, false, SSL), tt.host)
			if tt.wantCli == "" && tt.wantSrv == "" {
				if cliErr != nil || srvErr != nil {
					t.Errorf("client %v, server %v", cliErr, srvErr)
				}
				return
			}
			// The refusing side names the reason; the other sees an alert.
			check := func(side string, err error, want string) {
				if want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
					t.Errorf("%s: error %v, want %q", side, err, want)
				}
			}
			check("client", cliErr, tt.wantCli)
			check("server", srvErr, tt.wantSrv)
		})
	}
}

func with(p props, kv ...string) props {
	for i := 0; i+1 < len(kv); i += 2 {
		p[kv[i]] = kv[i+1]
	}
	return p
}

func TestTLSStoreFormats(t *testing.T) {
	ca := newCA(t, "ca")
	server := ca.issue(t, "server", []string{"localhost"}, false)
	dir := t.TempDir()
	inline := props{"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": certPEM(server.cert) + certPEM(ca.cert),
		"ssl.keystore.key": server.keyPEM(t, "k3y"), "ssl.key.password": "k3y"}
	// A properties line continuation leaves the PEM on one line.
	oneLine := props{"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": strings.ReplaceAll(certPEM(server.cert), "\n", " "),
		"ssl.keystore.key": strings.ReplaceAll(server.keyPEM(t, ""), "\n", "")}
	stores := map[string]props{
		"JKS with a key password": {"ssl.keystore.location": server.jksKeyStore(t, dir, "ks.jks", "storepw", "keypw"),
			"ssl.keystore.password": "storepw", "ssl.key.password": "keypw"},
		"PKCS12":                    {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": server.pkcs12KeyStore(t, dir, "ks.p12", "pw"), "ssl.keystore.password": "pw"},
		"PKCS12 declared JKS":       {"ssl.keystore.location": server.pkcs12KeyStore(t, dir, "ks2.p12", "pw"), "ssl.keystore.password": "pw"},
		"inline PEM, encrypted key": inline,
		"inline PEM on one line":    oneLine,
	}
	trusts := map[string]props{
		"JKS":        {"ssl.truststore.location": jksTrustStore(t, dir, "ts.jks", "tpw", ca), "ssl.truststore.password": "tpw"},
		"PKCS12":     {"ssl.truststore.type": "PKCS12", "ssl.truststore.location": pkcs12TrustStore(t, dir, "ts.p12", "tpw", ca), "ssl.truststore.password": "tpw"},
		"inline PEM": {"ssl.truststore.type": "PEM", "ssl.truststore.certificates": certPEM(ca.cert)},
	}
	for sn, sp := range stores {
		for tn, tp := range trusts {
			t.Run(sn+"/"+tn, func(t *testing.T) {
				cliErr, srvErr, _ := handshake(t, material(t, sp, true, SSL), material(t, tp, false, SSL), "localhost")
				if cliErr != nil || srvErr != nil {
					t.Errorf("client %v, server %v", cliErr, srvErr)
				}
			})
		}
	}
}

func TestTLSStoreErrors(t *testing.T) {
	ca := newCA(t, "ca")
	server := ca.issue(t, "server", []string{"localhost"}, false)
	dir := t.TempDir()
	jks := server.jksKeyStore(t, dir, "ks.jks", "storepw", "keypw")
	p12 := server.pkcs12KeyStore(t, dir, "ks.p12", "pw")
	tests := []struct {
		name string
		p    props
		want string
	}{
		{"JKS wrong store password", props{"ssl.keystore.location": jks, "ssl.keystore.password": "nope", "ssl.key.password": "keypw"}, "wrong ssl.keystore.password"},
		{"JKS wrong key password", props{"ssl.keystore.location": jks, "ssl.keystore.password": "storepw", "ssl.key.password": "nope"}, "wrong ssl.key.password"},
		{"PKCS12 wrong password", props{"ssl.keystore.location": p12, "ssl.keystore.password": "nope"}, "wrong ssl.keystore.password"},
		{"missing file", props{"ssl.keystore.location": dir + "/none.jks", "ssl.keystore.password": "x"}, "ssl.keystore.location: stat"},
		{"garbage file", props{"ssl.keystore.location": writeFile(t, dir, "garbage", []byte("not a store")), "ssl.keystore.password": "x"}, "ssl.keystore.location"},
		{"encrypted PEM without password", props{"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": certPEM(server.cert),
			"ssl.keystore.key": server.keyPEM(t, "k")}, "set ssl.key.password"},
		{"encrypted PEM wrong password", props{"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": certPEM(server.cert),
			"ssl.keystore.key": server.keyPEM(t, "k"), "ssl.key.password": "j"}, "Private key could not be loaded"},
		{"PEM key of another certificate", props{"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": certPEM(ca.cert),
			"ssl.keystore.key": server.keyPEM(t, "")}, "does not match the certificate"},
		{"PKCS#1 key", props{"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": certPEM(server.cert),
			"ssl.keystore.key": "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----"}, "not PKCS#8"},
		{"trust store wrong password", props{"ssl.keystore.location": p12, "ssl.keystore.password": "pw",
			"ssl.truststore.location": jksTrustStore(t, dir, "ts.jks", "tpw", ca), "ssl.truststore.password": "nope"}, "ssl.truststore.location"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := ResolveServer(tt.p, "CONTROLLER", SSL)
			if err == nil {
				_, err = NewTLSMaterial(l.SSL, true, nil)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			for _, pw := range []string{"storepw", "keypw", "nope"} {
				if strings.Contains(err.Error(), pw) {
					t.Errorf("error %q shows a password", err)
				}
			}
		})
	}
}

func TestTLSVersionsAndCiphers(t *testing.T) {
	ca := newCA(t, "ca")
	server := ca.issue(t, "server", []string{"localhost"}, false)
	dir := t.TempDir()
	srv := pemSide(t, dir, "s", server, ca)
	cli := pemSide(t, dir, "c", nil, ca)
	_, _, cs := handshake(t, material(t, srv, true, SSL), material(t, cli, false, SSL), "localhost")
	if cs.Version != tls.VersionTLS13 {
		t.Errorf("default version %x", cs.Version)
	}
	// ssl.protocol=TLSv1.2 on the client never negotiates 1.3 (Java's
	// SSLContext of that protocol).
	_, _, cs = handshake(t, material(t, srv, true, SSL), material(t, with(cli, "ssl.protocol", "TLSv1.2"), false, SSL), "localhost")
	if cs.Version != tls.VersionTLS12 {
		t.Errorf("ssl.protocol=TLSv1.2: version %x", cs.Version)
	}
	cli2 := pemSide(t, dir, "c2", nil, ca)
	_, _, cs = handshake(t, material(t, with(srv, "ssl.cipher.suites", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"), true, SSL), material(t, cli2, false, SSL), "localhost")
	if cs.Version != tls.VersionTLS12 || cs.CipherSuite != tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 {
		t.Errorf("TLS 1.2 suite only: version %x suite %x", cs.Version, cs.CipherSuite)
	}
	srv3 := pemSide(t, dir, "s3", server, ca)
	cliErr, _, _ := handshake(t, material(t, with(srv3, "ssl.enabled.protocols", "TLSv1.3"), true, SSL),
		material(t, with(pemSide(t, dir, "c3", nil, ca), "ssl.enabled.protocols", "TLSv1.2"), false, SSL), "localhost")
	if cliErr == nil || !strings.Contains(cliErr.Error(), "protocol version") {
		t.Errorf("1.3-only server, 1.2-only client: %v", cliErr)
	}
}

func TestTLSReload(t *testing.T) {
	ca := newCA(t, "ca")
	first := ca.issue(t, "first", []string{"localhost"}, false)
	second := ca.issue(t, "second", []string{"localhost"}, false)
	dir := t.TempDir()
	srvProps := pemSide(t, dir, "s", first, ca)
	var logs []string
	l, err := ResolveServer(srvProps, "CONTROLLER", SSL)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewTLSMaterial(l.SSL, true, func(f string, a ...any) { logs = append(logs, f) })
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	srv.now = func() time.Time { return now }
	cli := material(t, pemSide(t, dir, "c", nil, ca), false, SSL)
	peer := func() string {
		t.Helper()
		cliErr, srvErr, cs := handshake(t, srv, cli, "localhost")
		if cliErr != nil || srvErr != nil {
			t.Fatalf("client %v, server %v", cliErr, srvErr)
		}
		return cs.PeerCertificates[0].Subject.CommonName
	}
	if got := peer(); got != "first" {
		t.Fatalf("peer %s", got)
	}
	ks := srvProps["ssl.keystore.location"]
	if err := os.WriteFile(ks, []byte(second.keyPEM(t, "")+certPEM(second.cert)), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := peer(); got != "first" {
		t.Errorf("reloaded within the interval: %s", got)
	}
	now = now.Add(ReloadInterval)
	if got := peer(); got != "second" {
		t.Errorf("not reloaded after the interval: %s", got)
	}
	// A broken file keeps the old material and logs once.
	if err := os.WriteFile(ks, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		now = now.Add(ReloadInterval)
		if got := peer(); got != "second" {
			t.Errorf("a broken store replaced the material: %s", got)
		}
	}
	failures := 0
	for _, l := range logs {
		if strings.Contains(l, "not reloaded") {
			failures++
		}
	}
	if failures != 1 {
		t.Errorf("%d failure lines, want 1: %q", failures, logs)
	}
}

// A plaintext Kafka client on an SSL port: the handshake fails with the
// text the refusal log line carries, and a TLS client on a plaintext port
// is recognisable from its first bytes.
func TestPlaintextOnTLSPort(t *testing.T) {
	ca := newCA(t, "ca")
	server := ca.issue(t, "server", []string{"localhost"}, false)
	m := material(t, pemSide(t, t.TempDir(), "s", server, ca), true, SSL)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	errc := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			errc <- err
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		errc <- tls.Server(c, m.ServerConfig()).Handshake()
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// An ApiVersions v3 request frame, as a plaintext Kafka client sends first.
	frame := []byte{0, 0, 0, 0x20, 0, 18, 0, 3, 0, 0, 0, 1, 0, 6, 'k', 'r', 'a', 'f', 't', 'd', 0, 5, 'k', 'a', 'f', 'k', 'a', 4, '4', '.', '4', 0, 0, 0}
	if _, err := c.Write(frame); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "first record does not look like a TLS handshake") {
		t.Errorf("server: %v", err)
	}
	if LooksLikeTLS(frame) || !LooksLikeTLS([]byte{0x16, 0x03, 0x01, 0x02, 0x00}) {
		t.Error("LooksLikeTLS")
	}
}

// Handshakes racing with store rewrites always see a whole old or new
// material (run under -race).
func TestTLSReloadConcurrent(t *testing.T) {
	ca := newCA(t, "ca")
	certs := []*testCert{ca.issue(t, "a", []string{"localhost"}, false), ca.issue(t, "b", []string{"localhost"}, false)}
	dir := t.TempDir()
	p := pemSide(t, dir, "s", certs[0], ca)
	srv := material(t, p, true, SSL)
	srv.interval = 0
	cli := material(t, pemSide(t, dir, "c", nil, ca), false, SSL)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			c := certs[i%2]
			tmp := p["ssl.keystore.location"] + ".tmp"
			_ = os.WriteFile(tmp, []byte(c.keyPEM(t, "")+certPEM(c.cert)), 0o600)
			_ = os.Rename(tmp, p["ssl.keystore.location"])
		}
	}()
	var hs sync.WaitGroup
	for range 4 {
		hs.Add(1)
		go func() {
			defer hs.Done()
			for range 10 {
				cliErr, srvErr, cs := handshake(t, srv, cli, "localhost")
				if cliErr != nil || srvErr != nil {
					t.Errorf("client %v, server %v", cliErr, srvErr)
					return
				}
				if cn := cs.PeerCertificates[0].Subject.CommonName; cn != "a" && cn != "b" {
					t.Errorf("peer %s", cn)
				}
			}
		}()
	}
	hs.Wait()
	close(stop)
	wg.Wait()
}
