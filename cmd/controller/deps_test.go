package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLinksNoTestPackages keeps the test-only packages (the scripted
// quorum of raft/rafttest, internal/freeport, testpki, hostile, metadatatest, testenv, controllertest) and test
// dependencies (cockroachdb/datadriven) out of the controller binary: they
// are for tests, and the binary's dependencies are what it ships.
func TestBinaryLinksNoTestPackages(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the binary's packages: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), out)
	}
	for _, p := range deps {
		for _, banned := range []string{
			"github.com/cockroachdb/datadriven",
			"github.com/kraftd/kraftd/raft/rafttest",
			"github.com/kraftd/kraftd/internal/freeport",
			"github.com/kraftd/kraftd/internal/testpki",
			"github.com/kraftd/kraftd/internal/hostile",
			"github.com/kraftd/kraftd/internal/metadatatest",
			"github.com/kraftd/kraftd/internal/testenv",
			"github.com/kraftd/kraftd/controller/controllertest",
		} {
			if p == banned || strings.HasPrefix(p, banned+"/") {
				t.Errorf("the controller binary links %s, a package for tests only", p)
			}
		}
	}
}
