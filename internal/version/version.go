package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Stamped at link time by make dist; variables, not constants, for -X.
var (
	// Version is the release (git describe), "dev" when not stamped.
	Version = "dev"
	// Commit is the full git commit hash, "" when not stamped.
	Commit = ""
)

// Info is what `controller version` reports.
type Info struct {
	Version, Commit string
	// Modified is set when an unstamped build came from a work tree with
	// uncommitted changes.
	Modified  bool
	GoVersion string
	Platform  string // GOOS/GOARCH
}

// Get returns the stamped values, falling back to the VCS settings the Go
// toolchain embeds in binaries built inside a git work tree.
func Get() Info {
	in := Info{Version: Version, Commit: Commit, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if in.Commit != "" {
		return in
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				in.Commit = s.Value
			case "vcs.modified":
				in.Modified = s.Value == "true"
			}
		}
	}
	return in
}

// String is one line in the manner of `go version`:
// "kraftd v0.3.0 commit 0123abc… go1.26.0 linux/amd64".
func (in Info) String() string {
	commit := in.Commit
	switch {
	case commit == "":
		commit = "unknown"
	case in.Modified:
		commit += "+modified"
	}
	return fmt.Sprintf("kraftd %s commit %s %s %s", in.Version, commit, in.GoVersion, in.Platform)
}
