package security

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// tlsVersions maps ssl.enabled.protocols and ssl.protocol to Go's
// MinVersion/MaxVersion. ssl.protocol caps the version as Java's
// SSLContext.getInstance does (TLSv1.2 never negotiates 1.3); TLSv1 and
// TLSv1.1, disabled in Java 17's java.security, are skipped.
func tlsVersions(s *SSLSettings) (minV, maxV uint16, err error) {
	for _, p := range s.EnabledProtocols {
		var v uint16
		switch p {
		case "TLSv1.2":
			v = tls.VersionTLS12
		case "TLSv1.3":
			v = tls.VersionTLS13
		case "TLSv1", "TLSv1.1", "SSLv3", "SSLv2Hello":
			continue
		default:
			return 0, 0, fmt.Errorf("%s: unknown protocol %q (want TLSv1.2, TLSv1.3)", s.key("ssl.enabled.protocols"), p)
		}
		if minV == 0 || v < minV {
			minV = v
		}
		maxV = max(maxV, v)
	}
	if minV == 0 {
		return 0, 0, fmt.Errorf("%s: no usable protocol in %q (kraftd speaks TLSv1.2 and TLSv1.3)", s.key("ssl.enabled.protocols"), strings.Join(s.EnabledProtocols, ","))
	}
	switch s.Protocol {
	case "TLSv1.3", "TLS", "TLSv1.2":
		if s.Protocol == "TLSv1.2" {
			maxV = min(maxV, tls.VersionTLS12)
		}
	default:
		return 0, 0, fmt.Errorf("%s: %q is not supported (want TLSv1.3, TLSv1.2 or TLS)", s.key("ssl.protocol"), s.Protocol)
	}
	if minV > maxV {
		return 0, 0, fmt.Errorf("%s=%s allows none of %s=%s", s.key("ssl.protocol"), s.Protocol, s.key("ssl.enabled.protocols"), strings.Join(s.EnabledProtocols, ","))
	}
	return minV, maxV, nil
}

// cipherSuiteIDs maps ssl.cipher.suites (Java's names, which are IANA's) to
// Go's ids. Go always offers all three TLS 1.3 suites; they are accepted
// and used to bound the versions (see applyCiphers). Insecure suites and
// names Go does not know are refused.
func cipherSuiteIDs(s *SSLSettings) (ids []uint16, err error) {
	known := map[string]*tls.CipherSuite{}
	for _, c := range tls.CipherSuites() {
		known[c.Name] = c
	}
	insecure := map[string]bool{}
	for _, c := range tls.InsecureCipherSuites() {
		insecure[c.Name] = true
	}
	for _, name := range s.CipherSuites {
		if name == "TLS_EMPTY_RENEGOTIATION_INFO_SCSV" {
			continue // a Java signalling value, not a suite
		}
		c, ok := known[name]
		switch {
		case ok:
			ids = append(ids, c.ID)
		case insecure[name]:
			return nil, fmt.Errorf("%s: %s is insecure; kraftd does not enable it", s.key("ssl.cipher.suites"), name)
		default:
			return nil, fmt.Errorf("%s: unknown cipher suite %q (use the IANA name, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)", s.key("ssl.cipher.suites"), name)
		}
	}
	return ids, nil
}

// applyCiphers sets the TLS 1.2 suites and narrows the versions as Java
// would with the same list: no TLS 1.2 suite listed means no TLS 1.2, no
// TLS 1.3 suite listed means no TLS 1.3.
func applyCiphers(c *tls.Config, ids []uint16) error {
	if len(ids) == 0 {
		return nil
	}
	var has12, has13 bool
	for _, id := range ids {
		for _, cs := range tls.CipherSuites() {
			if cs.ID != id {
				continue
			}
			if slices.Contains(cs.SupportedVersions, tls.VersionTLS13) {
				has13 = true
			} else {
				has12 = true
				c.CipherSuites = append(c.CipherSuites, id)
			}
		}
	}
	if !has12 {
		c.MinVersion = max(c.MinVersion, tls.VersionTLS13)
	}
	if !has13 {
		c.MaxVersion = min(c.MaxVersion, tls.VersionTLS12)
	}
	if c.MinVersion > c.MaxVersion {
		return errors.New("ssl.cipher.suites: no listed suite fits the enabled protocols")
	}
	return nil
}

