//go:build race

package raft_test

// raceDetector: this test binary was built with -race.
const raceDetector = true
