package raft_test

// Golden interaction tests (testdata/interaction/*.txt, cockroachdb/datadriven)
// in the manner of etcd-io/raft's: real Drivers step through a scripted
// scenario (rafttest.InteractionEnv, whose files document each command)
// and the expected output lists every message sent, every quorum-state
// write and every state change, so the file reads as the protocol.
// Regenerate with
//
//	go test ./raft -run Interaction -rewrite
//
// and commit the new output only after reading the diff: a golden file that
// records a bug is a defect.

import (
	"path/filepath"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/kraftd/kraftd/raft/rafttest"
)

func TestInteraction(t *testing.T) {
	datadriven.Walk(t, "testdata/interaction", func(t *testing.T, path string) {
		if filepath.Ext(path) != ".txt" {
			return
		}
		e := rafttest.NewInteractionEnv(t, nil)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return e.Handle(t, d)
		})
	})
}
