package rafttest

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// handleLog prints a node's log (a crashed node's too): start, end and
// flushed offsets, then each batch as base..last@epoch and its records.
//
// Example:
//
//	log 1
//	----
//	1 log start=0 end=5 flushed=5 [0..0@1 LeaderChange, 1..1@1 a, 2..3@1 b c, 4..4@1 d]
func (e *InteractionEnv) handleLog(t *testing.T, d *datadriven.TestData) {
	id := e.firstID(t, d)
	n := e.node(id)
	if n == nil {
		d.Fatalf(t, "no node %d", id)
	}
	data, err := n.log.Read(n.log.StartOffset(), 1<<30)
	if err != nil {
		d.Fatalf(t, "read log: %v", err)
	}
	e.printf("%d log start=%d end=%d flushed=%d %s", n.id, n.log.StartOffset(), n.log.EndOffset().Offset, n.log.FlushedOffset(), describeBatches(data))
}
