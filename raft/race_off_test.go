//go:build !race

package raft_test

// raceDetector reports whether this test binary was built with -race.
const raceDetector = false
