package security

import (
	"strings"
	"testing"
)

// props is a Props for tests.
type props map[string]string

func (p props) Get(k string) (string, bool) {
	v, ok := p[k]
	return v, ok
}

func TestProtocolMap(t *testing.T) {
	tests := []struct {
		name        string
		p           props
		listeners   []string
		controllers []string
		want        map[string]Protocol
		wantErr     string
	}{
		{name: "default map adds PLAINTEXT for controller names", listeners: []string{"CONTROLLER"}, controllers: []string{"CONTROLLER"},
			want: map[string]Protocol{"CONTROLLER": Plaintext, "PLAINTEXT": Plaintext, "SSL": SSL, "SASL_SSL": SASLSSL, "SASL_PLAINTEXT": SASLPlaintext}},
		{name: "default map without the addition when an SSL listener exists", listeners: []string{"SSL", "CONTROLLER"}, controllers: []string{"CONTROLLER"},
			want: map[string]Protocol{"PLAINTEXT": Plaintext, "SSL": SSL, "SASL_SSL": SASLSSL, "SASL_PLAINTEXT": SASLPlaintext}},
		{name: "explicit map, case-insensitive protocol, upper-cased names", p: props{ProtocolMapKey: " controller : ssl , Other:SASL_SSL"},
			want: map[string]Protocol{"CONTROLLER": SSL, "OTHER": SASLSSL}},
		{name: "explicit empty map", p: props{ProtocolMapKey: ""}, controllers: []string{"CONTROLLER"}, want: map[string]Protocol{}},
		{name: "unknown protocol", p: props{ProtocolMapKey: "CONTROLLER:TRACE"}, wantErr: "Invalid security protocol `TRACE` defined in listener.security.protocol.map"},
		{name: "no colon", p: props{ProtocolMapKey: "CONTROLLER"}, wantErr: "Error parsing configuration property 'listener.security.protocol.map'"},
		{name: "empty entry", p: props{ProtocolMapKey: "A:SSL,,B:SSL"}, wantErr: "Error parsing configuration property"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.p == nil {
				tt.p = props{}
			}
			m, err := ProtocolMap(tt.p, tt.listeners, tt.controllers)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(m) != len(tt.want) {
				t.Fatalf("map %v, want %v", m, tt.want)
			}
			for k, v := range tt.want {
				if m[k] != v {
					t.Errorf("%s: %s, want %s", k, m[k], v)
				}
			}
		})
	}
}

func TestListenerAndOutboundProtocol(t *testing.T) {
	m := map[string]Protocol{"CONTROLLER": SSL}
	if p, err := ListenerProtocol(m, "controller"); err != nil || p != SSL {
		t.Errorf("%v %v", p, err)
	}
	if _, err := ListenerProtocol(m, "SASL_SSL"); err == nil || err.Error() != "No security protocol defined for listener SASL_SSL" {
		t.Errorf("listener missing from the map: %v", err)
	}
	// The raft client falls back to the name itself.
	if p, err := OutboundProtocol(m, "SASL_SSL"); err != nil || p != SASLSSL {
		t.Errorf("%v %v", p, err)
	}
	if _, err := OutboundProtocol(m, "OTHER"); err == nil {
		t.Error("OTHER resolved")
	}
}

const plainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_bob="b";`

func TestResolveOverridesAndDefaults(t *testing.T) {
	p := props{
		"ssl.keystore.location":                                            "/generic.jks",
		"ssl.keystore.password":                                            "generic",
		"listener.name.controller.ssl.keystore.location":                   "/controller.p12",
		"listener.name.controller.ssl.keystore.type":                       "pkcs12",
		"ssl.client.auth":                                                  "required",
		"listener.name.controller.sasl.enabled.mechanisms":                 "PLAIN,SCRAM-SHA-512",
		"listener.name.controller.plain.sasl.jaas.config":                  plainJAAS,
		"listener.name.controller.scram-sha-512.sasl.jaas.config":          `org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="s";`,
		"listener.name.controller.scram-sha-512.connections.max.reauth.ms": "1000",
		"connections.max.reauth.ms":                                        "5000",
		"sasl.mechanism.controller.protocol":                               "SCRAM-SHA-512",
	}
	l, err := ResolveServer(p, "CONTROLLER", SASLSSL)
	if err != nil {
		t.Fatal(err)
	}
	s := l.SSL
	if s.KeystoreLocation != "/controller.p12" || s.KeystoreType != StorePKCS12 || s.KeystorePassword != "generic" {
		t.Errorf("per-listener override not resolved: %+v", s)
	}
	if s.Keys["ssl.keystore.location"] != "listener.name.controller.ssl.keystore.location" || s.Keys["ssl.keystore.password"] != "ssl.keystore.password" {
		t.Errorf("key provenance %v", s.Keys)
	}
	// Kafka's defaults.
	if s.EndpointIdentification != "https" || s.Protocol != "TLSv1.3" || strings.Join(s.EnabledProtocols, ",") != "TLSv1.2,TLSv1.3" || s.TruststoreType != StoreJKS {
		t.Errorf("defaults %+v", s)
	}
	// On SASL_SSL the unprefixed ssl.client.auth does not apply.
	if s.ClientAuth != ClientAuthNone {
		t.Errorf("client auth %s on SASL_SSL from the unprefixed key", s.ClientAuth)
	}
	if got := l.SASL.ReauthMs; got[MechScramSHA512] != 1000 || got[MechPlain] != 5000 {
		t.Errorf("reauth %v", got)
	}
	if l.SASL.MaxReceiveSize != 524288 {
		t.Errorf("max receive %d", l.SASL.MaxReceiveSize)
	}
	ssl, err := ResolveServer(p, "CONTROLLER", SSL)
	if err != nil {
		t.Fatal(err)
	}
	if ssl.SSL.ClientAuth != ClientAuthRequired {
		t.Errorf("client auth on SSL: %s", ssl.SSL.ClientAuth)
	}
	c, err := ResolveClient(p, "CONTROLLER", SASLSSL)
	if err != nil {
		t.Fatal(err)
	}
	if c.SASL.ClientMechanism != MechScramSHA512 || c.SASL.ClientUsername != "admin" || c.SASL.ClientPassword != "s" {
		t.Errorf("client SASL %+v", c.SASL)
	}
}

func TestResolveRefusals(t *testing.T) {
	base := func() props {
		return props{"ssl.keystore.location": "/ks.jks", "ssl.keystore.password": "pw"}
	}
	tests := []struct {
		name    string
		set     props
		proto   Protocol
		client  bool
		wantErr []string
	}{
		{name: "client auth", set: props{"ssl.client.auth": "sometimes"}, proto: SSL, wantErr: []string{"ssl.client.auth: invalid value"}},
		{name: "endpoint algorithm", set: props{"listener.name.controller.ssl.endpoint.identification.algorithm": "ldaps"}, proto: SSL,
			wantErr: []string{"listener.name.controller.ssl.endpoint.identification.algorithm: \"ldaps\""}},
		{name: "store type", set: props{"ssl.keystore.type": "JCEKS"}, proto: SSL, wantErr: []string{"ssl.keystore.type: \"JCEKS\" is not supported"}},
		{name: "PEM with store password", set: props{"ssl.keystore.type": "PEM"}, proto: SSL,
			wantErr: []string{"SSL key store password cannot be specified with PEM format"}},
		{name: "PEM chain without key", set: props{"ssl.keystore.type": "PEM", "ssl.keystore.password": "", "ssl.keystore.location": "", "ssl.keystore.certificate.chain": "x"}, proto: SSL,
			wantErr: []string{"SSL certificate chain is specified, but private key is not specified"}},
		{name: "no store password", set: props{"ssl.keystore.password": ""}, proto: SSL, wantErr: []string{"SSL key store is specified, but key store password is not specified."}},
		{name: "old protocols only", set: props{"ssl.enabled.protocols": "TLSv1,TLSv1.1"}, proto: SSL, wantErr: []string{"no usable protocol"}},
		{name: "ssl.protocol excludes all", set: props{"ssl.enabled.protocols": "TLSv1.3", "ssl.protocol": "TLSv1.2"}, proto: SSL, wantErr: []string{"allows none of"}},
		{name: "unknown cipher", set: props{"ssl.cipher.suites": "TLS_FOO"}, proto: SSL, wantErr: []string{"unknown cipher suite \"TLS_FOO\""}},
		{name: "insecure cipher", set: props{"ssl.cipher.suites": "TLS_RSA_WITH_RC4_128_SHA"}, proto: SSL, wantErr: []string{"is insecure"}},
		{name: "GSSAPI default", proto: SASLPlaintext, wantErr: []string{"mechanism GSSAPI is not supported by kraftd"}},
		{name: "no JAAS", set: props{"sasl.enabled.mechanisms": "PLAIN"}, proto: SASLPlaintext,
			wantErr: []string{"listener.name.controller.plain.sasl.jaas.config: required"}},
		{name: "unprefixed JAAS ignored", set: props{"sasl.enabled.mechanisms": "PLAIN", "plain.sasl.jaas.config": plainJAAS}, proto: SASLPlaintext,
			wantErr: []string{"listener.name.controller.plain.sasl.jaas.config: required"}},
		{name: "wrong module", set: props{"sasl.enabled.mechanisms": "SCRAM-SHA-256", "listener.name.controller.scram-sha-256.sasl.jaas.config": plainJAAS}, proto: SASLPlaintext,
			wantErr: []string{"cannot serve mechanism SCRAM-SHA-256"}},
		{name: "empty mechanisms", set: props{"sasl.enabled.mechanisms": ""}, proto: SASLPlaintext, wantErr: []string{"No SASL mechanisms are enabled"}},
		{name: "client GSSAPI", proto: SASLPlaintext, client: true, wantErr: []string{"sasl.mechanism.controller.protocol: mechanism GSSAPI"}},
		{name: "client without password", set: props{"sasl.mechanism.controller.protocol": "PLAIN",
			"listener.name.controller.plain.sasl.jaas.config": PlainLoginModule + ` required user_a="b";`}, proto: SASLPlaintext, client: true,
			wantErr: []string{"needs username and password"}},
		{name: "several problems at once", set: props{"ssl.client.auth": "x", "ssl.keystore.type": "Y"}, proto: SSL,
			wantErr: []string{"listener CONTROLLER (SSL): ssl.client.auth", "listener CONTROLLER (SSL): ssl.keystore.type"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := base()
			for k, v := range tt.set {
				if v == "" && k != "sasl.enabled.mechanisms" {
					delete(p, k)
					continue
				}
				p[k] = v
			}
			var err error
			if tt.client {
				_, err = ResolveClient(p, "controller", tt.proto)
			} else {
				_, err = ResolveServer(p, "controller", tt.proto)
			}
			if err == nil {
				t.Fatalf("no error, want %q", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "pw") {
				t.Errorf("error %q shows a password", err)
			}
		})
	}
}

func TestIsSecurityKey(t *testing.T) {
	for k, want := range map[string]bool{
		"ssl.keystore.location":                                   true,
		"listener.name.controller.ssl.keystore.location":          true,
		"listener.name.controller.plain.sasl.jaas.config":         true,
		"listener.name.c.scram-sha-512.connections.max.reauth.ms": true,
		"listener.name.controller.gssapi.sasl.jaas.config":        false,
		"listener.name.controller.ssl.keystore.locaton":           false,
		"sasl.jaas.config":                                        false,
		"listener.name":                                           false,
	} {
		if got := IsSecurityKey(k); got != want {
			t.Errorf("IsSecurityKey(%q) = %v", k, got)
		}
	}
}
