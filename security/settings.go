package security

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Props is how this package reads a node's properties; *config.Properties
// satisfies it. Values are untrusted text.
type Props interface {
	Get(key string) (string, bool)
}

// ClientAuth is ssl.client.auth.
type ClientAuth string

const (
	ClientAuthNone      ClientAuth = "none"
	ClientAuthRequested ClientAuth = "requested"
	ClientAuthRequired  ClientAuth = "required"
)

// Store types of ssl.keystore.type and ssl.truststore.type.
const (
	StoreJKS    = "JKS"
	StorePKCS12 = "PKCS12"
	StorePEM    = "PEM"
)

// SSLSettings are the resolved ssl.* keys of one listener (server side) or
// of outbound connections (client side). Each value records the key it came
// from (Keys) so errors name what the operator wrote.
type SSLSettings struct {
	KeystoreType             string
	KeystoreLocation         string
	KeystorePassword         string
	KeyPassword              string
	KeystoreCertificateChain string // inline PEM
	KeystoreKey              string // inline PEM (PKCS#8, maybe encrypted)

	TruststoreType         string
	TruststoreLocation     string
	TruststorePassword     string
	TruststoreCertificates string // inline PEM

	ClientAuth ClientAuth
	// EndpointIdentification is "https" (verify the server's host name) or
	// "" (do not).
	EndpointIdentification string
	Protocol               string   // ssl.protocol
	EnabledProtocols       []string // ssl.enabled.protocols
	CipherSuites           []string // ssl.cipher.suites, Java/IANA names; empty: Go's defaults

	// Keys maps each unprefixed key (ssl.keystore.location) to the property
	// that supplied it (listener.name.controller.ssl.keystore.location).
	Keys map[string]string
}

// key names the property that supplied k, for errors.
func (s *SSLSettings) key(k string) string {
	if s != nil && s.Keys[k] != "" {
		return s.Keys[k]
	}
	return k
}

// SASLSettings are the resolved sasl.* keys of a listener (Server) or of
// outbound connections (Client).
type SASLSettings struct {
	// EnabledMechanisms is sasl.enabled.mechanisms in the operator's order,
	// the list SaslHandshake answers with (server side).
	EnabledMechanisms []string
	// JAAS holds each enabled mechanism's parsed
	// listener.name.<l>.<mech>.sasl.jaas.config (server side).
	JAAS map[string]*JAASEntry
	// ReauthMs is connections.max.reauth.ms per mechanism, resolved as
	// Kafka does (<mech>. prefix, then unprefixed); 0 disables.
	ReauthMs map[string]int64
	// MaxReceiveSize is sasl.server.max.receive.size: the largest frame
	// accepted before authentication.
	MaxReceiveSize int32

	// ClientMechanism is sasl.mechanism.controller.protocol and
	// ClientUsername/ClientPassword come from its JAAS entry (client side).
	ClientMechanism string
	ClientUsername  string
	ClientPassword  string
}

// Listener is the security of one controller listener (server side) or of
// the node's outbound connections to voters (client side).
type Listener struct {
	Name     string // upper case
	Protocol Protocol
	SSL      *SSLSettings  // set when Protocol.UsesTLS()
	SASL     *SASLSettings // set when Protocol.UsesSASL()
}

// Mechanisms kraftd implements, on both sides.
const (
	MechPlain       = "PLAIN"
	MechScramSHA256 = "SCRAM-SHA-256"
	MechScramSHA512 = "SCRAM-SHA-512"
)

func supportedMechanism(m string) bool {
	return m == MechPlain || m == MechScramSHA256 || m == MechScramSHA512
}

// Kafka's defaults.
const (
	defaultStoreType         = StoreJKS
	defaultSSLProtocol       = "TLSv1.3"
	defaultEnabledProtocols  = "TLSv1.2,TLSv1.3"
	defaultEndpointAlgorithm = "https"
	defaultMechanism         = "GSSAPI"
	defaultMaxReceiveSize    = 524288
)

