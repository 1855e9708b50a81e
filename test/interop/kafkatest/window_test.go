package kafkatest

import (
	"testing"
	"time"
)

// Lines as a Kafka 4.4.0 controller logs them under the harness's log4j2 layout.
const (
	activationOut = "[2026-12-02 01:02:03,456] INFO [QuorumController id=2] Becoming the active controller at epoch 7, next write offset 1234. (org.apache.kafka.controller.QuorumController)"
	renounceOut   = "[2026-12-02 01:02:09,001] WARN [QuorumController id=2] Renouncing the leadership due to a metadata log event. We were the leader at epoch 7, but in the new epoch 8, the leader is 3. Reverting to last stable offset 1300. (org.apache.kafka.controller.QuorumController)"
)

func TestParseActivation(t *testing.T) {
	a, ok := parseActivation(activationOut, 2)
	want := time.Date(2026, 12, 2, 1, 2, 3, 456e6, time.Local)
	if !ok || a.Node != 2 || a.Epoch != 7 || !a.At.Equal(want) {
		t.Fatalf("parseActivation = %+v, %v; want node 2 epoch 7 at %v", a, ok, want)
	}
	if _, ok := parseActivation("[2026-12-02 01:02:03,456] INFO Completed transition to Leader", 2); ok {
		t.Error("a raft transition parsed as an activation")
	}
	if _, ok := parseActivation("[garbage] INFO "+ActivationLine+"7", 2); ok {
		t.Error("a line without a timestamp parsed as an activation")
	}
}

func TestActiveIn(t *testing.T) {
	for _, tc := range []struct {
		out    string
		epoch  int32
		active bool
	}{
		{"", -1, false},
		{activationOut + "\n", 7, true},
		{activationOut + "\n" + renounceOut + "\n", -1, false},
		{renounceOut + "\n" + activationOut + "\n", 7, true},
		{"[x] " + ActivationLine, -1, false}, // a line still being written
	} {
		epoch, active := activeIn(tc.out)
		if epoch != tc.epoch || active != tc.active {
			t.Errorf("activeIn(%q) = %d, %v; want %d, %v", tc.out, epoch, active, tc.epoch, tc.active)
		}
	}
}

func TestWindowStats(t *testing.T) {
	ws := []Outage{{Window: 3 * time.Second}, {Window: time.Second}, {Window: 2 * time.Second, Open: true}, {Window: 10 * time.Second}}
	median, maximum := WindowStats(ws)
	if median != 2500*time.Millisecond || maximum != 10*time.Second {
		t.Errorf("WindowStats = %v, %v; want 2.5s, 10s", median, maximum)
	}
	if got, want := WindowsLine("kafka,kafka,kraftd", ws), "controllerless-windows quorum=kafka,kafka,kraftd kills=4 open=1 median_ms=2500 max_ms=10000 windows_ms=3000,1000,>2000,10000"; got != want {
		t.Errorf("WindowsLine =\n%s\nwant\n%s", got, want)
	}
	if m, x := WindowStats(nil); m != 0 || x != 0 {
		t.Errorf("WindowStats(nil) = %v, %v", m, x)
	}
}

func TestParseKraftdLeads(t *testing.T) {
	out := `{"level":"info","ts":"2026-12-02T01:02:03.456Z","logger":"raft","msg":"became leader","node_id":3,"node":3,"epoch":7,"epochStartOffset":12}
{"level":"info","ts":"2026-12-02T01:02:04.000Z","logger":"raft","msg":"resigning to hand leadership to a voter that can act as the active controller","epoch":7}
not json "became leader"
{"level":"info","ts":"bad","msg":"became leader","epoch":8}
{"level":"info","ts":"2026-12-02T01:02:09.001Z","logger":"raft","msg":"became leader","node_id":3,"node":3,"epoch":9}`
	leads := parseKraftdLeads(out, 3)
	if len(leads) != 2 {
		t.Fatalf("parseKraftdLeads = %+v, want epochs 7 and 9", leads)
	}
	want := time.Date(2026, 12, 2, 1, 2, 3, 456e6, time.UTC)
	if l := leads[0]; l.Node != 3 || l.Epoch != 7 || !l.At.Equal(want) || !l.Resigned {
		t.Errorf("first lead %+v, want node 3 epoch 7 at %v, resigned", l, want)
	}
	if leads[1].Epoch != 9 || leads[1].Resigned {
		t.Errorf("second lead %+v, want epoch 9, not resigned", leads[1])
	}
}