// TLSMaterial is a listener's (or the outbound side's) key and trust
// material with the settings that shape handshakes. It re-reads the store
// files when their content changes, checked on new handshakes at most once
// per ReloadInterval. A store that fails to load keeps the previous
// material and is logged once per distinct failure. Kafka instead reloads
// only on an AlterConfigs call that sets the key store again.
// Safe for concurrent use.
type TLSMaterial struct {
	s        *SSLSettings
	server   bool
	minV     uint16
	maxV     uint16
	ciphers  []uint16
	logf     func(format string, args ...any)
	interval time.Duration
	now      func() time.Time

	mu        sync.Mutex
	certs     []tls.Certificate
	roots     *x509.CertPool // nil: system roots
	digest    [sha256.Size]byte
	lastCheck time.Time
	lastErr   string
	serverCfg *tls.Config
}

// ReloadInterval is how often store files are checked for changes.
const ReloadInterval = time.Second

// NewTLSMaterial loads s's stores and checks every TLS setting. server
// says which side it serves (a server needs a key store). logf receives
// the reload log lines.
func NewTLSMaterial(s *SSLSettings, server bool, logf func(format string, args ...any)) (*TLSMaterial, error) {
	minV, maxV, err := tlsVersions(s)
	if err != nil {
		return nil, err
	}
	ids, err := cipherSuiteIDs(s)
	if err != nil {
		return nil, err
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	m := &TLSMaterial{s: s, server: server, minV: minV, maxV: maxV, ciphers: ids, logf: logf, interval: ReloadInterval, now: time.Now}
	probe := m.base()
	if err := applyCiphers(probe, ids); err != nil {
		return nil, fmt.Errorf("%s: %w", s.key("ssl.cipher.suites"), err)
	}
	certs, roots, digest, err := m.load()
	if err != nil {
		return nil, err
	}
	m.install(certs, roots, digest)
	m.lastCheck = m.now()
	return m, nil
}

// storeFiles are the files whose content the material depends on.
func (m *TLSMaterial) storeFiles() []string {
	var fs []string
	if m.s.KeystoreLocation != "" {
		fs = append(fs, m.s.KeystoreLocation)
	}
	if m.s.TruststoreLocation != "" {
		fs = append(fs, m.s.TruststoreLocation)
	}
	return fs
}

func (m *TLSMaterial) filesDigest() ([sha256.Size]byte, error) {
	h := sha256.New()
	for _, f := range m.storeFiles() {
		key := m.s.key("ssl.truststore.location")
		if f == m.s.KeystoreLocation {
			key = m.s.key("ssl.keystore.location")
		}
		b, err := readStoreFile(key, f)
		if err != nil {
			return [sha256.Size]byte{}, err
		}
		h.Write([]byte(f))
		h.Write(b)
	}
	var d [sha256.Size]byte
	copy(d[:], h.Sum(nil))
	return d, nil
}

func (m *TLSMaterial) load() ([]tls.Certificate, *x509.CertPool, [sha256.Size]byte, error) {
	var d [sha256.Size]byte
	digest, err := m.filesDigest()
	if err != nil {
		return nil, nil, d, err
	}
	certs, err := loadKeyStore(m.s)
	if err != nil {
		return nil, nil, d, err
	}
	if m.server && len(certs) == 0 {
		return nil, nil, d, fmt.Errorf("%s: an SSL listener needs a key store", m.s.key("ssl.keystore.location"))
	}
	roots, err := loadTrustStore(m.s)
	if err != nil {
		return nil, nil, d, err
	}
	return certs, roots, digest, nil
}

// install swaps in new material. Callers hold mu (or own m).
func (m *TLSMaterial) install(certs []tls.Certificate, roots *x509.CertPool, digest [sha256.Size]byte) {
	m.certs, m.roots, m.digest = certs, roots, digest
	c := m.base()
	_ = applyCiphers(c, m.ciphers) // checked in NewTLSMaterial
	c.Certificates = certs
	c.ClientCAs = roots
	switch m.s.ClientAuth {
	case ClientAuthRequired:
		c.ClientAuth = tls.RequireAndVerifyClientCert
	case ClientAuthRequested:
		c.ClientAuth = tls.VerifyClientCertIfGiven
	default:
		c.ClientAuth = tls.NoClientCert
	}
	m.serverCfg = c
}

func (m *TLSMaterial) base() *tls.Config {
	return &tls.Config{MinVersion: m.minV, MaxVersion: m.maxV}
}

// maybeReload re-reads the stores when their files changed; at most once
// per interval.
func (m *TLSMaterial) maybeReload() {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if len(m.storeFiles()) == 0 || now.Sub(m.lastCheck) < m.interval {
		return
	}
	m.lastCheck = now
	d, err := m.filesDigest()
	if err == nil && d == m.digest {
		return
	}
	var certs []tls.Certificate
	var roots *x509.CertPool
	if err == nil {
		certs, roots, d, err = m.load()
	}
	if err != nil {
		if msg := err.Error(); msg != m.lastErr {
			m.lastErr = msg
			m.logf("TLS material of %s not reloaded, keeping the previous: %v", strings.Join(m.storeFiles(), ", "), err)
		}
		return
	}
	m.lastErr = ""
	m.install(certs, roots, d)
	m.logf("TLS material reloaded from %s", strings.Join(m.storeFiles(), ", "))
}

// ServerConfig is the *tls.Config of a listener: each handshake takes the
// current material (GetConfigForClient), so reloads reach new connections.
func (m *TLSMaterial) ServerConfig() *tls.Config {
	c := m.base()
	c.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		m.maybeReload()
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.serverCfg, nil
	}
	return c
}

