package interop

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/internal/testenv"
	"github.com/kraftd/kraftd/security"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/youmark/pkcs8"
)

// kafkaSecurity runs testdata/KafkaSecurity.java with Kafka 4.4's jars; it
// skips without them.
func kafkaSecurity(t *testing.T) func(stdin string, args ...string) *exec.Cmd {
	t.Helper()
	run := javaProgram(t, "KafkaSecurity")
	return func(_ string, args ...string) *exec.Cmd { return run(args...) }
}

func unhex(t *testing.T, s string) string {
	t.Helper()
	if s == "-" {
		return "<null>"
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The JAAS parser against Kafka's own JaasConfig: the same entries, or
// the same error text; the two refusals of text Kafka accepts oddly are
// listed.
func TestJAASAgainstKafka(t *testing.T) {
	run := kafkaSecurity(t)
	cases := []string{
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret";`,
		`org.apache.kafka.common.security.scram.ScramLoginModule Required username=admin password='p"w';`,
		`m required a="x\"y\\z\n\t\101\7\q" b="";`,
		"// leading\nm /* inline */ optional k=\"v\";",
		"/* c */ m optional // to the end\n k=\"v\";",
		"m / x\n required k=v;",
		"m\n  required\n  k=\"v\"\n  ;",
		`m required k="1" k="2";`,
		`m required ключ="значение";`,
		`m required a.b-c$d_e="v" x=-y;`,
		`a required; b optional;`,
		"  ", "m", "m ;", "m mandatory;", `m required k="v"`, `m required k=;`, `m required k "v";`, `m required k=123;`,
		`m required k=-;`, `m required /* k="v";`, `123 required;`, `m required k="v;`,
		"m required k=\"v\n;", // Java ends the string at the line end
		`m required 1="v";`,   // Java stores the option under a null key
		"m required k=\"\\", `"quoted.Module" "required" k="v";`,
	}
	deliberate := map[int]bool{len(cases) - 4: true, len(cases) - 3: true}
	dir := t.TempDir()
	var files []string
	for i, c := range cases {
		f := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(f, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	out, err := run("", append([]string{"jaas"}, files...)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("%d answers for %d cases:\n%s", len(lines), len(cases), out)
	}
	for i, c := range cases {
		fields := strings.Fields(lines[i])
		es, ourErr := security.ParseJAAS(c)
		if fields[0] == "ERR" {
			javaMsg := unhex(t, fields[1])
			if ourErr == nil {
				t.Errorf("%q: Kafka refuses (%s), kraftd accepts %+v", c, javaMsg, es)
			} else if javaMsg != "<null>" && ourErr.Error() != javaMsg && !strings.HasPrefix(ourErr.Error(), "unterminated quoted string") {
				// kraftd names an unterminated quote; Kafka reports the
				// missing semicolon the quote swallowed.
				t.Errorf("%q: kraftd says %q, Kafka %q", c, ourErr, javaMsg)
			}
			continue
		}
		if ourErr != nil {
			if !deliberate[i] {
				t.Errorf("%q: Kafka accepts (%s), kraftd refuses: %v", c, lines[i], ourErr)
			}
			continue
		}
		var ours []string
		for _, e := range es {
			ours = append(ours, "E", hex.EncodeToString([]byte(e.LoginModule)), e.ControlFlag)
			var keys []string
			for k := range e.Options {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				ours = append(ours, hex.EncodeToString([]byte(k))+"="+hex.EncodeToString([]byte(e.Options[k])))
			}
		}
		if got, want := strings.Join(ours, " "), strings.Join(fields[1:], " "); got != want {
			t.Errorf("%q:\nkraftd %s\nKafka  %s", c, got, want)
		}
	}
}

// Credentials derived by kraftd equal Kafka's ScramFormatter's (what
// kafka-storage format --add-scram writes into UserScramCredentialRecord).
func TestScramCredentialAgainstKafka(t *testing.T) {
	run := kafkaSecurity(t)
	salt := []byte("0123456789abcdef0123456789abcdef")
	for _, mech := range []string{security.MechScramSHA256, security.MechScramSHA512} {
		c, err := security.NewScramCredential(mech, "pässword", salt, 4096)
		if err != nil {
			t.Fatal(err)
		}
		out, err := run("", "cred", mech, "pässword", hex.EncodeToString(salt), "4096").Output()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := hex.EncodeToString(c.StoredKey)+" "+hex.EncodeToString(c.ServerKey), strings.TrimSpace(string(out)); got != want {
			t.Errorf("%s: kraftd %s, Kafka %s", mech, got, want)
		}
	}
}

// Kafka's own ScramSaslClient authenticates to kraftd's Authenticator, and
// fails with Kafka's message on a wrong password.
func TestScramExchangeWithKafkaClient(t *testing.T) {
	run := kafkaSecurity(t)
	store := security.NewScramStore()
	for _, mech := range []string{security.MechScramSHA256, security.MechScramSHA512} {
		c, err := security.NewScramCredential(mech, "alice-secret", nil, 8192)
		if err != nil {
			t.Fatal(err)
		}
		store.Put(mech, "alice", c)
	}
	cfg := &security.SASLServerConfig{Mechanisms: []string{security.MechScramSHA256, security.MechScramSHA512}, Scram: store, MaxReceiveSize: 1 << 19}
	for _, tt := range []struct{ mech, pass string }{
		{security.MechScramSHA256, "alice-secret"}, {security.MechScramSHA512, "alice-secret"}, {security.MechScramSHA512, "wrong"},
	} {
		t.Run(tt.mech+"/"+tt.pass, func(t *testing.T) {
			cmd := run("", "client", tt.mech, "alice", tt.pass)
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Wait()
			defer stdin.Close()
			lines := bufio.NewScanner(stdout)
			a := security.NewAuthenticator(cfg)
			now := time.Now()
			if out := a.Request(17, 1, &kmsg.SASLHandshakeRequest{Version: 1, Mechanism: tt.mech}, now); out.Action != security.Respond {
				t.Fatalf("handshake %+v", out)
			}
			for range 4 {
				if !lines.Scan() {
					t.Fatal("Kafka's client ended early")
				}
				if lines.Text() == "DONE" {
					if tt.pass != "alice-secret" || !a.Authenticated() || a.Principal() != "alice" {
						t.Fatalf("Kafka's client done, server authenticated=%v", a.Authenticated())
					}
					return
				}
				msg, err := hex.DecodeString(lines.Text())
				if err != nil {
					t.Fatal(err)
				}
				out := a.Request(36, 2, &kmsg.SASLAuthenticateRequest{Version: 2, SASLAuthBytes: msg}, now)
				r := out.Response.(*kmsg.SASLAuthenticateResponse)
				if r.ErrorCode != 0 {
					want := "Authentication failed during authentication due to invalid credentials with SASL mechanism " + tt.mech
					if tt.pass == "alice-secret" || r.ErrorCode != kerr.SaslAuthenticationFailed.Code || *r.ErrorMessage != want {
						t.Fatalf("answer %+v", r)
					}
					return
				}
				fmt.Fprintln(stdin, hex.EncodeToString(r.SASLAuthBytes))
			}
			t.Fatal("exchange did not end")
		})
	}
}

// Kafka 4.4 controllers take SCRAM credentials from UserScramCredentialRecords
// that kafka-storage format --add-scram writes into the bootstrap snapshot:
// a ScramStore filled from that snapshot authenticates the formatted user.
func TestScramFromKafkaStorageFormat(t *testing.T) {
	env := kafkatest.Require(t)
	dir := t.TempDir()
	logDir := filepath.Join(dir, "log")
	props := kafkatest.Props{
		"process.roles": "controller", "node.id": "1", "controller.quorum.voters": "1@localhost:9093",
		"listeners": "CONTROLLER://localhost:9093", "controller.listener.names": "CONTROLLER",
		"listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT", "log.dirs": logDir,
	}
	cfgPath := filepath.Join(dir, "server.properties")
	if err := props.WriteFile(cfgPath); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := env.StorageFormat(ctx, cfgPath, kafkatest.NewUUID(),
		"--add-scram", "SCRAM-SHA-512=[name=alice,password=alice-secret]",
		"--add-scram", "SCRAM-SHA-256=[name=bob,iterations=8192,password=bob-secret]"); err != nil {
		t.Fatalf("format: %v\n%s", err, out)
	}
	snap, err := os.ReadFile(filepath.Join(logDir, "__cluster_metadata-0", "00000000000000000000-0000000000.checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	store := security.NewScramStore()
	n, err := store.ApplyBatches(snap)
	if err != nil || n != 2 {
		t.Fatalf("applied %d SCRAM records: %v", n, err)
	}
	if c, ok := store.Get(security.MechScramSHA256, "bob"); !ok || c.Iterations != 8192 {
		t.Fatalf("bob: %+v %v", c, ok)
	}
	cfg := &security.SASLServerConfig{Mechanisms: []string{security.MechScramSHA256, security.MechScramSHA512}, Scram: store, MaxReceiveSize: 1 << 19}
	for _, tt := range []struct{ mech, user, pass string }{
		{security.MechScramSHA512, "alice", "alice-secret"}, {security.MechScramSHA256, "bob", "bob-secret"},
	} {
		a := security.NewAuthenticator(cfg)
		m, err := security.ClientMechanism(&security.SASLSettings{ClientMechanism: tt.mech, ClientUsername: tt.user, ClientPassword: tt.pass})
		if err != nil {
			t.Fatal(err)
		}
		c := security.NewSASLClient(m, "localhost", 2)
		hs := c.Handshake()
		out := a.Request(17, 1, hs, time.Now())
		req, err := c.OnHandshake(ctx, out.Response.(*kmsg.SASLHandshakeResponse))
		if err != nil {
			t.Fatal(err)
		}
		for !a.Authenticated() {
			out = a.Request(36, 2, req, time.Now())
			next, done, _, err := c.OnAuthenticate(out.Response.(*kmsg.SASLAuthenticateResponse))
			if err != nil {
				t.Fatalf("%s: %v", tt.user, err)
			}
			if done {
				break
			}
			req = next
		}
		if a.Principal() != tt.user {
			t.Errorf("principal %q", a.Principal())
		}
	}
}

// PEM key stores with plain and encrypted PKCS#8 keys: kraftd loads
// exactly those Kafka's DefaultSslEngineFactory loads. Keys come from Go
// (youmark/pkcs8, PBES2) and, in a subtest that needs openssl, from openssl
// in the PBES2 and legacy PBES1 forms.
func TestPEMKeysAgainstKafka(t *testing.T) {
	run := kafkaSecurity(t)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "node"}, DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	chain := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	plainDER, _ := x509.MarshalPKCS8PrivateKey(key)
	plainPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: plainDER}))
	encDER, err := pkcs8.MarshalPrivateKey(key, []byte("key-pass"), nil)
	if err != nil {
		t.Fatal(err)
	}
	comparePEMKeys(t, run, chain, map[string]string{
		"plain":      plainPEM,
		"go PBES2":   string(pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: encDER})),
		"PKCS#1 EC":  ecKeyPEM(t, key),
		"no key":     "",
		"not base64": "-----BEGIN PRIVATE KEY-----\n@@@@\n-----END PRIVATE KEY-----\n",
	})
	t.Run("openssl", func(t *testing.T) {
		openssl, err := exec.LookPath("openssl")
		if err != nil {
			testenv.Skip(t, "openssl not installed: the openssl key forms need it (Debian: apt-get install openssl)")
		}
		plainFile := filepath.Join(t.TempDir(), "plain.pem")
		if err := os.WriteFile(plainFile, []byte(plainPEM), 0o600); err != nil {
			t.Fatal(err)
		}
		keys := map[string]string{}
		for name, args := range map[string][]string{
			"openssl PBES2 AES-256": {"-v2", "aes-256-cbc"},
			"openssl PBES1 3DES":    {"-v1", "PBE-SHA1-3DES"},
		} {
			out, err := exec.Command(openssl, append([]string{"pkcs8", "-topk8", "-in", plainFile, "-passout", "pass:key-pass"}, args...)...).Output()
			if err != nil {
				t.Fatalf("openssl %s: %v", name, err)
			}
			keys[name] = string(out)
		}
		comparePEMKeys(t, run, chain, keys)
	})
}

