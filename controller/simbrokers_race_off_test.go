//go:build !race

package controller_test

// raceBuild reports whether this test binary was built with -race.
const raceBuild = false
