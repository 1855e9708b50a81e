package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A panic on a node's run loop ends the process with exit code 1 and one
// fatal log line naming the node's state and the panic, with the stack in
// that line: no goroutine dump.
func TestRunLoopPanicExitsWithOneLine(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "controller-panic")
	if out, err := exec.Command(goTool(), "build", "-tags", "kraftd_panic_hook", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	c := newCluster(t, 1)
	c.bin = bin
	c.start(1)
	if !c.waitExit(1, 30*time.Second) {
		t.Fatal("the node did not exit after a panic on its run loop")
	}
	var ee *exec.ExitError
	if err := c.nodes[1].exitErr; !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want exit code 1", err)
	}
	b, err := os.ReadFile(c.nodes[1].errPath)
	if err != nil {
		t.Fatal(err)
	}
	var fatal []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "panic on the run loop; stopping the node") {
			fatal = append(fatal, line)
		}
		if strings.HasPrefix(line, "goroutine ") || strings.HasPrefix(line, "panic:") {
			t.Errorf("goroutine dump in the log: %q", line)
		}
	}
	if len(fatal) != 1 {
		t.Fatalf("%d fatal lines, want 1:\n%s", len(fatal), b)
	}
	for _, want := range []string{`"role": "Leader"`, `"leader_id": 1`, `"op": "tick"`, "injected by the kraftd_panic_hook build", "panicOnLead.Tick"} {
		if !strings.Contains(fatal[0], want) {
			t.Errorf("fatal line lacks %s: %s", want, fatal[0])
		}
	}
}
