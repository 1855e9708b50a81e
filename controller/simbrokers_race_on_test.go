//go:build race

package controller_test

// raceBuild reports whether this test binary was built with -race: the
// broker simulator runs on one goroutine, where the detector finds nothing
// and only slows it down, so it runs fewer seeds there.
const raceBuild = true
