package kafkatest

import (
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/workload"
	"go.uber.org/zap"
)

// Lines as Kafka 4.4.0's TestRaftServer / controller and kraftd print them.
func TestParseTransitions(t *testing.T) {
	jvm := []struct {
		line string
		want NodeState
	}{
		{`[2026-11-30 12:47:42,583] INFO [RaftManager id=2] Completed transition to Leader(localVoterNode=VoterNode(voterKey=ReplicaKey(id=2, directoryId=sOW9lK6URuywXkhIcYOtnQ), listeners=Endpoints(endpoints={ListenerName(CONTROLLER)=127.0.0.1/<unresolved>:37161}), supportedKRaftVersion=SupportedVersionRange[min_version:0, max_version:1]), epoch=1, epochStartOffset=0, highWatermark=Optional.empty) from CandidateState(localId=2, epoch=1) (org.apache.kafka.raft.QuorumState)`,
			NodeState{Role: "Leader", Epoch: 1, Leader: 2}},
		{`[2026-11-30 13:07:12,617] INFO [RaftManager id=3] Completed transition to FollowerState(fetchTimeoutMs=2000, epoch=2, leader=2, leaderEndpoints=Endpoints(endpoints={ListenerName(CONTROLLER)=127.0.0.1/<unresolved>:41499}), votedKey=Optional.empty, voters=[1, 2, 3], highWatermark=Optional.empty) from UnattachedState(epoch=2, leaderId=OptionalInt.empty) (org.apache.kafka.raft.QuorumState)`,
			NodeState{Role: "Follower", Epoch: 2, Leader: 2}},
		{`[2026-11-30 12:48:00,189] INFO [RaftManager id=2] Completed transition to UnattachedState(epoch=2, leaderId=OptionalInt.empty, votedKey=Optional.empty, voters=[1, 2, 3], electionTimeoutMs=1468, highWatermark=Optional.empty) from ResignedState(localId=2, epoch=1, voters=[1, 2, 3]) (org.apache.kafka.raft.QuorumState)`,
			NodeState{Role: "Unattached", Epoch: 2, Leader: -1}},
	}
	for _, c := range jvm {
		got, ok := parseJVMTransition(c.line, 2)
		if !ok || got != c.want {
			t.Errorf("parseJVMTransition(%.80q...) = %+v %v, want %+v", c.line, got, ok, c.want)
		}
	}
	kraftd := []struct {
		line string
		want NodeState
	}{
		{`{"level":"info","ts":"2026-11-30T12:47:42.681Z","logger":"raft","msg":"completed transition","node_id":1,"node":1,"from":"Voted(epoch 1)","to":"Follower(epoch 1)","leader":2,"voted":2}`,
			NodeState{Role: "Follower", Epoch: 1, Leader: 2}},
		{`{"level":"info","ts":"2026-11-30T12:47:42.570Z","logger":"raft","msg":"completed transition","node_id":1,"node":1,"from":"Unattached(epoch 1)","to":"Voted(epoch 1)","leader":-1,"voted":2}`,
			NodeState{Role: "Voted", Epoch: 1, Leader: -1}},
	}
	for _, c := range kraftd {
		got, ok := parseKraftdTransition(c.line)
		if !ok || got != c.want {
			t.Errorf("parseKraftdTransition(%.80q...) = %+v %v, want %+v", c.line, got, ok, c.want)
		}
	}
	if _, ok := parseKraftdTransition(`{"msg":"completed transition","to":"Leader"}`); ok {
		t.Error("a transition without an epoch parsed")
	}
}

func TestParseKraftdStats(t *testing.T) {
	out := `{"level":"info","msg":"starting"}
{"node_id":1,"leader_id":2,"epoch":1,"role":"Follower","high_watermark":3356,"committed_records":3355,"interval_sec":1,"records_per_sec":200.98,"mb_per_sec":0.051,"latency_count":0,"p50_ms":0,"p75_ms":0,"p99_ms":0,"p999_ms":0,"max_ms":0,"cpu_seconds":0.346,"peak_rss_mb":14.93,"final":false}
{"node_id":1,"leader_id":2,"epoch":1,"role":"Follower","high_watermark":3472,"committed_records":3471,"interval_sec":21.829,"records_per_sec":159.01,"mb_per_sec":0.041,"latency_count":0,"p50_ms":0,"p75_ms":0,"p99_ms":0,"p999_ms":0,"max_ms":0,"cpu_seconds":0.357,"peak_rss_mb":15.055,"final":true}
`
	s := ParseKraftdStats(out)
	if len(s) != 2 || s[0].HighWatermark != 3356 || s[0].LeaderID != 2 || s[0].RecordsPerSec != 200.98 || !s[1].Final || s[1].IntervalSec != 21.829 {
		t.Errorf("ParseKraftdStats = %+v", s)
	}
	// The line the workload prints today, between JSON log lines, whatever its field order.
	var b strings.Builder
	b.WriteString(`{"level":"info","ts":"2026-12-02T05:00:00.000Z","msg":"became leader","epoch":3}` + "\n")
	w := workload.New(workload.Config{StatsFormat: workload.StatsJSON, RecordSize: 1, MaxInFlight: 1}, 7, true, &b, zap.NewNop(), time.Unix(1000, 0))
	w.PrintSummary(time.Unix(1002, 0))
	b.WriteString(`{"level":"info","msg":"shutting down"}` + "\n")
	if s := ParseKraftdStats(b.String()); len(s) != 1 || s[0].NodeID != 7 || !s[0].Final {
		t.Errorf("ParseKraftdStats of the workload's own line %q = %+v", b.String(), s)
	}
}
