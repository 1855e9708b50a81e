// Package testenv is what tests share about their environment: one way to skip, which a CI
// run turns into a failure, and one way to wait for a condition. Test-only: no binary links
// it.
package testenv

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// CIEnv is the environment variable .ci/run sets: every test CI runs must run, so a missing
// prerequisite (a tool, root, a kernel feature) fails there instead of skipping.
const CIEnv = "KRAFTD_CI"

// CI reports whether the tests run under CI (CIEnv set to anything but "" or "0").
func CI() bool {
	v := os.Getenv(CIEnv)
	return v != "" && v != "0"
}

// Skip skips t with the reason, or, under CI, fails it with the reason: a prerequisite CI
// lacks is a defect of CI (.ci/run installs what tests need), not a reason to pass.
func Skip(t testing.TB, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	if CI() {
		t.Fatalf("would skip under %s=%s: %s", CIEnv, os.Getenv(CIEnv), reason)
		return
	}
	t.Skip(reason)
}

// SkipShort skips a long test under -short (through Skip: CI runs without -short).
func SkipShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		Skip(t, "%s; skipped under -short", what)
	}
}

// Poll is WaitFor's interval between two looks at the condition.
const Poll = 20 * time.Millisecond

// WaitFor waits until cond holds, looking every Poll, and fails t naming what it waited
// for when timeout passes first. timeout bounds a hang, not a speed: give it room for a
// loaded machine.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Eventually(timeout, cond) {
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}

// Eventually reports whether cond held, looked at every Poll, before timeout passed (the
// last look is after the deadline).
func Eventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return cond()
		}
		time.Sleep(Poll)
	}
	return true
}