// lookup resolves key for listener as Kafka's valuesWithPrefixOverride does:
// listener.name.<lower-case listener>.<key> wins over <key>.
func lookup(p Props, listener, key string) (value, from string, ok bool) {
	k := ListenerPrefix(listener) + key
	if v, ok := p.Get(k); ok {
		return strings.TrimSpace(v), k, true
	}
	if v, ok := p.Get(key); ok {
		return strings.TrimSpace(v), key, true
	}
	return "", key, false
}

// ListenerPrefix is Kafka's ListenerName.configPrefix.
func ListenerPrefix(listener string) string {
	return "listener.name." + strings.ToLower(listener) + "."
}

// ResolveServer resolves the security of controller listener name, whose
// protocol is proto, from the node's properties. All problems are reported
// at once (errors.Join), each naming its key.
func ResolveServer(p Props, name string, proto Protocol) (*Listener, error) {
	l := &Listener{Name: strings.ToUpper(name), Protocol: proto}
	var errs []error
	if proto.UsesTLS() {
		s, err := resolveSSL(p, name, true, proto)
		l.SSL = s
		errs = append(errs, err)
	}
	if proto.UsesSASL() {
		s, err := resolveSASLServer(p, name)
		l.SASL = s
		errs = append(errs, err)
	}
	if err := prefixEach(fmt.Sprintf("listener %s (%s): ", l.Name, proto), errs); err != nil {
		return nil, err
	}
	return l, nil
}

// ResolveClient resolves the security of outbound connections to voters:
// the settings of the first controller listener name, in client mode
// (Kafka's raft client uses the listener's server JAAS context, so the
// username and password come from listener.name.<l>.<mech>.sasl.jaas.config).
func ResolveClient(p Props, firstControllerName string, proto Protocol) (*Listener, error) {
	l := &Listener{Name: strings.ToUpper(firstControllerName), Protocol: proto}
	var errs []error
	if proto.UsesTLS() {
		s, err := resolveSSL(p, firstControllerName, false, proto)
		l.SSL = s
		errs = append(errs, err)
	}
	if proto.UsesSASL() {
		s, err := resolveSASLClient(p, firstControllerName)
		l.SASL = s
		errs = append(errs, err)
	}
	if err := prefixEach(fmt.Sprintf("outbound connections to voters (listener %s, %s): ", l.Name, proto), errs); err != nil {
		return nil, err
	}
	return l, nil
}

func resolveSSL(p Props, listener string, server bool, proto Protocol) (*SSLSettings, error) {
	s := &SSLSettings{Keys: map[string]string{}}
	var errs []error
	get := func(key, def string) string {
		v, from, ok := lookup(p, listener, key)
		s.Keys[key] = from
		if !ok {
			return def
		}
		return v
	}
	s.KeystoreType = strings.ToUpper(get("ssl.keystore.type", defaultStoreType))
	s.KeystoreLocation = get("ssl.keystore.location", "")
	s.KeystorePassword = get("ssl.keystore.password", "")
	s.KeyPassword = get("ssl.key.password", "")
	s.KeystoreCertificateChain = get("ssl.keystore.certificate.chain", "")
	s.KeystoreKey = get("ssl.keystore.key", "")
	s.TruststoreType = strings.ToUpper(get("ssl.truststore.type", defaultStoreType))
	s.TruststoreLocation = get("ssl.truststore.location", "")
	s.TruststorePassword = get("ssl.truststore.password", "")
	s.TruststoreCertificates = get("ssl.truststore.certificates", "")
	s.EndpointIdentification = get("ssl.endpoint.identification.algorithm", defaultEndpointAlgorithm)
	s.Protocol = get("ssl.protocol", defaultSSLProtocol)
	s.EnabledProtocols = splitList(get("ssl.enabled.protocols", defaultEnabledProtocols))
	s.CipherSuites = splitList(get("ssl.cipher.suites", ""))

	// ssl.client.auth: on SASL_SSL only the listener-prefixed key counts
	// (Kafka ignores the broker-wide one there, with a warning).
	ca := string(ClientAuthNone)
	if proto == SASLSSL {
		if v, ok := p.Get(ListenerPrefix(listener) + "ssl.client.auth"); ok {
			ca = strings.TrimSpace(v)
			s.Keys["ssl.client.auth"] = ListenerPrefix(listener) + "ssl.client.auth"
		}
	} else {
		ca = get("ssl.client.auth", ca)
	}
	switch c := ClientAuth(strings.ToLower(ca)); c {
	case ClientAuthNone, ClientAuthRequested, ClientAuthRequired:
		s.ClientAuth = c
	default:
		errs = append(errs, fmt.Errorf("%s: invalid value %q: want none, requested or required", s.key("ssl.client.auth"), ca))
	}

	switch strings.ToLower(s.EndpointIdentification) {
	case "https":
		s.EndpointIdentification = "https"
	case "":
	default:
		errs = append(errs, fmt.Errorf("%s: %q is not supported: want https or empty", s.key("ssl.endpoint.identification.algorithm"), s.EndpointIdentification))
	}
	errs = append(errs, checkStoreTypes(s, server))
	if _, _, err := tlsVersions(s); err != nil {
		errs = append(errs, err)
	}
	if _, err := cipherSuiteIDs(s); err != nil {
		errs = append(errs, err)
	}
	return s, errors.Join(errs...)
}

