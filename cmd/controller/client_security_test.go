package main

import (
	"strings"
	"testing"

	"github.com/kraftd/kraftd/config"
)

// --command-config client security is read with the admin client's keys.
func TestToolSecurity(t *testing.T) {
	parse := func(text string) *config.Properties {
		p, err := config.ParseProperties(text)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if sec, err := toolSecurity(parse("")); err != nil || sec != nil {
		t.Fatalf("no security.protocol: %v %v", sec, err)
	}
	if sec, err := toolSecurity(parse("security.protocol=plaintext\n")); err != nil || sec != nil {
		t.Fatalf("PLAINTEXT: %v %v", sec, err)
	}
	if _, err := toolSecurity(parse("security.protocol=TLS\n")); err == nil || !strings.Contains(err.Error(), "Invalid value TLS for configuration security.protocol") {
		t.Fatalf("bad protocol: %v", err)
	}
	sec, err := toolSecurity(parse("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n" +
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="pw";` + "\n"))
	if err != nil || sec == nil || sec.Mechanism == nil || sec.Mechanism.Name() != "SCRAM-SHA-512" || sec.TLS != nil {
		t.Fatalf("SASL_PLAINTEXT: %+v %v", sec, err)
	}
	if _, err := toolSecurity(parse("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n")); err == nil || !strings.Contains(err.Error(), "kraftd reads no JAAS file") {
		t.Fatalf("no JAAS: %v", err)
	}
	if _, err := toolSecurity(parse("security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=/nonexistent/ca.pem\n")); err == nil || !strings.Contains(err.Error(), "/nonexistent/ca.pem") {
		t.Fatalf("missing trust store: %v", err)
	}
}
