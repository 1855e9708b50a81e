//go:build faultfs

package vfs

import (
	"fmt"
	"os"
	"time"
)

// In a binary built with -tags faultfs (the real-process fault tests build
// one), KRAFTD_FAULTFS names a control file (see ParseControl) and OS
// becomes a FaultFS following it, re-read every 20 ms. Release builds have
// no such hook.
func init() {
	path := os.Getenv("KRAFTD_FAULTFS")
	if path == "" {
		return
	}
	c := NewControlInjector(path)
	OS = NewFaultFS(osFS{}, c)
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
