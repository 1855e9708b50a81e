package main

import (
	"fmt"
	"io"

	"github.com/kraftd/kraftd/internal/version"
)

// runVersion prints the release, commit, Go version and platform on one
// line (internal/version; make dist stamps the first two).
func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintln(stdout, version.Get())
	return nil
}