// comparePEMKeys asks Kafka's DefaultSslEngineFactory (one JVM for all) and kraftd to load
// each key with chain under three passwords, and compares what each accepts.
func comparePEMKeys(t *testing.T, run func(stdin string, args ...string) *exec.Cmd, chain string, keys map[string]string) {
	t.Helper()
	dir := t.TempDir()
	type pemCase struct{ name, key, pass string }
	var cases []pemCase
	args := []string{"pem"}
	chainFile := filepath.Join(dir, "chain")
	if err := os.WriteFile(chainFile, []byte(chain), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, k := range keys {
		for _, pass := range []string{"key-pass", "wrong", ""} {
			keyFile := filepath.Join(dir, fmt.Sprintf("key%d", len(cases)))
			if err := os.WriteFile(keyFile, []byte(k), 0o600); err != nil {
				t.Fatal(err)
			}
			cases = append(cases, pemCase{name, k, pass})
			args = append(args, chainFile, keyFile, pass)
		}
	}
	out, err := run("", args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	answers := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(answers) != len(cases) {
		t.Fatalf("%d answers for %d cases", len(answers), len(cases))
	}
	for i, c := range cases {
		kafka := answers[i]
		kafkaOK := strings.HasPrefix(kafka, "OK")
		p := mapProps{"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": chain, "ssl.keystore.key": c.key}
		if c.pass != "" {
			p["ssl.key.password"] = c.pass
		}
		l, ourErr := security.ResolveServer(p, "CONTROLLER", security.SSL)
		if ourErr == nil {
			_, ourErr = security.NewTLSMaterial(l.SSL, true, nil)
		}
		// Known differences, both in the encryption of the key: kraftd
		// decrypts PBES2 only; Kafka on Java 17 PBES1 only.
		if !kafkaOK && ourErr == nil && strings.Contains(kafka, "PBES2 SecretKeyFactory not available") {
			t.Logf("%s: Kafka's JVM cannot decrypt PBES2; kraftd can", c.name)
			continue
		}
		if kafkaOK && ourErr != nil && strings.Contains(ourErr.Error(), "kraftd decrypts PBES2 keys only") {
			t.Logf("%s: kraftd refuses a PBES1 key that Kafka takes", c.name)
			continue
		}
		if kafkaOK != (ourErr == nil) {
			t.Errorf("%s, password %q: Kafka %s; kraftd %v", c.name, c.pass, kafka, ourErr)
		}
	}
}

func ecKeyPEM(t *testing.T, k *ecdsa.PrivateKey) string {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
}
