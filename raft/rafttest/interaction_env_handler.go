package rafttest

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// Handle runs one command of a script and returns what it printed ("ok"
// when nothing). Node ids are the positional arguments. The commands, each
// documented with an example in its own file:
//
//	add-nodes 3 [voters=(1,2,3)] [pre-vote=false] [dynamic|observer|dirs] [defer]
//	prefer 3 leaders=(1,2)
//	tick 1 [2 ...] 2s / advance 500ms
//	deliver-msgs [2] [from=1] [type=Vote] / drop-msgs [2] [from=1] [type=Vote]
//	stabilize / msgs
//	corrupt-msgs 2
//	propose 1 a b
//	resign 1 / shutdown 1
//	crash 2 / restart 2
//	partition 1 | 2 3 / heal
//	raw-request 2 from=1 BeginQuorumEpoch epoch=5 leader=1
//	snapshot 1
//	status [1 ...] / log 1 / describe-quorum 1
//	_breakpoint
//
// An unknown command fails the test; a test with commands of its own
// handles them before calling Handle.
func (e *InteractionEnv) Handle(t *testing.T, d *datadriven.TestData) string {
	e.out.Reset()
	switch d.Cmd {
	case "add-nodes":
		e.handleAddNodes(t, d)
	case "prefer":
		e.handlePrefer(t, d)
	case "tick":
		e.handleTick(t, d)
	case "advance":
		e.handleAdvance(t, d)
	case "deliver-msgs", "drop-msgs":
		e.handleMsgs(t, d, d.Cmd == "drop-msgs")
	case "stabilize":
		e.handleStabilize(t, d)
	case "msgs":
		e.handleListMsgs()
	case "corrupt-msgs":
		e.handleCorrupt(t, d)
	case "propose":
		e.handlePropose(t, d)
	case "resign":
		e.handleResign(t, d)
	case "shutdown":
		e.handleShutdown(t, d)
	case "crash":
		e.handleCrash(t, d)
	case "restart":
		e.handleRestart(t, d)
	case "partition":
		e.handlePartition(t, d)
	case "heal":
		e.handleHeal()
	case "raw-request":
		e.handleRawRequest(t, d)
	case "snapshot":
		e.handleSnapshot(t, d)
	case "status":
		e.handleStatus(t, d)
	case "log":
		e.handleLog(t, d)
	case "describe-quorum":
		e.handleDescribeQuorum(t, d)
	case "_breakpoint":
		// A no-op: a place for a debugger breakpoint in a script.
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	if e.out.Len() == 0 {
		return "ok\n"
	}
	return e.out.String()
}

// ids returns the positional node ids of a command.
func (e *InteractionEnv) ids(t *testing.T, d *datadriven.TestData) []int32 {
	var ids []int32
	for _, a := range d.CmdArgs {
		if len(a.Vals) == 0 {
			if _, err := strconv.Atoi(a.Key); err == nil {
				ids = append(ids, e.parseID(t, d, a.Key))
			}
		}
	}
	return ids
}

// idsAndDuration parses "1 2 500ms": node ids, then one duration.
func (e *InteractionEnv) idsAndDuration(t *testing.T, d *datadriven.TestData) ([]int32, time.Duration) {
	if len(d.CmdArgs) == 0 {
		d.Fatalf(t, "%s: missing duration", d.Cmd)
	}
	last := d.CmdArgs[len(d.CmdArgs)-1].Key
	dur, err := time.ParseDuration(last)
	if err != nil {
		d.Fatalf(t, "%s: bad duration %q", d.Cmd, last)
	}
	return e.ids(t, d), dur
}

func (e *InteractionEnv) parseID(t *testing.T, d *datadriven.TestData, s string) int32 {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		d.Fatalf(t, "bad node id %q", s)
	}
	return int32(v)
}

// firstID is a command's first positional node id.
func (e *InteractionEnv) firstID(t *testing.T, d *datadriven.TestData) int32 {
	ids := e.ids(t, d)
	if len(ids) == 0 {
		d.Fatalf(t, "%s: name a node", d.Cmd)
	}
	return ids[0]
}

func (e *InteractionEnv) upNode(t *testing.T, d *datadriven.TestData, id int32) *envNode {
	n := e.node(id)
	if n == nil || !n.up {
		d.Fatalf(t, "node %d is not running", id)
	}
	return n
}
