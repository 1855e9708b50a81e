//go:build !unix

package network

// fileLimit reports no limit where RLIMIT_NOFILE does not exist.
func fileLimit() int64 { return 0 }
