package faults

import (
	"os/exec"
	"syscall"
)

// dieWithTest has the kernel kill cmd's process should the test binary die without running
// its cleanups (a test timeout panics past them), so no node outlives the run.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
