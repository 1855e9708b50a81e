//go:build !linux

package kafkatest

import "os/exec"

// dieWithTest is a no-op where the kernel offers no parent-death signal.
func dieWithTest(*exec.Cmd) {}