// checkStoreTypes validates the key/trust store keys as Kafka's
// DefaultSslEngineFactory does, before any file is read.
func checkStoreTypes(s *SSLSettings, server bool) error {
	var errs []error
	switch s.KeystoreType {
	case StoreJKS, StorePKCS12:
		if s.KeystoreCertificateChain != "" || s.KeystoreKey != "" {
			errs = append(errs, fmt.Errorf("%s and %s require %s=PEM", s.key("ssl.keystore.certificate.chain"), s.key("ssl.keystore.key"), s.key("ssl.keystore.type")))
		}
		if s.KeystoreLocation != "" && s.KeystorePassword == "" {
			errs = append(errs, fmt.Errorf("%s: SSL key store is specified, but key store password is not specified.", s.key("ssl.keystore.password")))
		}
	case StorePEM:
		if s.KeystorePassword != "" {
			errs = append(errs, fmt.Errorf("%s: SSL key store password cannot be specified with PEM format, only key password may be specified", s.key("ssl.keystore.password")))
		}
		inline := s.KeystoreCertificateChain != "" || s.KeystoreKey != ""
		if inline && s.KeystoreLocation != "" {
			errs = append(errs, fmt.Errorf("%s, %s: Both SSL key store location and separate private key are specified.", s.key("ssl.keystore.location"), s.key("ssl.keystore.key")))
		}
		if s.KeystoreCertificateChain != "" && s.KeystoreKey == "" {
			errs = append(errs, fmt.Errorf("%s: SSL certificate chain is specified, but private key is not specified", s.key("ssl.keystore.key")))
		}
		if s.KeystoreKey != "" && s.KeystoreCertificateChain == "" {
			errs = append(errs, fmt.Errorf("%s: SSL private key is specified, but certificate chain is not specified.", s.key("ssl.keystore.certificate.chain")))
		}
	default:
		errs = append(errs, fmt.Errorf("%s: %q is not supported: want JKS, PKCS12 or PEM", s.key("ssl.keystore.type"), s.KeystoreType))
	}
	if server && s.KeystoreLocation == "" && s.KeystoreCertificateChain == "" {
		errs = append(errs, fmt.Errorf("%s: an SSL listener needs a key store (or %s with %s)", s.key("ssl.keystore.location"), s.key("ssl.keystore.certificate.chain"), s.key("ssl.keystore.key")))
	}
	switch s.TruststoreType {
	case StoreJKS, StorePKCS12:
		if s.TruststoreCertificates != "" {
			errs = append(errs, fmt.Errorf("%s requires %s=PEM", s.key("ssl.truststore.certificates"), s.key("ssl.truststore.type")))
		}
		// Kafka loads a JKS/PKCS12 trust store without a password
		// (integrity unchecked); kraftd refuses that rather than trusting
		// certificates whose integrity it cannot check.
		if s.TruststoreLocation != "" && s.TruststorePassword == "" {
			errs = append(errs, fmt.Errorf("%s: a %s trust store needs its password", s.key("ssl.truststore.password"), s.TruststoreType))
		}
	case StorePEM:
		if s.TruststorePassword != "" {
			errs = append(errs, fmt.Errorf("%s: SSL trust store password cannot be specified for PEM format.", s.key("ssl.truststore.password")))
		}
		if s.TruststoreCertificates != "" && s.TruststoreLocation != "" {
			errs = append(errs, fmt.Errorf("%s, %s: Both SSL trust store location and separate trust certificates are specified.", s.key("ssl.truststore.location"), s.key("ssl.truststore.certificates")))
		}
	default:
		errs = append(errs, fmt.Errorf("%s: %q is not supported: want JKS, PKCS12 or PEM", s.key("ssl.truststore.type"), s.TruststoreType))
	}
	return errors.Join(errs...)
}

