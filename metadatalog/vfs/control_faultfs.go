//go:build faultfs

package vfs

import (
	"fmt"
	"os"
	"time"
)

// In a binary built with -tags faultfs (the real-process fault tests build
// one), KRAFTD_FAULTFS names a control file (see ParseControl) and OS
// becomes a FaultFS following it, re-read every 20 ms; KRAFTD_SYNC_LEDGER
// names a file where it records durable sizes (SyncLedger). Release builds
// have no such hook.
func init() {
	path := os.Getenv("KRAFTD_FAULTFS")
	if path == "" {
		return
	}
	var fs FS = osFS{}
	if ledger := os.Getenv("KRAFTD_SYNC_LEDGER"); ledger != "" {
		f, err := os.OpenFile(ledger, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(os.Stderr, "faultfs: %v\n", err)
			os.Exit(1)
		}
		fs = NewSyncLedger(fs, f)
	}
	c := NewControlInjector(path)
	OS = NewFaultFS(fs, c)
	go func() {
		var last string
		for range time.Tick(20 * time.Millisecond) {
			msg := ""
			if err := c.Poll(); err != nil {
				msg = err.Error()
			}
			if msg != last && msg != "" {
				fmt.Fprintf(os.Stderr, "faultfs: %s (keeping the previous rules)\n", msg)
			}
			last = msg
		}
	}()
}
