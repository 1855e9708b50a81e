package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kraftd/kraftd/internal/testenv"
)

// TestSystemdUnit checks packaging/kraftd.service with systemd-analyze
// verify (where it is installed): known directives with valid values, and
// an executable ExecStart. verify needs that binary to exist, so the unit's
// /usr/local/bin/controller becomes this test binary.
func TestSystemdUnit(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		testenv.Skip(t, "systemd-analyze not installed (Debian: apt-get install systemd)")
	}
	unit, err := os.ReadFile(filepath.Join("..", "..", "packaging", "kraftd.service"))
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const bin = "ExecStart=/usr/local/bin/controller "
	if !strings.Contains(string(unit), bin) {
		t.Fatalf("the unit does not start %s", bin)
	}
	path := filepath.Join(t.TempDir(), "kraftd.service")
	text := strings.Replace(string(unit), bin, "ExecStart="+self+" ", 1)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	// Unknown or invalid directives are only warnings (exit 0): any line
	// about the unit fails the test.
	if err != nil || strings.Contains(string(out), "kraftd.service") {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}