func resolveSASLServer(p Props, listener string) (*SASLSettings, error) {
	s := &SASLSettings{JAAS: map[string]*JAASEntry{}, ReauthMs: map[string]int64{}}
	var errs []error
	mechs, from, _ := lookup(p, listener, "sasl.enabled.mechanisms")
	if mechs == "" {
		if _, _, set := lookup(p, listener, "sasl.enabled.mechanisms"); !set {
			mechs = defaultMechanism
		}
	}
	s.EnabledMechanisms = splitList(mechs)
	if len(s.EnabledMechanisms) == 0 {
		errs = append(errs, fmt.Errorf("%s: No SASL mechanisms are enabled", from))
	}
	prefix := ListenerPrefix(listener)
	for _, m := range s.EnabledMechanisms {
		if !supportedMechanism(m) {
			errs = append(errs, fmt.Errorf("%s: mechanism %s is not supported by kraftd (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)", from, m))
			continue
		}
		jk := prefix + strings.ToLower(m) + ".sasl.jaas.config"
		text, ok := p.Get(jk)
		if !ok {
			// Kafka would fall back to the static JAAS file
			// (java.security.auth.login.config), which kraftd does not read.
			errs = append(errs, fmt.Errorf("%s: required for mechanism %s on listener %s (kraftd reads no JAAS file)", jk, m, strings.ToUpper(listener)))
			continue
		}
		e, err := ParseServerJAAS(text)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", jk, err))
			continue
		}
		if err := e.checkModule(m); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", jk, err))
			continue
		}
		s.JAAS[m] = e
		ms, err := reauthMs(p, listener, m)
		if err != nil {
			errs = append(errs, err)
		}
		s.ReauthMs[m] = ms
	}
	size, sfrom, ok := lookup(p, listener, "sasl.server.max.receive.size")
	s.MaxReceiveSize = defaultMaxReceiveSize
	if ok {
		v, err := strconv.ParseInt(size, 10, 32)
		if err != nil || v < 1 {
			errs = append(errs, fmt.Errorf("%s: %q is not a positive int", sfrom, size))
		} else {
			s.MaxReceiveSize = int32(v)
		}
	}
	return s, errors.Join(errs...)
}

// reauthMs resolves connections.max.reauth.ms for mechanism m on listener:
// listener.name.<l>.<mech>.connections.max.reauth.ms, then the listener's
// or the node's connections.max.reauth.ms; Kafka's default 0 disables.
func reauthMs(p Props, listener, m string) (int64, error) {
	k := ListenerPrefix(listener) + strings.ToLower(m) + ".connections.max.reauth.ms"
	v, ok := p.Get(k)
	if !ok {
		var vv string
		vv, k, ok = lookup(p, listener, "connections.max.reauth.ms")
		v = vv
	}
	if !ok {
		return 0, nil
	}
	ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not an integer", k, v)
	}
	return ms, nil
}

