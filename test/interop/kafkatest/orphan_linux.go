package kafkatest

import (
	"os/exec"
	"syscall"
)

// dieWithTest has the kernel kill cmd's process when the test binary dies without running
// its cleanups (a test timeout panics past them), so no JVM or kraftd outlives the run.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
