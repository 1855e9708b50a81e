//go:build faultfs

package main

import (
	"fmt"
	"os"

	"github.com/kraftd/kraftd/vfs"
	"github.com/kraftd/kraftd/vfs/faultfs"
)

// Built with -tags faultfs (the real-process fault tests build the binary
// so), KRAFTD_FAULTFS wraps every file operation in a fault injector
// following a control file (faultfs.FromEnv). Release builds have no such
// hook and link no fault code.
func init() {
	fs, err := faultfs.FromEnv(vfs.OS)
	if err != nil {
		fmt.Fprintf(os.Stderr, "faultfs: %v\n", err)
		os.Exit(1)
	}
	vfs.OS = fs
}
