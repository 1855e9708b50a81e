package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// Validity is how long certificates are valid; they start an hour in the past so that
// clock skew between processes does not matter.
const Validity = 24 * time.Hour

// CA is a self-signed certificate authority.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	// PEM is the CA certificate, a trust store's content.
	PEM string
}

var serial atomic.Int64

// NewCA makes a CA whose subject common name is name.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial.Add(1)), Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(Validity), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key, PEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}, nil
}

// Leaf is a certificate signed by a CA, with its key.
type Leaf struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	// CertPEM is the certificate; KeyPEM the unencrypted PKCS#8 key.
	CertPEM, KeyPEM string
}

// Issue signs a certificate for server and client use with common name cn and the given
// subject alternative names.
func (ca *CA) Issue(cn string, dns []string, ips []net.IP) (*Leaf, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial.Add(1)), Subject: pkix.Name{CommonName: cn},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(Validity), DNSNames: dns, IPAddresses: ips,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	p8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &Leaf{Cert: cert, Key: key,
		CertPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		KeyPEM:  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8}))}, nil
}

// IssueLocal issues a certificate for 127.0.0.1 and localhost.
func (ca *CA) IssueLocal(cn string) (*Leaf, error) {
	return ca.Issue(cn, []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")})
}

// Files are a CA's trust store and a leaf's key store written as PEM files, in the form
// Kafka's ssl.truststore.type=PEM and ssl.keystore.type=PEM read.
type Files struct {
	TrustStore string // the CA certificate
	KeyStore   string // the leaf's key, then its certificate
}

// WriteLocal makes a CA named name and a certificate for 127.0.0.1 it signs, and writes
// them to dir as <name>-ca.pem and <name>-node.pem (mode 0600).
func WriteLocal(dir, name string) (Files, error) {
	ca, err := NewCA(name + " test CA")
	if err != nil {
		return Files{}, err
	}
	leaf, err := ca.IssueLocal("controller")
	if err != nil {
		return Files{}, err
	}
	f := Files{TrustStore: filepath.Join(dir, name+"-ca.pem"), KeyStore: filepath.Join(dir, name+"-node.pem")}
	if err := os.WriteFile(f.TrustStore, []byte(ca.PEM), 0o600); err != nil {
		return Files{}, fmt.Errorf("testpki: %w", err)
	}
	if err := os.WriteFile(f.KeyStore, []byte(leaf.KeyPEM+leaf.CertPEM), 0o600); err != nil {
		return Files{}, fmt.Errorf("testpki: %w", err)
	}
	return f, nil
}
