package security

import (
	"fmt"
	"strings"
)

// Protocol is a Kafka security protocol name as listener.security.protocol.map
// holds it (upper case).
type Protocol string

const (
	Plaintext     Protocol = "PLAINTEXT"
	SSL           Protocol = "SSL"
	SASLPlaintext Protocol = "SASL_PLAINTEXT"
	SASLSSL       Protocol = "SASL_SSL"
)

// UsesTLS reports whether connections of p are wrapped in TLS.
func (p Protocol) UsesTLS() bool { return p == SSL || p == SASLSSL }

// UsesSASL reports whether connections of p authenticate with SaslHandshake
// and SaslAuthenticate before any other request.
func (p Protocol) UsesSASL() bool { return p == SASLPlaintext || p == SASLSSL }

// ParseProtocol reads a protocol name case-insensitively, as Kafka's
// SecurityProtocol.forName does. Kafka knows no other protocols (TRACE was
// removed), so anything else is refused.
func ParseProtocol(s string) (Protocol, bool) {
	switch p := Protocol(strings.ToUpper(strings.TrimSpace(s))); p {
	case Plaintext, SSL, SASLPlaintext, SASLSSL:
		return p, true
	}
	return "", false
}

// ProtocolMapKey is the property naming each listener's protocol.
const ProtocolMapKey = "listener.security.protocol.map"

// defaultProtocolMap is Kafka's default listener.security.protocol.map.
const defaultProtocolMap = "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"

// ProtocolMap resolves the listener name -> protocol map as Kafka 4.4's
// effectiveListenerSecurityProtocolMap does. listenerNames are the names
// in the listeners property (upper-cased), controllerNames those of
// controller.listener.names. When the map is not set at all, the default
// map is used and, unless a listener or controller listener is named SSL,
// SASL_SSL or SASL_PLAINTEXT, every controller listener maps to PLAINTEXT.
// Errors carry Kafka's wording.
func ProtocolMap(p Props, listenerNames, controllerNames []string) (map[string]Protocol, error) {
	raw, set := p.Get(ProtocolMapKey)
	if !set {
		raw = defaultProtocolMap
	}
	m := map[string]Protocol{}
	for _, e := range strings.Split(raw, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			// Kafka splits "" into one empty entry and fails on it; an empty
			// map value is accepted by its early return.
			if strings.TrimSpace(raw) == "" {
				break
			}
			return nil, fmt.Errorf("Error parsing configuration property '%s': empty entry in %q (want NAME:PROTOCOL)", ProtocolMapKey, raw)
		}
		i := strings.LastIndexByte(e, ':')
		if i < 0 {
			return nil, fmt.Errorf("Error parsing configuration property '%s': entry %q has no ':' (want NAME:PROTOCOL)", ProtocolMapKey, e)
		}
		name, pname := strings.TrimSpace(e[:i]), strings.TrimSpace(e[i+1:])
		proto, ok := ParseProtocol(pname)
		if !ok {
			return nil, fmt.Errorf("Invalid security protocol `%s` defined in %s", pname, ProtocolMapKey)
		}
		// ListenerName.normalised upper-cases; a later entry wins, as in the
		// HashMap Kafka fills.
		m[strings.ToUpper(name)] = proto
	}
	if set {
		return m, nil
	}
	sslOrSASL := func(n string) bool {
		pr := Protocol(n)
		return pr == SSL || pr == SASLSSL || pr == SASLPlaintext
	}
	for _, n := range append(append([]string(nil), controllerNames...), listenerNames...) {
		if sslOrSASL(n) {
			return m, nil
		}
	}
	for _, n := range controllerNames {
		if _, ok := m[n]; !ok {
			m[n] = Plaintext
		}
	}
	return m, nil
}

// ListenerProtocol is the protocol of listener name in m, or Kafka's error
// when the map has none for it.
func ListenerProtocol(m map[string]Protocol, name string) (Protocol, error) {
	if p, ok := m[strings.ToUpper(name)]; ok {
		return p, nil
	}
	return "", fmt.Errorf("No security protocol defined for listener %s", strings.ToUpper(name))
}

// OutboundProtocol is the protocol of connections to voters: that of the
// first controller listener name, or, as Kafka's raft client does, the name
// itself when the map lacks it and it names a protocol (a broker-only node
// need not list the controller listener in its map).
func OutboundProtocol(m map[string]Protocol, firstControllerName string) (Protocol, error) {
	if p, err := ListenerProtocol(m, firstControllerName); err == nil {
		return p, nil
	}
	if p, ok := ParseProtocol(firstControllerName); ok {
		return p, nil
	}
	return "", fmt.Errorf("No security protocol defined for listener %s", strings.ToUpper(firstControllerName))
}
