//go:build unix

package network

import "syscall"

// fileLimit returns the process's soft RLIMIT_NOFILE (Go raises it to the hard limit at
// start on Linux), or 0 when it cannot be read or is unlimited.
func fileLimit() int64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<62 {
		return 0
	}
	return int64(rl.Cur)
}
