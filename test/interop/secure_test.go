package interop

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/internal/testpki"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/security"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// Secure controller listeners: mixed quorums of kraftd and Kafka 4.4.0 controllers over
// SSL and SASL_SSL, from the same properties on every node. Certificates are made by the
// test (Go's crypto), never committed: one CA, one certificate for 127.0.0.1 that every
// node presents (server and client), and a second, unknown CA for the refusals.

const (
	secureUser     = "controller"
	securePassword = "controller-secret"
)

// testPKI is the test's PEM files.
type testPKI struct {
	dir                string
	caPEM, nodePEM     string // trust store; key store (key + chain)
	otherCA, otherNode string // an unknown CA and a certificate it signed
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	ours, err := testpki.WriteLocal(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	other, err := testpki.WriteLocal(dir, "other")
	if err != nil {
		t.Fatal(err)
	}
	return &testPKI{dir: dir, caPEM: ours.TrustStore, nodePEM: ours.KeyStore, otherCA: other.TrustStore, otherNode: other.KeyStore}
}

// tlsConfig is a Go client's view of the same material (for the refusal probes).
func (p *testPKI) tlsConfig(t *testing.T, caPath, nodePath, serverName string) *tls.Config {
	t.Helper()
	ca, err := os.ReadFile(caPath)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	node, err := os.ReadFile(nodePath)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(node, node)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, ServerName: serverName, MinVersion: tls.VersionTLS12}
}

// secureProps are the controller listener properties of a scenario, the same on every
// node: "SSL" (mutual TLS), or "SASL_SSL" (mutual TLS too) with mechanism mech between
// controllers and the mechanisms enabled (a JAAS entry each).
func secureProps(p *testPKI, proto, mech string, enabled []string) kafkatest.Props {
	props := kafkatest.Props{
		"listener.security.protocol.map": kafkatest.ControllerListener + ":" + proto,
		"ssl.keystore.type":              "PEM",
		"ssl.keystore.location":          p.nodePEM,
		"ssl.truststore.type":            "PEM",
		"ssl.truststore.location":        p.caPEM,
		"ssl.client.auth":                "required",
		// On SASL_SSL Kafka takes ssl.client.auth only listener-prefixed.
		"listener.name.controller.ssl.client.auth": "required",
	}
	if proto == "SASL_SSL" {
		props["sasl.enabled.mechanisms"] = strings.Join(enabled, ",")
		props["sasl.mechanism.controller.protocol"] = mech
		for _, m := range enabled {
			jaas := fmt.Sprintf(`org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";`, secureUser, securePassword)
			if m == "PLAIN" {
				jaas = fmt.Sprintf(`org.apache.kafka.common.security.plain.PlainLoginModule required username="%s" password="%s" user_%s="%s";`,
					secureUser, securePassword, secureUser, securePassword)
			}
			props["listener.name.controller."+strings.ToLower(m)+".sasl.jaas.config"] = jaas
		}
	}
	return props
}