// TestMatchKraftdLeads: kraftd (node 3) leads epoch 2 while Kafka controller 2 follows
// and then dies; controller 1, restarting, never follows epoch 2 and is elected in epoch 5
// after kraftd led epoch 4, which it followed: epoch 2 had no successor to hand over to,
// epoch 4's hand-over is timed from controller 1's follow.
func TestMatchKraftdLeads(t *testing.T) {
	at := func(ms int) time.Time {
		return time.Date(2026, 12, 2, 3, 30, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)
	}
	leads := []KraftdLead{{Node: 3, Epoch: 2, At: at(0)}, {Node: 3, Epoch: 4, At: at(8000)}, {Node: 3, Epoch: 6, At: at(20000)}}
	follows := map[[3]int32]time.Time{{2, 3, 2}: at(10), {4, 3, 1}: at(8300), {6, 3, 2}: at(20100)}
	raftLeads := []Activation{{Node: 1, Epoch: 5, At: at(8500)}}
	matchKraftdLeads(leads, follows, raftLeads, at(21000))
	if l := leads[0]; !l.Unfollowed || l.Open || l.Next.Epoch != 5 || !l.Followed.IsZero() {
		t.Errorf("epoch 2: %+v, want its successor (node 1, epoch 5) not to have followed it", l)
	}
	if l := leads[1]; l.Unfollowed || l.Open || !l.Followed.Equal(at(8300)) || l.Handoff != 200*time.Millisecond {
		t.Errorf("epoch 4: %+v, want followed at +8.3s and handed over 200ms later", l)
	}
	if l := leads[2]; l.Unfollowed || !l.Open || l.Handoff != time.Second {
		t.Errorf("epoch 6: %+v, want open for 1s with a Kafka controller following", l)
	}
}

func TestJVMFollowLine(t *testing.T) {
	line := "[2026-12-02 02:27:54,976] INFO [RaftManager id=1] Completed transition to FollowerState(fetchTimeoutMs=2000, epoch=2, leader=3, leaderEndpoints=Endpoints(endpoints={}), votedKey=Optional.empty) from UnattachedState(epoch=2) (org.apache.kafka.raft.QuorumState)"
	m := jvmFollowRE.FindStringSubmatch(line)
	if m == nil || m[1] != "2026-12-02 02:27:54,976" || m[2] != "2" || m[3] != "3" {
		t.Fatalf("jvmFollowRE on a 4.4 follower transition: %q", m)
	}
	if jvmFollowRE.MatchString("[2026-12-02 02:27:54,976] INFO [RaftManager id=1] Attempting durable transition to FollowerState(fetchTimeoutMs=2000, epoch=2, leader=3)") {
		t.Error("an attempted transition matched")
	}
}

func TestJVMLeaderLine(t *testing.T) {
	line := "[2026-12-02 02:27:58,219] INFO [RaftManager id=2] Completed transition to Leader(localVoterNode=VoterNode(voterKey=ReplicaKey(id=2, directoryId=LsFvqwo3ExWzbNeBpBsnWw)), epoch=3, epochStartOffset=19, highWatermark=Optional.empty) from CandidateState(localId=2, epoch=3) (org.apache.kafka.raft.QuorumState)"
	m := jvmLeaderRE.FindStringSubmatch(line)
	if m == nil || m[1] != "2026-12-02 02:27:58,219" || m[2] != "3" {
		t.Fatalf("jvmLeaderRE on a 4.4 leader transition: %q", m)
	}
}
