package security

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kraftd/kraftd/internal/testenv"
)

// keytool finds Java's keytool as the interop tests find java: beside
// $KRAFTD_JAVA, in $JAVA_HOME/bin, then on PATH.
func keytool(t *testing.T) string {
	t.Helper()
	var candidates []string
	if j := os.Getenv("KRAFTD_JAVA"); j != "" {
		candidates = append(candidates, filepath.Join(filepath.Dir(j), "keytool"))
	}
	if h := os.Getenv("JAVA_HOME"); h != "" {
		candidates = append(candidates, filepath.Join(h, "bin", "keytool"))
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	p, err := exec.LookPath("keytool")
	if err != nil {
		testenv.Skip(t, "keytool (Java) not found: the keytool key store tests need a JDK")
	}
	return p
}

// keytoolStores makes, with keytool only, a CA and key and trust stores as
// an operator following Kafka's security guide would: a JKS server key
// store with its own key password, a PKCS12 client key store, and JKS and
// PKCS12 trust stores holding the CA.
func keytoolStores(t *testing.T) (dir string) {
	kt := keytool(t)
	dir = t.TempDir()
	var mu sync.Mutex
	var failures []string
	run := func(args ...string) bool {
		// C1-only JIT and the serial GC start the JVM about 3x faster.
		cmd := exec.Command(kt, append([]string{"-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			mu.Lock()
			failures = append(failures, fmt.Sprintf("keytool %s: %v\n%s", strings.Join(args, " "), err, out))
			mu.Unlock()
			return false
		}
		return true
	}
	const san = "SAN=dns:localhost,ip:127.0.0.1"
	_ = run("-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=kraftd-test-ca", "-ext", "bc:c",
		"-validity", "2", "-keystore", "ca.p12", "-storetype", "PKCS12", "-storepass", "ca-pass") &&
		run("-exportcert", "-alias", "ca", "-keystore", "ca.p12", "-storepass", "ca-pass", "-rfc", "-file", "ca.crt")
	if len(failures) > 0 {
		t.Fatal(failures[0])
	}
	node := func(alias, store, storeType, storePass, keyPass string) {
		_ = run("-genkeypair", "-alias", alias, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN="+alias, "-validity", "2",
			"-keystore", store, "-storetype", storeType, "-storepass", storePass, "-keypass", keyPass) &&
			run("-certreq", "-alias", alias, "-keystore", store, "-storepass", storePass, "-keypass", keyPass, "-file", alias+".csr") &&
			run("-gencert", "-alias", "ca", "-keystore", "ca.p12", "-storepass", "ca-pass", "-infile", alias+".csr", "-outfile", alias+".crt",
				"-ext", san, "-validity", "2", "-rfc") &&
			run("-importcert", "-alias", "ca", "-file", "ca.crt", "-keystore", store, "-storepass", storePass, "-noprompt") &&
			run("-importcert", "-alias", alias, "-file", alias+".crt", "-keystore", store, "-storepass", storePass, "-keypass", keyPass)
	}
	var wg sync.WaitGroup
	for _, f := range []func(){
		func() { node("server", "server.jks", "JKS", "server-store-pass", "server-key-pass") },
		// keytool gives PKCS12 keys the store password.
		func() { node("client", "client.p12", "PKCS12", "client-pass", "client-pass") },
		func() {
			run("-importcert", "-alias", "ca", "-file", "ca.crt", "-keystore", "truststore.jks", "-storetype", "JKS", "-storepass", "trust-pass", "-noprompt")
		},
		func() {
			run("-importcert", "-alias", "ca", "-file", "ca.crt", "-keystore", "truststore.p12", "-storetype", "PKCS12", "-storepass", "trust-pass", "-noprompt")
		},
	} {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatal(strings.Join(failures, "\n"))
	}
	return dir
}

func TestKeytoolStores(t *testing.T) {
	dir := keytoolStores(t)
	path := func(n string) string { return filepath.Join(dir, n) }
	serverJKS := props{"ssl.keystore.location": path("server.jks"), "ssl.keystore.password": "server-store-pass", "ssl.key.password": "server-key-pass"}
	clientP12 := props{"ssl.keystore.type": "PKCS12", "ssl.keystore.location": path("client.p12"), "ssl.keystore.password": "client-pass"}
	trustJKS := props{"ssl.truststore.location": path("truststore.jks"), "ssl.truststore.password": "trust-pass"}
	trustP12 := props{"ssl.truststore.type": "PKCS12", "ssl.truststore.location": path("truststore.p12"), "ssl.truststore.password": "trust-pass"}
	merge := func(ps ...props) props {
		out := props{"ssl.client.auth": "required"}
		for _, p := range ps {
			for k, v := range p {
				out[k] = v
			}
		}
		return out
	}
	for name, pair := range map[string][2]props{
		"JKS server, PKCS12 trust; PKCS12 client, JKS trust": {merge(serverJKS, trustP12), merge(clientP12, trustJKS)},
		"JKS server, JKS trust; PKCS12 client, PKCS12 trust": {merge(serverJKS, trustJKS), merge(clientP12, trustP12)},
		// A JKS key store serves as a trust store too (its CA entry). A
		// PKCS12 file holding a key and trusted entries is read only for
		// its key entry's certificate (go-pkcs12 decodes no mixed store):
		// stricter than Java.
		"JKS key store as trust store": {merge(serverJKS, props{"ssl.truststore.location": path("server.jks"), "ssl.truststore.password": "server-store-pass"}),
			merge(clientP12, trustP12)},
	} {
		t.Run(name, func(t *testing.T) {
			for _, host := range []string{"localhost", "127.0.0.1"} {
				cliErr, srvErr, cs := handshake(t, material(t, pair[0], true, SSL), material(t, pair[1], false, SSL), host)
				if cliErr != nil || srvErr != nil {
					t.Fatalf("%s: client %v, server %v", host, cliErr, srvErr)
				}
				if cn := cs.PeerCertificates[0].Subject.CommonName; cn != "server" {
					t.Errorf("server certificate %s", cn)
				}
			}
		})
	}
	t.Run("wrong key password", func(t *testing.T) {
		l, err := ResolveServer(with(merge(serverJKS, trustJKS), "ssl.key.password", "nope"), "CONTROLLER", SSL)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewTLSMaterial(l.SSL, true, nil); err == nil || !strings.Contains(err.Error(), "wrong ssl.key.password") {
			t.Fatalf("error %v", err)
		}
	})
}
