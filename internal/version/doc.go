// Package version holds what a release build stamps into the binary (make
// dist: go build -ldflags "-X .../internal/version.Version=... -X
// .../internal/version.Commit=..."). An unstamped build (go build, go run,
// tests) reports "dev" and the commit the Go toolchain recorded from the
// working tree, when there was one.
package version