// ClientConfig is the *tls.Config for one outbound connection to host (a
// name or an IP, without brackets). With ssl.endpoint.identification.algorithm
// https the server's certificate must name host; empty checks the chain
// only.
func (m *TLSMaterial) ClientConfig(host string) *tls.Config {
	m.maybeReload()
	m.mu.Lock()
	certs, roots := m.certs, m.roots
	m.mu.Unlock()
	c := m.base()
	_ = applyCiphers(c, m.ciphers)
	c.ServerName = host
	c.RootCAs = roots
	c.GetClientCertificate = func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
		for i := range certs {
			if cri.SupportsCertificate(&certs[i]) == nil {
				return &certs[i], nil
			}
		}
		if len(certs) > 0 {
			return &certs[0], nil
		}
		return &tls.Certificate{}, nil
	}
	if m.s.EndpointIdentification == "" {
		// Go verifies the host name with the chain; to verify the chain
		// alone the built-in check is off and VerifyConnection does it.
		c.InsecureSkipVerify = true
		c.VerifyConnection = func(cs tls.ConnectionState) error { return verifyChain(cs.PeerCertificates, roots) }
	}
	return c
}

// verifyChain checks a server's chain against roots without a host name.
func verifyChain(chain []*x509.Certificate, roots *x509.CertPool) error {
	if len(chain) == 0 {
		return errors.New("tls: server sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	_, err := chain[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	return err
}

// LooksLikeTLS reports whether the first bytes of a connection are a TLS
// handshake record, so a listener that expects plaintext Kafka frames can
// name the mistake (a client configured for SSL) in its log line.
func LooksLikeTLS(b []byte) bool {
	return len(b) >= 3 && b[0] == 0x16 && b[1] == 0x03 && b[2] <= 0x04
}
