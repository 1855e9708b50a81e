package security

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"github.com/youmark/pkcs8"
	"software.sslmate.com/src/go-pkcs12"
)

// maxStoreFile bounds what is read from a key or trust store file: real
// ones are a few KiB.
const maxStoreFile = 16 << 20

// jksMagic starts every JKS file. Java's keystore.type.compat (on by
// default) lets a store declared JKS hold PKCS12 and the reverse, so the
// format is taken from the bytes, not from ssl.keystore.type.
var jksMagic = []byte{0xfe, 0xed, 0xfe, 0xed}

func readStoreFile(key, path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if st.Size() > maxStoreFile {
		return nil, fmt.Errorf("%s: %s is %d bytes, more than a key store may have (%d)", key, path, st.Size(), maxStoreFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return b, nil
}

// loadKeyStore reads the node's certificate chains and keys. It returns
// none when no key store is configured (a client without a certificate).
func loadKeyStore(s *SSLSettings) ([]tls.Certificate, error) {
	if s.KeystoreType == StorePEM {
		var text string
		where := s.key("ssl.keystore.certificate.chain")
		switch {
		case s.KeystoreLocation != "":
			b, err := readStoreFile(s.key("ssl.keystore.location"), s.KeystoreLocation)
			if err != nil {
				return nil, err
			}
			text, where = string(b), s.key("ssl.keystore.location")+" "+s.KeystoreLocation
		case s.KeystoreCertificateChain != "":
			text = s.KeystoreCertificateChain + "\n" + s.KeystoreKey
		default:
			return nil, nil
		}
		c, err := pemKeyPair(text, s.KeyPassword)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		return []tls.Certificate{c}, nil
	}
	if s.KeystoreLocation == "" {
		return nil, nil
	}
	key := s.key("ssl.keystore.location")
	b, err := readStoreFile(key, s.KeystoreLocation)
	if err != nil {
		return nil, err
	}
	keyPass := s.KeyPassword
	if keyPass == "" {
		keyPass = s.KeystorePassword // Kafka's default for ssl.key.password
	}
	var certs []tls.Certificate
	if bytes.HasPrefix(b, jksMagic) {
		certs, err = jksKeyPairs(b, s.KeystorePassword, keyPass)
	} else {
		certs, err = pkcs12KeyPair(b, s.KeystorePassword, keyPass)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", key, s.KeystoreLocation, err)
	}
	return certs, nil
}

func jksKeyPairs(b []byte, storePass, keyPass string) ([]tls.Certificate, error) {
	ks := keystore.New()
	if err := ks.Load(bytes.NewReader(b), []byte(storePass)); err != nil {
		return nil, fmt.Errorf("JKS key store (wrong ssl.keystore.password?): %w", err)
	}
	var out []tls.Certificate
	for _, alias := range ks.Aliases() {
		if !ks.IsPrivateKeyEntry(alias) {
			continue
		}
		e, err := ks.GetPrivateKeyEntry(alias, []byte(keyPass))
		if err != nil {
			return nil, fmt.Errorf("JKS entry %q (wrong ssl.key.password?): %w", alias, err)
		}
		key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
		if err != nil {
			return nil, fmt.Errorf("JKS entry %q: private key: %w", alias, err)
		}
		var chain [][]byte
		for _, c := range e.CertificateChain {
			chain = append(chain, c.Content)
		}
		c, err := keyPair(chain, key)
		if err != nil {
			return nil, fmt.Errorf("JKS entry %q: %w", alias, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("JKS key store holds no private key entry")
	}
	return out, nil
}

func pkcs12KeyPair(b []byte, storePass, keyPass string) ([]tls.Certificate, error) {
	key, leaf, cas, err := pkcs12.DecodeChain(b, storePass)
	if err != nil && keyPass != storePass {
		// keytool writes PKCS12 keys under the store password, other tools
		// may use a separate key password.
		key, leaf, cas, err = pkcs12.DecodeChain(b, keyPass)
	}
	if err != nil {
		return nil, fmt.Errorf("PKCS12 key store (wrong ssl.keystore.password, or not one private key entry?): %w", err)
	}
	chain := [][]byte{leaf.Raw}
	for _, c := range cas {
		chain = append(chain, c.Raw)
	}
	c, err := keyPair(chain, key)
	if err != nil {
		return nil, err
	}
	return []tls.Certificate{c}, nil
}

// keyPair checks that key belongs to the first certificate of chain.
func keyPair(chain [][]byte, key any) (tls.Certificate, error) {
	if len(chain) == 0 {
		return tls.Certificate{}, errors.New("At least one certificate expected, but none found")
	}
	leaf, err := x509.ParseCertificate(chain[0])
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("certificate: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return tls.Certificate{}, fmt.Errorf("private key of type %T cannot sign", key)
	}
	type equaler interface{ Equal(crypto.PublicKey) bool }
	if pub, ok := signer.Public().(equaler); !ok || !pub.Equal(leaf.PublicKey) {
		return tls.Certificate{}, fmt.Errorf("private key does not match the certificate of %s", leaf.Subject)
	}
	return tls.Certificate{Certificate: chain, PrivateKey: key, Leaf: leaf}, nil
}

// loadTrustStore reads the certificates to trust; nil (no trust store)
// means the system's roots, as Java falls back to its cacerts.
func loadTrustStore(s *SSLSettings) (*x509.CertPool, error) {
	var certs []*x509.Certificate
	switch {
	case s.TruststoreType == StorePEM && s.TruststoreCertificates != "":
		cs, err := pemCertificates(s.TruststoreCertificates)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.key("ssl.truststore.certificates"), err)
		}
		certs = cs
	case s.TruststoreLocation == "":
		return nil, nil
	default:
		key := s.key("ssl.truststore.location")
		b, err := readStoreFile(key, s.TruststoreLocation)
		if err != nil {
			return nil, err
		}
		switch {
		case s.TruststoreType == StorePEM:
			certs, err = pemCertificates(string(b))
		case bytes.HasPrefix(b, jksMagic):
			certs, err = jksTrusted(b, s.TruststorePassword)
		default:
			certs, err = pkcs12Trusted(b, s.TruststorePassword)
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", key, s.TruststoreLocation, err)
		}
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// jksTrusted returns the trusted certificate entries and, as Java's
// TrustStoreUtil, the first certificate of each private key entry.
func jksTrusted(b []byte, pass string) ([]*x509.Certificate, error) {
	ks := keystore.New()
	if err := ks.Load(bytes.NewReader(b), []byte(pass)); err != nil {
		return nil, fmt.Errorf("JKS trust store (wrong ssl.truststore.password?): %w", err)
	}
	var out []*x509.Certificate
	for _, alias := range ks.Aliases() {
		var der []byte
		switch {
		case ks.IsTrustedCertificateEntry(alias):
			e, err := ks.GetTrustedCertificateEntry(alias)
			if err != nil {
				return nil, fmt.Errorf("JKS entry %q: %w", alias, err)
			}
			der = e.Certificate.Content
		case ks.IsPrivateKeyEntry(alias):
			chain, err := ks.GetPrivateKeyEntryCertificateChain(alias)
			if err != nil || len(chain) == 0 {
				continue
			}
			der = chain[0].Content
		default:
			continue
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, fmt.Errorf("JKS entry %q: %w", alias, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("JKS trust store holds no certificate")
	}
	return out, nil
}

func pkcs12Trusted(b []byte, pass string) ([]*x509.Certificate, error) {
	certs, err := pkcs12.DecodeTrustStore(b, pass)
	if err == nil && len(certs) > 0 {
		return certs, nil
	}
	// A key store used as trust store: its key entry's certificate.
	if _, leaf, _, err2 := pkcs12.DecodeChain(b, pass); err2 == nil {
		return []*x509.Certificate{leaf}, nil
	}
	if err == nil {
		err = errors.New("no trusted certificate entry")
	}
	return nil, fmt.Errorf("PKCS12 trust store (wrong ssl.truststore.password?): %w", err)
}

// pemBlockRE finds PEM blocks as Kafka's PemStore does: tolerant of the
// missing line breaks a properties file's line continuations leave behind.
var pemBlockRE = regexp.MustCompile(`-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\s]*)-----END ([A-Z0-9 ]+)-----`)

type pemBlock struct {
	typ string
	der []byte
}

func pemBlocks(text string) ([]pemBlock, error) {
	var out []pemBlock
	for _, m := range pemBlockRE.FindAllStringSubmatch(text, -1) {
		if m[1] != m[3] {
			return nil, fmt.Errorf("PEM block BEGIN %s ends with END %s", m[1], m[3])
		}
		b64 := strings.Join(strings.Fields(m[2]), "")
		der, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, fmt.Errorf("PEM block %s: %w", m[1], err)
		}
		out = append(out, pemBlock{m[1], der})
	}
	return out, nil
}

func pemCertificates(text string) ([]*x509.Certificate, error) {
	blocks, err := pemBlocks(text)
	if err != nil {
		return nil, err
	}
	var out []*x509.Certificate
	for _, b := range blocks {
		if b.typ != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.der)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %w", len(out)+1, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("At least one certificate expected, but none found")
	}
	return out, nil
}

// pemKeyPair reads a certificate chain and a PKCS#8 private key (plain, or
// encrypted under keyPassword), the only key form Kafka's PEM store takes.
func pemKeyPair(text, keyPassword string) (tls.Certificate, error) {
	blocks, err := pemBlocks(text)
	if err != nil {
		return tls.Certificate{}, err
	}
	var chain [][]byte
	var key any
	for _, b := range blocks {
		switch b.typ {
		case "CERTIFICATE":
			chain = append(chain, b.der)
		case "PRIVATE KEY":
			if key != nil {
				return tls.Certificate{}, errors.New("more than one private key")
			}
			if keyPassword != "" {
				// Kafka decrypts the key whenever ssl.key.password is set
				// and so refuses a plain one.
				return tls.Certificate{}, errors.New("Invalid PEM keystore configs: ssl.key.password is set but the private key is not encrypted")
			}
			if key, err = x509.ParsePKCS8PrivateKey(b.der); err != nil {
				return tls.Certificate{}, fmt.Errorf("Private key could not be loaded: %w", err)
			}
		case "ENCRYPTED PRIVATE KEY":
			if key != nil {
				return tls.Certificate{}, errors.New("more than one private key")
			}
			if keyPassword == "" {
				return tls.Certificate{}, errors.New("the private key is encrypted: set ssl.key.password")
			}
			// PBES2 only (youmark/pkcs8): legacy PBES1 keys (openssl -v1),
			// which Kafka on Java 17 takes, are refused; Java 17 in turn
			// refuses PBES2 ("PBES2 SecretKeyFactory not available").
			if key, err = pkcs8.ParsePKCS8PrivateKey(b.der, []byte(keyPassword)); err != nil {
				if strings.Contains(err.Error(), "only PBES2") {
					return tls.Certificate{}, fmt.Errorf("Private key could not be loaded: kraftd decrypts PBES2 keys only (re-encrypt with openssl pkcs8 -topk8 -v2 aes-256-cbc, or use an unencrypted key or a JKS/PKCS12 store): %w", err)
				}
				return tls.Certificate{}, fmt.Errorf("Private key could not be loaded (wrong ssl.key.password?): %w", err)
			}
		case "RSA PRIVATE KEY", "EC PRIVATE KEY":
			return tls.Certificate{}, fmt.Errorf("%s is not PKCS#8; Kafka's PEM key store takes PKCS#8 keys only (convert with openssl pkcs8 -topk8)", b.typ)
		}
	}
	if key == nil {
		return tls.Certificate{}, errors.New("Private key not provided")
	}
	return keyPair(chain, key)
}
