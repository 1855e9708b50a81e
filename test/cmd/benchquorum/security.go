package main

import (
	"fmt"
	"strings"

	"github.com/kraftd/kraftd/internal/testpki"
)

// Listener security compared by -security: every node's controller listener and its
// connections to the other voters use the protocol, from the properties an operator would
// write (mutual TLS on the SSL protocols, SASL PLAIN between controllers). The
// certificates are made for the run, in its own directory.

const benchUser, benchPassword = "controller", "bench-secret"

var benchProtocols = []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}

// parseProtocols validates -security.
func parseProtocols(list string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(list, ",") {
		p = strings.ToUpper(strings.TrimSpace(p))
		ok := false
		for _, known := range benchProtocols {
			ok = ok || p == known
		}
		if !ok {
			return nil, fmt.Errorf("-security %q: %q is not one of %s", list, p, strings.Join(benchProtocols, ", "))
		}
		out = append(out, p)
	}
	return out, nil
}

// securityProps are the properties lines of protocol proto, with certificates written to
// dir when it needs them.
func securityProps(proto, dir string) (string, error) {
	if proto == "PLAINTEXT" {
		return "", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "listener.security.protocol.map=CONTROLLER:%s\n", proto)
	if strings.HasSuffix(proto, "SSL") {
		f, err := testpki.WriteLocal(dir, "bench")
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "ssl.keystore.type=PEM\nssl.keystore.location=%s\nssl.truststore.type=PEM\nssl.truststore.location=%s\n", f.KeyStore, f.TrustStore)
		b.WriteString("ssl.client.auth=required\nlistener.name.controller.ssl.client.auth=required\n")
	}
	if strings.HasPrefix(proto, "SASL") {
		b.WriteString("sasl.enabled.mechanisms=PLAIN\nsasl.mechanism.controller.protocol=PLAIN\n")
		fmt.Fprintf(&b, "listener.name.controller.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"%s\" password=\"%s\" user_%s=\"%s\";\n",
			benchUser, benchPassword, benchUser, benchPassword)
	}
	return b.String(), nil
}
