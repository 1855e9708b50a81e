package node

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/topics"
)

// panickingApp panics in the first Tick after its node became leader.
type panickingApp struct{ ignoreCommits }

func (panickingApp) Tick(now time.Time, st raft.Status, _ Writer) time.Time {
	if st.Role == raft.RoleLeader {
		panic("injected tick panic")
	}
	return now.Add(time.Hour)
}

// A panic on the loop ends Run with an error and one fatal line that names
// the node's state, what the loop was doing, the panic and its stack.
func TestLoopPanicStopsTheNode(t *testing.T) {
	cfg, _ := singleVoter(t)
	core, logs := observer.New(zap.InfoLevel)
	n, err := New(cfg, Options{ClusterID: "MkU3OEVBNTcwNTJENDM2Qg", TopicName: topics.ClusterMetadata,
		App: panickingApp{}, Logger: zap.New(core), ShutdownTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- n.Run(context.Background()) }()
	select {
	case err = <-ran:
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after a panic on the loop")
	}
	if err == nil || !strings.Contains(err.Error(), "injected tick panic") {
		t.Fatalf("Run: %v, want the panic", err)
	}
	lines := logs.FilterMessage("fatal: panic on the run loop; stopping the node").All()
	if len(lines) != 1 {
		t.Fatalf("%d fatal lines, want 1", len(lines))
	}
	f := lines[0].ContextMap()
	if fmt.Sprintf("%v %v %v", f["role"], f["epoch"], f["leader_id"]) != "Leader 1 1" ||
		f["panic"] != "injected tick panic" || f["doing"].(map[string]any)["op"] != "tick" ||
		!strings.Contains(f["stack"].(string), "panickingApp.Tick") {
		t.Fatalf("fatal line fields %v", f)
	}
}

// The fatal line of a panic while stepping names the message.
func TestPanicNamesTheMessage(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	n := testNodeWith(t, zap.New(core))
	req := kmsg.NewPtrFetchRequest()
	req.Version = 17
	n.doing = activity{op: "step", msg: raft.Message{Request: req, Ref: &reqRef{remote: "10.0.0.1:5000", corr: 42}}}
	if err := n.panicked("boom"); err == nil {
		t.Fatal("no error")
	}
	n.doing = activity{op: "step", msg: raft.Message{From: 3, Corr: 9, Err: errors.New("timed out")}}
	_ = n.panicked("boom")
	all := logs.All()
	if len(all) != 2 {
		t.Fatalf("%d lines", len(all))
	}
	want := map[string]any{"op": "step", "request": "Fetch", "api_key": int64(1), "api_version": int64(17), "correlation_id": int64(42), "remote": "10.0.0.1:5000"}
	if got := all[0].ContextMap()["doing"].(map[string]any); !sameFields(got, want) {
		t.Fatalf("request: %v, want %v", got, want)
	}
	want = map[string]any{"op": "step", "peer": int64(3), "correlation": uint64(9), "send_error": "timed out"}
	if got := all[1].ContextMap()["doing"].(map[string]any); !sameFields(got, want) {
		t.Fatalf("response: %v, want %v", got, want)
	}
}

func sameFields(got, want map[string]any) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if fmt.Sprint(got[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}