// clientConfig writes a --command-config file for Kafka's tools.
func clientConfig(t *testing.T, p *testPKI, proto, mech string) string {
	t.Helper()
	props := kafkatest.Props{
		"security.protocol":       proto,
		"ssl.keystore.type":       "PEM",
		"ssl.keystore.location":   p.nodePEM,
		"ssl.truststore.type":     "PEM",
		"ssl.truststore.location": p.caPEM,
	}
	if proto == "SASL_SSL" {
		props["sasl.mechanism"] = mech
		module := "org.apache.kafka.common.security.scram.ScramLoginModule"
		if mech == "PLAIN" {
			module = "org.apache.kafka.common.security.plain.PlainLoginModule"
		}
		props["sasl.jaas.config"] = fmt.Sprintf(`%s required username="%s" password="%s";`, module, secureUser, securePassword)
	}
	path := filepath.Join(t.TempDir(), "client.properties")
	if err := props.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// secureScenario: the listener protocol, the mechanism between controllers, the tools'
// and probes' mechanism, and the mechanisms enabled.
type secureScenario struct {
	proto, mech, toolMech string
	enabled               []string
	long                  bool // kill -9 and SIGTERM of each side's leader
	// kraftdFormat: kraftd's dir formatted by kraftd's own format --add-scram (else
	// by Kafka's kafka-storage format).
	kraftdFormat bool
	// reauth sets connections.max.reauth.ms on every node (SASL_SSL): Kafka's clients
	// re-authenticate in-band with kraftd, kraftd's retire their sessions in time.
	reauth time.Duration
}

// formatArgs write a SCRAM credential into every node's bootstrap snapshot.
func (s secureScenario) formatArgs() []string {
	for _, m := range s.enabled {
		if strings.HasPrefix(m, "SCRAM") {
			return []string{"--add-scram", fmt.Sprintf("%s=[name=%s,password=%s]", m, secureUser, securePassword)}
		}
	}
	return nil
}

// TestSecureMixedQuorum: two Kafka 4.4.0 controllers and kraftd over SASL_SSL with mutual
// TLS (ssl.client.auth=required), PLAIN between controllers and SCRAM-SHA-512 enabled too
// (credentials written by kafka-storage format --add-scram on the JVM nodes, by kraftd's
// format --add-scram on kraftd's; the Long variant formats kraftd's dir with Kafka's
// tool): a kraftd leader is elected and followed, Kafka's kafka-metadata-quorum and kraftd's describe-quorum
// --command-config (SCRAM-SHA-512) describe it, each refusal is answered by kraftd as by a
// JVM controller, leadership goes back to Kafka, and the logs are identical.
//
// SCRAM between controllers: a Kafka 4.4 controller verifies SCRAM logins only once its
// metadata loader has published the image, which needs a high watermark, which needs a
// quorum: JVM controllers refuse each other's SCRAM logins from a cold start ("invalid
// credentials"), so SCRAM serves clients of the controller listener, not the quorum.
// kraftd accepts the bootstrap snapshot's credentials at once.
//
// Sessions last 5 s (connections.max.reauth.ms), a fraction of the run: the JVM
// controllers re-authenticate in-band on their connections to kraftd, and no node on
// either side finds a peer's session expired.
func TestSecureMixedQuorum(t *testing.T) {
	t.Parallel() // see interop/doc.go
	runSecureMixed(t, secureScenario{proto: "SASL_SSL", mech: "PLAIN", toolMech: "SCRAM-SHA-512", enabled: []string{"PLAIN", "SCRAM-SHA-512"},
		kraftdFormat: true, reauth: 5 * time.Second})
}

func runSecureMixed(t *testing.T, sc secureScenario) {
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	pki := newTestPKI(t)
	K, J := kafkatest.SideKraftd, kafkatest.SideKafka
	props := secureProps(pki, sc.proto, sc.mech, sc.enabled)
	var kraftdFormat []string
	if sc.kraftdFormat {
		kraftdFormat = sc.formatArgs()
	}
	log4j := kafkaRaftDebug
	if sc.reauth > 0 {
		props["connections.max.reauth.ms"] = fmt.Sprint(sc.reauth.Milliseconds())
		log4j = map[string]string{jvmProcessor: "DEBUG"}
		for k, v := range kafkaRaftDebug {
			log4j[k] = v
		}
	}
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{J, J, K}, Controllers: true,
		Props: props, KafkaFormatArgs: sc.formatArgs(), KraftdFormatArgs: kraftdFormat, ClientSecurity: harnessClient(t, props, sc.proto), KafkaLog4j: log4j})
	r := &mixedRun{t: t, q: q, hw: -1, led: map[int32]kafkatest.Side{}}
	start := time.Now()
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	took := r.elected("first election", start)
	t.Logf("%s/%s: first election: %s leads epoch %d, %v after the first start", sc.proto, sc.mech, r.label(r.leader), r.epoch, took.Round(time.Millisecond))
	// A JVM controller takes --add-scram credentials only from the log, where the first
	// active JVM controller writes its bootstrap records: until one has led, a JVM
	// controller refuses every SCRAM login (kraftd reads them from the bootstrap snapshot).
	if r.side(r.leader) == K {
		r.force(J)
	}
	config := clientConfig(t, pki, sc.proto, sc.toolMech)
	for attempt := 0; ; attempt++ {
		r.forceStable(K)
		if describeSecure(t, env, q, r.leader, config) {
			break
		}
		if attempt == 2 {
			t.Fatal("the kraftd leader lost its leadership before each describe")
		}
		r.elected("leadership moved before the describe", time.Now())
	}
	if sc.proto == "SASL_SSL" {
		compareRefusals(t, pki, sc, q.Node(1).Addr, q.Node(3).Addr)
	}
	if sc.reauth > 0 {
		// The JVM followers re-authenticate on their connections to the kraftd leader
		// near the end of a session: let a session pass before leadership moves on, so
		// checkReauth does not depend on how long the steps above took.
		if err := q.Node(3).Proc.WaitLog("SASL re-authenticated", 4*sc.reauth); err != nil {
			t.Logf("waiting for a re-authentication on kraftd node 3: %v", err)
		}
	}
	if sc.long {
		r.crashAny() // kraftd leader
		r.force(J)
		r.crashAny() // Kafka leader
		r.force(K)
		r.handover()
	}
	if r.side(r.leader) == K {
		r.handover() // a Kafka leader appends after kraftd's epoch
	}
	committed := r.caughtUp(r.hw)
	for _, id := range append(r.others(r.leader), r.leader) {
		if err := q.Stop(id); err != nil {
			t.Errorf("stop %s: %v", r.label(id), err)
		}
	}
	if sc.reauth > 0 {
		checkReauth(t, q)
	}
	checkMixedLogs(t, env, q, r.led, committed, true)
	keepLogs(t, q)
}

