package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestVersionCommand(t *testing.T) {
	code, out, _ := runCmd(t, "version")
	if code != 0 || !strings.HasPrefix(out, "kraftd dev commit ") || !strings.HasSuffix(out, " "+runtime.GOOS+"/"+runtime.GOARCH+"\n") {
		t.Fatalf("version: %d %q", code, out)
	}
}

// TestVersionStamped links the binary with make dist's -ldflags (stripped,
// version and commit set at link time) and checks what it prints. It keeps
// the compile settings of the other real-process tests (no -trimpath, cgo as
// the environment has it) so the packages come from the build cache and only
// the link runs: -trimpath or CGO_ENABLED=0 would recompile the standard
// library, a minute of make test.
func TestVersionStamped(t *testing.T) {
	skipShort(t)
	bin := filepath.Join(t.TempDir(), "controller")
	const pkg = "github.com/kraftd/kraftd/internal/version"
	build := exec.Command(goTool(), "build", "-o", bin,
		"-ldflags", "-s -w -X "+pkg+".Version=v9.8.7 -X "+pkg+".Commit=0123456789abcdef0123456789abcdef01234567", ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	want := "kraftd v9.8.7 commit 0123456789abcdef0123456789abcdef01234567 " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if err != nil || string(out) != want {
		t.Fatalf("version: %v %q, want %q", err, out, want)
	}
}
