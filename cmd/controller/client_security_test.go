package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/security"
	"github.com/kraftd/kraftd/storage"
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

// format --add-scram writes the credential into the bootstrap snapshot, where the node's
// SCRAM store finds it; a metadata.version without SCRAM records is refused.
func TestFormatAddScram(t *testing.T) {
	const id = "MkU3OEVBNTcwNTJENDM2Qg"
	cfg, logDir := dynamicConfig(t, "")
	if code, _, errs := runCmd(t, "format", "-c", cfg, "-t", id, "-N", "-r", "3.5-IV1", "--add-scram", "SCRAM-SHA-256=[name=a,password=b]"); code != 1 ||
		!strings.Contains(errs, "SCRAM is only supported in metadata.version 3.5-IV2 or later.") {
		t.Fatalf("3.5-IV1: exit %d, %q", code, errs)
	}
	if code, _, errs := runCmd(t, "format", "-c", cfg, "-t", id, "-N", "-S", "SCRAM-SHA-256=[name=a]"); code != 1 ||
		!strings.Contains(errs, "You must supply one of 'password' or 'saltedpassword' to add-scram") {
		t.Fatalf("no password: exit %d, %q", code, errs)
	}
	code, out, errs := runCmd(t, "format", "-c", cfg, "-t", id, "-N", "--add-scram", "SCRAM-SHA-512=[name=alice,password=alice-secret]", "-S", "SCRAM-SHA-256=[name=bob,password=bob-secret,iterations=8192]")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	data, err := os.ReadFile(filepath.Join(logDir, "__cluster_metadata-0", storage.BootstrapSnapshotName))
	if err != nil {
		t.Fatal(err)
	}
	s := security.NewScramStore()
	if n, err := s.ApplyBatches(data); n != 2 || err != nil {
		t.Fatalf("%d SCRAM records in the bootstrap snapshot: %v", n, err)
	}
	if c, ok := s.Get(security.MechScramSHA256, "bob"); !ok || c.Iterations != 8192 {
		t.Fatalf("bob: %+v %v", c, ok)
	}
}