// jvmProcessor is the logger of Kafka's socket server processors, which log at DEBUG a
// connection closed because its SASL session expired.
const jvmProcessor = "kafka.network.Processor"

// checkReauth: kraftd served in-band re-authentications (from the JVM controllers, its only
// SASL clients for that long) and refused no expired session; no JVM controller closed an
// expired session (kraftd's clients retire theirs in time) or failed a re-authentication.
func checkReauth(t *testing.T, q *kafkatest.MixedRaft) {
	t.Helper()
	for _, n := range q.Nodes {
		logs := n.Logs()
		switch n.Side {
		case kafkatest.SideKraftd:
			if !strings.Contains(logs, "SASL re-authenticated") {
				t.Errorf("kraftd node %d served no in-band re-authentication", n.ID)
			}
			if strings.Contains(logs, "SASL session expired (connections.max.reauth.ms) without re-authentication") {
				t.Errorf("kraftd node %d found a peer's SASL session expired", n.ID)
			}
		case kafkatest.SideKafka:
			for _, bad := range []string{"Disconnecting expired channel", "Failed re-authentication"} {
				if strings.Contains(logs, bad) {
					t.Errorf("Kafka node %d logged %q", n.ID, bad)
				}
			}
		}
	}
}

// harnessClient is the client side of the controllers' own settings, for the harness's
// DescribeQuorum requests.
func harnessClient(t *testing.T, props kafkatest.Props, proto string) *security.ClientSide {
	t.Helper()
	p, _ := security.ParseProtocol(proto)
	l, err := security.ResolveClient(mapProps(props), kafkatest.ControllerListener, p)
	if err != nil {
		t.Fatal(err)
	}
	c, err := security.NewClientSide(l, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type mapProps map[string]string

func (m mapProps) Get(k string) (string, bool) { v, ok := m[k]; return v, ok }

// forceStable is force, then a wait for the JVM follower force restarted to fetch up to
// the leader's high watermark: a leader that hears from no majority for the check-quorum
// timeout (3 s) resigns, as Kafka's does, and a JVM restart on a loaded machine can take
// longer. When leadership moved meanwhile, it is forced again.
func (r *mixedRun) forceStable(want kafkatest.Side) {
	r.t.Helper()
	for attempt := 0; ; attempt++ {
		r.force(want)
		_, err := r.q.WaitCaughtUp(r.hw, mixedElectionWait)
		if l, e, ok := r.q.AgreedLeader(); err == nil && ok && l == r.leader && e == r.epoch {
			return
		}
		if attempt == 2 {
			r.t.Fatalf("no stable %s leader after 3 attempts", want)
		}
		r.elected("leadership moved after forcing", time.Now())
	}
}

// crashAny kills the leader with SIGKILL (a kraftd controller appends nothing of its own,
// so unlike crash it waits for no data), waits for the next leader and restarts the old.
func (r *mixedRun) crashAny() {
	r.t.Helper()
	old, oldEpoch := r.leader, r.epoch
	start := time.Now()
	r.q.Kill(old)
	took := r.elected(fmt.Sprintf("kill -9 of leader %s", r.label(old)), start)
	r.t.Logf("failover after kill -9: leader %s (epoch %d) -> %s (epoch %d) in %v", r.label(old), oldEpoch, r.label(r.leader), r.epoch, took.Round(time.Millisecond))
	r.q.Start(old)
}

// describeSecure runs kafka-metadata-quorum and kraftd's describe-quorum with
// --command-config against the leader; false when leadership moved meanwhile (a leader
// stalled past the check-quorum timeout on a loaded machine resigns).
func describeSecure(t *testing.T, env *kafkatest.Env, q *kafkatest.MixedRaft, leader int32, config string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := env.MetadataQuorum(ctx, q.Node(leader).Addr, "--command-config", config, "describe", "--status")
	if err != nil {
		t.Fatalf("kafka-metadata-quorum --command-config describe --status against %s node %d: %v", q.Node(leader).Side, leader, err)
	}
	st, err := kafkatest.ParseStatus(out)
	if err != nil {
		t.Fatal(err)
	}
	if l, _, ok := q.AgreedLeader(); st["LeaderId"] != fmt.Sprint(leader) && ok && l != leader {
		t.Logf("leadership moved from %d to %d before the describe", leader, l)
		return false
	}
	if st["LeaderId"] != fmt.Sprint(leader) || st["ClusterId"] != q.ClusterID(leader) {
		t.Errorf("kafka-metadata-quorum over the secure listener: leader %s of %s, want %d of %s\n%s", st["LeaderId"], st["ClusterId"], leader, q.ClusterID(leader), out)
	}
	t.Logf("kafka-metadata-quorum --command-config describe --status of %s leader %d:\n%s", q.Node(leader).Side, leader, out)
	ours, err := runController(t, kafkatest.BuildKraftd(t), "describe-quorum", "--bootstrap-controller", q.Node(leader).Addr, "--command-config", config, "--status")
	if err != nil {
		t.Fatalf("controller describe-quorum --command-config against %s node %d: %v", q.Node(leader).Side, leader, err)
	}
	st2, err := kafkatest.ParseStatus(ours)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ClusterId", "LeaderId", "LeaderEpoch", "CurrentVoters"} {
		if st[k] != st2[k] {
			t.Errorf("describe --status %s over the secure listener: Kafka %q, kraftd %q", k, st[k], st2[k])
		}
	}
	return true
}

// compareRefusals probes a JVM controller and kraftd with each failure and requires the
// same answer from both.
func compareRefusals(t *testing.T, pki *testPKI, sc secureScenario, jvm, kraftd string) {
	t.Helper()
	good := pki.tlsConfig(t, pki.caPEM, pki.nodePEM, "127.0.0.1")
	probes := []struct {
		name string
		run  func(addr string) string
	}{
		{"plaintext client on the SSL port", func(addr string) string { return probePlaintext(addr) }},
		{"client certificate of an unknown CA", func(addr string) string {
			return probeSASL(addr, pki.tlsConfig(t, pki.caPEM, pki.otherNode, "127.0.0.1"), sc.toolMech, securePassword, false)
		}},
		{"no client certificate (ssl.client.auth=required)", func(addr string) string {
			cfg := good.Clone()
			cfg.Certificates = nil
			return probeSASL(addr, cfg, sc.toolMech, securePassword, false)
		}},
		{"server certificate of an unknown CA", func(addr string) string {
			return probeSASL(addr, pki.tlsConfig(t, pki.otherCA, pki.nodePEM, "127.0.0.1"), sc.toolMech, securePassword, false)
		}},
		{"wrong host name", func(addr string) string {
			return probeSASL(addr, pki.tlsConfig(t, pki.caPEM, pki.nodePEM, "wrong.example.com"), sc.toolMech, securePassword, false)
		}},
		{"bad password", func(addr string) string { return probeSASL(addr, good, sc.toolMech, "wrong-password", false) }},
		{"bad PLAIN password", func(addr string) string { return probeSASL(addr, good, "PLAIN", "wrong-password", false) }},
		{"unsupported mechanism", func(addr string) string { return probeSASL(addr, good, "SCRAM-SHA-256", securePassword, false) }},
		{"raft request before authentication", func(addr string) string { return probeSASL(addr, good, sc.toolMech, securePassword, true) }},
		{"good credentials", func(addr string) string { return probeSASL(addr, good, sc.toolMech, securePassword, false) }},
	}
	for _, p := range probes {
		j, k := p.run(jvm), p.run(kraftd)
		t.Logf("%s: Kafka %q, kraftd %q", p.name, j, k)
		if j != k {
			t.Errorf("%s: Kafka answers %q, kraftd %q", p.name, j, k)
		}
	}
}

// probePlaintext sends ApiVersions in clear text to a TLS port.
func probePlaintext(addr string) string {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(15 * time.Second))
	id := "probe"
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "probe", "1"
	if _, err := nc.Write(protocol.AppendRequest(nil, 0, &id, req)); err != nil {
		return "closed"
	}
	if _, err := protocol.ReadFrame(bufio.NewReader(nc), protocol.DefaultMaxFrameSize, nil); err != nil {
		return "closed"
	}
	return "answered"
}

