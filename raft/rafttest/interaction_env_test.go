package rafttest_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/raft/rafttest"
)

// TestInteractionEnv runs every command once (testdata/commands.txt).
// Regenerate with -rewrite and read the diff before committing it.
func TestInteractionEnv(t *testing.T) {
	env := rafttest.NewInteractionEnv(t, nil)
	datadriven.RunTest(t, filepath.Join("testdata", "commands.txt"), func(t *testing.T, d *datadriven.TestData) string {
		return env.Handle(t, d)
	})
}

// TestInteractionEnvHooks drives a quorum as a state machine's tests do
// (testdata/hooks.txt): OnConfig changes every node's configuration,
// OnStart registers a listener of the test's own on every driver, and the
// test handles a command of its own before passing the rest to Handle.
func TestInteractionEnvHooks(t *testing.T) {
	machines := map[int32]*machine{}
	var env *rafttest.InteractionEnv
	env = rafttest.NewInteractionEnv(t, &rafttest.InteractionOpts{
		OnConfig: func(_ int32, cfg *raft.Config) { cfg.PreVote = false },
		OnStart: func(id int32, d *raft.Driver) {
			m := &machine{id: id, env: env}
			if old := machines[id]; old != nil {
				m.start = old.start + 1
			}
			machines[id] = m
			d.Register(m)
		},
	})
	datadriven.RunTest(t, filepath.Join("testdata", "hooks.txt"), func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "machine" {
			return env.Handle(t, d)
		}
		var id int
		d.ScanArgs(t, "id", &id)
		m := machines[int32(id)]
		if m == nil {
			d.Fatalf(t, "no machine on node %d", id)
		}
		return fmt.Sprintf("machine of start %d applied: %s\n", m.start, strings.Join(m.applied, " "))
	})
}

// machine is a state machine of one incarnation of a node: it applies the
// committed data records, and notes leader changes in the transcript.
type machine struct {
	id      int32
	start   int // the node's starts before this one
	env     *rafttest.InteractionEnv
	applied []string
}

func (m *machine) HandleCommit(batches []raft.CommittedBatch) {
	for _, b := range batches {
		if b.Control {
			continue
		}
		for _, r := range b.Records {
			m.applied = append(m.applied, string(r))
		}
	}
}

func (m *machine) HandleLoadSnapshot(raft.OffsetAndEpoch, raft.SnapshotReader) {}

func (m *machine) HandleLeaderChange(le raft.LeaderAndEpoch) {
	m.env.Printf("  %d machine: leader %d in epoch %d", m.id, le.LeaderID, le.Epoch)
}

func (m *machine) BeginShutdown() {}
