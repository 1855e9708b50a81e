package metrics

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/raft"
)

func leaderView(t testing.TB) View {
	t.Helper()
	vs, err := raft.NewVoterSet([]raft.VoterNode{{Key: raft.ReplicaKey{ID: 1}}, {Key: raft.ReplicaKey{ID: 2}}, {Key: raft.ReplicaKey{ID: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	return View{
		Status: raft.Status{NodeID: 1, Role: raft.RoleLeader, Epoch: 7, LeaderID: 1, HighWatermark: 40, LogEndOffset: 42,
			LogEndEpoch: 7, VotedID: 1, Voters: vs, IsVoter: true, CommittedInEpoch: true, Observers: 2, LeaderHighWatermark: -1},
		Voters:         []raft.ReplicaProgress{{ID: 1, EndOffset: 42}, {ID: 2, EndOffset: 40}, {ID: 3, EndOffset: -1}},
		LogStartOffset: 5, LogSizeBytes: 4096, LogSegments: 2, ParkedFetches: 1,
		Listeners: []network.ListenerStats{{Listener: "CONTROLLER", Open: 3, Accepted: 4, BytesIn: 100, BytesOut: 200}},
		Peers:     []network.PeerState{{ID: 2, Connected: true}, {ID: 3}},
	}
}

// Every Kafka raft metric and kraftd gauge, with its value from the View.
func TestCollectorValues(t *testing.T) {
	c := newClock()
	v := leaderView(t)
	v.Voters[0].LastFetch = c.now()
	v.Voters[1].LastFetch = c.now().Add(-1500 * time.Millisecond)
	m := newMetrics(fixedView(v), c.fn(), c.now)
	m.Raft().Committed(4, 8*time.Millisecond)
	m.Raft().ElectionFinished(120 * time.Millisecond)
	m.Raft().Appended(30)
	m.Raft().Fsync(time.Millisecond)
	got := gather(t, m.Registry())
	want := map[string]float64{
		"kafka_server_raft_metrics_current_state{state=leader}":          1,
		"kafka_server_raft_metrics_current_state{state=follower}":        0,
		"kafka_server_raft_metrics_current_state{state=unattached}":      0,
		"kafka_server_raft_metrics_current_leader":                       1,
		"kafka_server_raft_metrics_current_vote":                         1,
		"kafka_server_raft_metrics_current_epoch":                        7,
		"kafka_server_raft_metrics_high_watermark":                       40,
		"kafka_server_raft_metrics_log_end_offset":                       42,
		"kafka_server_raft_metrics_log_end_epoch":                        7,
		"kafka_server_raft_metrics_number_unknown_voter_connections":     0,
		"kafka_server_raft_metrics_number_of_voters":                     3,
		"kafka_server_raft_metrics_number_of_observers":                  2,
		"kafka_server_raft_metrics_uncommitted_voter_change":             0,
		"kafka_server_raft_metrics_commit_latency_avg":                   2, // 8 ms over 4 records, as Kafka divides
		"kafka_server_raft_metrics_commit_latency_max":                   2,
		"kafka_server_raft_metrics_election_latency_avg":                 120,
		"kafka_server_raft_metrics_election_latency_max":                 120,
		"kafka_server_raft_metrics_append_records_rate":                  1, // 30 records over the 30 s minimum window
		"kafka_server_raft_metrics_fetch_records_rate":                   0,
		"kafka_server_raft_metrics_poll_idle_ratio_avg":                  1,
		"kraftd_log_start_offset":                                        5,
		"kraftd_log_size_bytes":                                          4096,
		"kraftd_log_segments":                                            2,
		"kraftd_raft_purgatory_size":                                     1,
		"kraftd_raft_voter_lag_records{voter=1}":                         0,
		"kraftd_raft_voter_lag_records{voter=2}":                         2,
		"kraftd_raft_voter_lag_records{voter=3}":                         42,
		"kraftd_raft_voter_last_fetch_age_seconds{voter=2}":              1.5,
		"kraftd_network_connections{listener=CONTROLLER}":                3,
		"kraftd_network_connections_accepted_total{listener=CONTROLLER}": 4,
		"kraftd_network_received_bytes_total{listener=CONTROLLER}":       100,
		"kraftd_network_sent_bytes_total{listener=CONTROLLER}":           200,
		"kraftd_network_peer_connected{peer=2}":                          1,
		"kraftd_network_peer_connected{peer=3}":                          0,
		"kraftd_raft_commit_latency_seconds_count":                       1,
		"kraftd_raft_election_duration_seconds_count":                    1,
		"kraftd_log_fsync_duration_seconds_count":                        1,
		"kraftd_raft_appended_records_total":                             30,
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || math.Abs(g-w) > 1e-9 {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, w)
		}
	}
	if _, ok := got["kraftd_raft_voter_last_fetch_age_seconds{voter=3}"]; ok {
		t.Error("fetch age of a voter that never fetched")
	}
}

// Kafka registers number-of-observers and uncommitted-voter-change on the
// leader only; a follower has neither.
func TestCollectorFollower(t *testing.T) {
	c := newClock()
	v := leaderView(t)
	v.Status.Role, v.Status.LeaderID, v.Status.NodeID, v.Status.VotedID = raft.RoleFollower, 2, 1, -1
	v.Voters = nil
	got := gather(t, newMetrics(fixedView(v), c.fn(), c.now).Registry())
	for _, k := range []string{"kafka_server_raft_metrics_number_of_observers", "kafka_server_raft_metrics_uncommitted_voter_change"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s on a follower", k)
		}
	}
	if got["kafka_server_raft_metrics_current_state{state=follower}"] != 1 || got["kafka_server_raft_metrics_current_vote"] != -1 ||
		got["kafka_server_raft_metrics_current_leader"] != 2 {
		t.Errorf("follower: %v", got)
	}
	if !math.IsNaN(got["kafka_server_raft_metrics_commit_latency_avg"]) {
		t.Errorf("commit latency without commits: %v, want NaN as Kafka", got["kafka_server_raft_metrics_commit_latency_avg"])
	}
}

// Kafka 4.4's current-state values, from KafkaRaftMetrics.
func TestKafkaState(t *testing.T) {
	for _, c := range []struct {
		st   raft.Status
		want string
	}{
		{raft.Status{Role: raft.RoleLeader}, "leader"},
		{raft.Status{Role: raft.RoleProspective, VotedID: -1}, "prospective"},
		{raft.Status{Role: raft.RoleProspective, VotedID: 3}, "prospective-voted"},
		{raft.Status{Role: raft.RoleCandidate, VotedID: 1}, "candidate"},
		{raft.Status{Role: raft.RoleVoted, VotedID: 2}, "unattached-voted"},
		{raft.Status{Role: raft.RoleFollower, IsVoter: true}, "follower"},
		{raft.Status{Role: raft.RoleFollower}, "observer"},
		{raft.Status{Role: raft.RoleUnattached, VotedID: -1}, "unattached"},
		{raft.Status{Role: raft.RoleResigned}, "unattached"},
	} {
		if got := KafkaState(c.st); got != c.want {
			t.Errorf("%v: %q, want %q", c.st.Role, got, c.want)
		}
		if !slices.Contains(KafkaStates, c.want) {
			t.Errorf("%q not in KafkaStates", c.want)
		}
	}
}

// The golden list of metric families a node exports (besides the Go
// runtime and process ones): a rename is a breaking change for dashboards.
func TestMetricNames(t *testing.T) {
	c := newClock()
	v := leaderView(t)
	v.Voters[1].LastFetch = c.now()
	m := newMetrics(fixedView(v), c.fn(), c.now)
	m.OnRequest(network.RequestDone{Listener: "CONTROLLER", APIKey: 1, Response: nil})
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mf := range mfs {
		if n := mf.GetName(); !strings.HasPrefix(n, "go_") && !strings.HasPrefix(n, "process_") {
			names = append(names, n)
		}
	}
	want := []string{
		"kafka_server_raft_metrics_append_records_rate",
		"kafka_server_raft_metrics_commit_latency_avg",
		"kafka_server_raft_metrics_commit_latency_max",
		"kafka_server_raft_metrics_current_epoch",
		"kafka_server_raft_metrics_current_leader",
		"kafka_server_raft_metrics_current_state",
		"kafka_server_raft_metrics_current_vote",
		"kafka_server_raft_metrics_election_latency_avg",
		"kafka_server_raft_metrics_election_latency_max",
		"kafka_server_raft_metrics_fetch_records_rate",
		"kafka_server_raft_metrics_high_watermark",
		"kafka_server_raft_metrics_log_end_epoch",
		"kafka_server_raft_metrics_log_end_offset",
		"kafka_server_raft_metrics_number_of_observers",
		"kafka_server_raft_metrics_number_of_voters",
		"kafka_server_raft_metrics_number_unknown_voter_connections",
		"kafka_server_raft_metrics_poll_idle_ratio_avg",
		"kafka_server_raft_metrics_uncommitted_voter_change",
		"kraftd_log_fsync_duration_seconds",
		"kraftd_log_segments",
		"kraftd_log_size_bytes",
		"kraftd_log_start_offset",
		"kraftd_network_connections",
		"kraftd_network_connections_accepted_total",
		"kraftd_network_peer_connected",
		"kraftd_network_received_bytes_total",
		"kraftd_network_request_duration_seconds",
		"kraftd_network_request_errors_total",
		"kraftd_network_requests_total",
		"kraftd_network_sent_bytes_total",
		"kraftd_raft_appended_records_total",
		"kraftd_raft_commit_latency_seconds",
		"kraftd_raft_election_duration_seconds",
		"kraftd_raft_fetched_records_total",
		"kraftd_raft_purgatory_expirations_total",
		"kraftd_raft_purgatory_size",
		"kraftd_raft_snapshot_fetched_bytes_total",
		"kraftd_raft_snapshot_fetches_total",
		"kraftd_raft_voter_lag_records",
		"kraftd_raft_voter_last_fetch_age_seconds",
	}
	if !slices.Equal(names, want) {
		t.Errorf("metric names:\n got %q\nwant %q", names, want)
	}
}

// Kafka 4.4's current-vote: the node itself while it leads or stands, the
// vote recorded in the epoch on any other role but Resigned.
func TestKafkaVote(t *testing.T) {
	for _, c := range []struct {
		role  raft.Role
		voted int32
		want  int32
	}{
		{raft.RoleLeader, 1, 1},
		{raft.RoleCandidate, 1, 1},
		{raft.RoleFollower, 2, 2},
		{raft.RoleFollower, -1, -1},
		{raft.RoleProspective, 3, 3},
		{raft.RoleVoted, 2, 2},
		{raft.RoleUnattached, -1, -1},
		{raft.RoleResigned, 1, -1},
	} {
		if got := kafkaVote(raft.Status{NodeID: 1, Role: c.role, VotedID: c.voted}); got != c.want {
			t.Errorf("%v voted %d: current-vote %d, want %d", c.role, c.voted, got, c.want)
		}
	}
}

// Kafka's high-watermark is unknown on a leader that has not committed in
// its epoch and on a resigned one.
func TestKafkaHighWatermark(t *testing.T) {
	for _, c := range []struct {
		st   raft.Status
		want int64
	}{
		{raft.Status{Role: raft.RoleLeader, HighWatermark: 10, CommittedInEpoch: true}, 10},
		{raft.Status{Role: raft.RoleLeader, HighWatermark: 10}, -1},
		{raft.Status{Role: raft.RoleResigned, HighWatermark: 10}, -1},
		{raft.Status{Role: raft.RoleCandidate, HighWatermark: 10}, 10},
		{raft.Status{Role: raft.RoleFollower, HighWatermark: 7}, 7},
	} {
		if got := kafkaHighWatermark(c.st); got != c.want {
			t.Errorf("%v: %d, want %d", c.st.Role, got, c.want)
		}
	}
}