// probeSASL connects over TLS, runs ApiVersions and the SASL exchange (SaslHandshake v1,
// SaslAuthenticate v2; PLAIN or SCRAM through franz-go's mechanisms) and reports the
// first failure in a form both servers should share: which step, the error code, and
// whether the connection was closed. raftFirst sends a Vote before the handshake.
func probeSASL(addr string, cfg *tls.Config, mech, password string, raftFirst bool) string {
	nc, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return "TLS refused by the client"
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(15 * time.Second))
	c := &probeConn{nc: nc, br: bufio.NewReader(nc)}
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "probe", "1"
	if _, err := c.roundTrip(av); err != nil {
		return "closed at ApiVersions (TLS refused by the server)"
	}
	if raftFirst {
		v := kmsg.NewPtrVoteRequest()
		v.Version = 1
		if _, err := c.roundTrip(v); err != nil {
			return "closed at Vote"
		}
		return "Vote answered"
	}
	resp, err := c.roundTrip(&kmsg.SASLHandshakeRequest{Version: 1, Mechanism: mech})
	if err != nil {
		return "closed at SaslHandshake"
	}
	if hs := resp.(*kmsg.SASLHandshakeResponse); hs.ErrorCode != 0 {
		return fmt.Sprintf("SaslHandshake error %d, mechanisms %v, %s", hs.ErrorCode, hs.SupportedMechanisms, c.closedAfter())
	}
	return c.authenticate(mech, password)
}
