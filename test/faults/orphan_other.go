//go:build !linux

package faults

import "os/exec"

// dieWithTest is a no-op where the kernel offers no parent-death signal.
func dieWithTest(*exec.Cmd) {}