func resolveSASLClient(p Props, listener string) (*SASLSettings, error) {
	s := &SASLSettings{}
	m := defaultMechanism
	if v, ok := p.Get("sasl.mechanism.controller.protocol"); ok {
		m = strings.TrimSpace(v)
	}
	s.ClientMechanism = m
	if !supportedMechanism(m) {
		return s, fmt.Errorf("sasl.mechanism.controller.protocol: mechanism %s is not supported by kraftd (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)", m)
	}
	jk := ListenerPrefix(listener) + strings.ToLower(m) + ".sasl.jaas.config"
	text, ok := p.Get(jk)
	if !ok {
		return s, fmt.Errorf("%s: required for the client side of mechanism %s (kraftd reads no JAAS file)", jk, m)
	}
	e, err := ParseServerJAAS(text)
	if err != nil {
		return s, fmt.Errorf("%s: %w", jk, err)
	}
	if err := e.checkModule(m); err != nil {
		return s, fmt.Errorf("%s: %w", jk, err)
	}
	u, uok := e.Options["username"]
	pw, pok := e.Options["password"]
	if !uok || !pok {
		return s, fmt.Errorf("%s: the client side needs username and password options", jk)
	}
	s.ClientUsername, s.ClientPassword = u, pw
	return s, nil
}

// splitList splits a Kafka LIST value on commas, trimming blanks and
// dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// prefixEach joins errs, flattening joined errors, each prefixed, so a
// caller listing problems shows one line per problem.
func prefixEach(prefix string, errs []error) error {
	var out []error
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		out = append(out, fmt.Errorf("%s%w", prefix, err))
	}
	for _, e := range errs {
		walk(e)
	}
	return errors.Join(out...)
}

// securityKeys are the keys ResolveServer and ResolveClient read, plus
// Kafka security keys kraftd accepts without effect (Java's key manager,
// trust manager, random and principal mapping choices).
var securityKeys = map[string]bool{
	"ssl.keystore.type": true, "ssl.keystore.location": true, "ssl.keystore.password": true,
	"ssl.key.password": true, "ssl.keystore.certificate.chain": true, "ssl.keystore.key": true,
	"ssl.truststore.type": true, "ssl.truststore.location": true, "ssl.truststore.password": true,
	"ssl.truststore.certificates": true, "ssl.client.auth": true, "ssl.endpoint.identification.algorithm": true,
	"ssl.protocol": true, "ssl.enabled.protocols": true, "ssl.cipher.suites": true,
	"sasl.enabled.mechanisms": true, "sasl.mechanism.controller.protocol": true,
	"connections.max.reauth.ms": true, "sasl.server.max.receive.size": true,
	"ssl.keymanager.algorithm": true, "ssl.trustmanager.algorithm": true,
	"ssl.secure.random.implementation": true, "ssl.principal.mapping.rules": true,
}

// IsSecurityKey reports whether key is a security key this package reads
// or accepts: the keys above, unprefixed or as listener.name.<l>.<key>, and
// listener.name.<l>.<mechanism>.sasl.jaas.config or
// .<mechanism>.connections.max.reauth.ms. config uses it to spare them the
// unknown-key warning.
func IsSecurityKey(key string) bool {
	if securityKeys[key] {
		return true
	}
	rest, ok := strings.CutPrefix(key, "listener.name.")
	if !ok {
		return false
	}
	_, k, ok := strings.Cut(rest, ".")
	if !ok {
		return false
	}
	if securityKeys[k] {
		return true
	}
	mech, k, ok := strings.Cut(k, ".")
	return ok && (k == "sasl.jaas.config" || k == "connections.max.reauth.ms") && supportedMechanism(strings.ToUpper(mech))
}
