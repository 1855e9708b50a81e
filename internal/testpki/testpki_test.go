package testpki

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"
)

func TestWriteLocalVerifies(t *testing.T) {
	dir := t.TempDir()
	f, err := WriteLocal(dir, "a")
	if err != nil {
		t.Fatal(err)
	}
	other, err := WriteLocal(dir, "b")
	if err != nil {
		t.Fatal(err)
	}
	key, _ := os.ReadFile(f.KeyStore)
	pair, err := tls.X509KeyPair(key, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		trust string
		ok    bool
	}{{f.TrustStore, true}, {other.TrustStore, false}} {
		ca, _ := os.ReadFile(c.trust)
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			t.Fatal("no CA in", c.trust)
		}
		for _, name := range []string{"127.0.0.1", "localhost"} {
			_, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
			if (err == nil) != c.ok {
				t.Errorf("verify %s against %s: %v, want ok=%v", name, c.trust, err, c.ok)
			}
		}
	}
	ca, _ := os.ReadFile(f.TrustStore)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "example.com"}); err == nil {
		t.Error("verified a name the certificate does not carry")
	}
}
