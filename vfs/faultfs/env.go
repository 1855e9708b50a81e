package faultfs

import (
	"fmt"
	"os"
	"time"

	"github.com/kraftd/kraftd/vfs"
)

// FromEnv is the hook of a binary built with -tags faultfs (the
// real-process fault tests build one; cmd/controller calls it from a file
// with that tag, so release builds link nothing of this package). When
// KRAFTD_FAULTFS names a control file (see ParseControl) it returns base
// wrapped in an FS following that file, re-read every 20 ms for the life of
// the process; KRAFTD_SYNC_LEDGER, when set, names a file where it records
// durable sizes (SyncLedger). Without KRAFTD_FAULTFS it returns base.
func FromEnv(base vfs.FS) (vfs.FS, error) {
	path := os.Getenv("KRAFTD_FAULTFS")
	if path == "" {
		return base, nil
	}
	fs := base
	if ledger := os.Getenv("KRAFTD_SYNC_LEDGER"); ledger != "" {
		f, err := os.OpenFile(ledger, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		fs = NewSyncLedger(fs, f)
	}
	c := NewControlInjector(path)
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
	return Wrap(fs, c), nil
}
