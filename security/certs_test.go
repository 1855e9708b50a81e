package security

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"github.com/youmark/pkcs8"
	"software.sslmate.com/src/go-pkcs12"
)

// testCA is a certificate authority made by the test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// testCert is a leaf certificate with its key.
type testCert struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	ca   *testCA
}

var serial int64

func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return &testCA{cert: c, key: key}
}

// issue makes a leaf for hosts (DNS names or IPs); expired sets a validity
// that ended an hour ago.
func (ca *testCA) issue(t *testing.T, cn string, hosts []string, expired bool) *testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if expired {
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour)
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return &testCert{cert: c, key: key, ca: ca}
}

func certPEM(c *x509.Certificate) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
}

// keyPEM is the PKCS#8 key, encrypted when password is set.
func (c *testCert) keyPEM(t *testing.T, password string) string {
	t.Helper()
	if password == "" {
		der, err := x509.MarshalPKCS8PrivateKey(c.key)
		if err != nil {
			t.Fatal(err)
		}
		return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	}
	der, err := pkcs8.MarshalPrivateKey(c.key, []byte(password), nil)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: der}))
}

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// pkcs12KeyStore writes c (with its CA in the chain) as a PKCS12 file.
func (c *testCert) pkcs12KeyStore(t *testing.T, dir, name, password string) string {
	t.Helper()
	b, err := pkcs12.Modern.Encode(c.key, c.cert, []*x509.Certificate{c.ca.cert}, password)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, dir, name, b)
}

// jksKeyStore writes c as a JKS key store with a separate key password.
func (c *testCert) jksKeyStore(t *testing.T, dir, name, storePass, keyPass string) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(c.key)
	if err != nil {
		t.Fatal(err)
	}
	ks := keystore.New()
	err = ks.SetPrivateKeyEntry("node", keystore.PrivateKeyEntry{CreationTime: time.Now(), PrivateKey: der,
		CertificateChain: []keystore.Certificate{{Type: "X509", Content: c.cert.Raw}, {Type: "X509", Content: c.ca.cert.Raw}}}, []byte(keyPass))
	if err != nil {
		t.Fatal(err)
	}
	return writeJKS(t, ks, dir, name, storePass)
}

func writeJKS(t *testing.T, ks keystore.KeyStore, dir, name, pass string) string {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := ks.Store(f, []byte(pass)); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

func jksTrustStore(t *testing.T, dir, name, pass string, cas ...*testCA) string {
	t.Helper()
	ks := keystore.New()
	for i, ca := range cas {
		if err := ks.SetTrustedCertificateEntry("ca"+strings.Repeat("x", i), keystore.TrustedCertificateEntry{CreationTime: time.Now(),
			Certificate: keystore.Certificate{Type: "X509", Content: ca.cert.Raw}}); err != nil {
			t.Fatal(err)
		}
	}
	return writeJKS(t, ks, dir, name, pass)
}

func pkcs12TrustStore(t *testing.T, dir, name, pass string, cas ...*testCA) string {
	t.Helper()
	var certs []*x509.Certificate
	for _, ca := range cas {
		certs = append(certs, ca.cert)
	}
	b, err := pkcs12.Modern.EncodeTrustStore(certs, pass)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, dir, name, b)
}
