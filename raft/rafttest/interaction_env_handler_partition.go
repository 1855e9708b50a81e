package rafttest

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// handlePartition cuts the network between groups of nodes separated by
// "|" (a node not listed belongs with the first group). A message across
// the cut is dropped when delivered, and the node waiting for it gets a
// timeout.
//
// Example:
//
//	partition 1 | 2 3
//	----
//	ok
func (e *InteractionEnv) handlePartition(t *testing.T, d *datadriven.TestData) {
	e.groups = map[int32]int{}
	g := 0
	for _, a := range d.CmdArgs {
		if a.Key == "|" {
			g++
			continue
		}
		e.groups[e.parseID(t, d, a.Key)] = g
	}
}

// cut reports whether a partition separates a and b.
func (e *InteractionEnv) cut(a, b int32) bool {
	if e.groups == nil {
		return false
	}
	return e.groups[a] != e.groups[b]
}
