//go:build unix

package main

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// keepSysmonAwake re-executes this program with sysmonSetting in GODEBUG
// when args name a node command and the environment does not say otherwise
// (the runtime reads GODEBUG's schedtrace only at start). It returns when it
// did not re-execute; a failed exec is reported and the node runs with Go's
// default.
func keepSysmonAwake(args []string, stderr io.Writer) {
	if len(args) == 0 || !sysmonCommands[args[0]] {
		return
	}
	env, add := sysmonEnv(os.Environ())
	if !add {
		return
	}
	exe, err := os.Executable()
	if err == nil {
		err = syscall.Exec(exe, os.Args, env)
	}
	fmt.Fprintf(stderr, "controller: running without %s (re-executing %s: %v)\n", sysmonSetting, exe, err)
}
