package metrics

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/raft"
)

func TestReadiness(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	const timeout = 2 * time.Second
	follower := func(lastFetch time.Duration, leo, leaderHW int64) raft.Status {
		st := raft.Status{Role: raft.RoleFollower, IsVoter: true, Epoch: 3, LeaderID: 2, LogEndOffset: leo,
			HighWatermark: min(leo, leaderHW), LeaderHighWatermark: leaderHW}
		if lastFetch >= 0 {
			st.LastFetch = now.Add(-lastFetch)
		}
		return st
	}
	for _, c := range []struct {
		name   string
		st     raft.Status
		ready  bool
		reason string
	}{
		{"leader committed", raft.Status{Role: raft.RoleLeader, Epoch: 3, LeaderID: 1, CommittedInEpoch: true, HighWatermark: 10}, true, "leader of epoch 3"},
		{"leader not committed", raft.Status{Role: raft.RoleLeader, Epoch: 3, LeaderID: 1, HighWatermark: 9}, false, "has not committed"},
		{"unattached", raft.Status{Role: raft.RoleUnattached, Epoch: 4, LeaderID: -1}, false, "no leader known in epoch 4 (state unattached)"},
		{"candidate", raft.Status{Role: raft.RoleCandidate, Epoch: 4, LeaderID: -1, VotedID: 1}, false, "state candidate"},
		{"resigned", raft.Status{Role: raft.RoleResigned, Epoch: 4, LeaderID: 1}, false, "not following leader 1 of epoch 4 (state unattached)"},
		{"prospective after its leader", raft.Status{Role: raft.RoleProspective, Epoch: 4, LeaderID: 2, VotedID: 2}, false, "(state prospective-voted)"},
		{"follower caught up", follower(100*time.Millisecond, 50, 50), true, "caught up to its high watermark 50"},
		{"follower ahead of the hw", follower(100*time.Millisecond, 52, 50), true, "caught up"},
		{"follower catching up", follower(100*time.Millisecond, 20, 50), false, "30 behind the leader's high watermark 50"},
		{"follower never fetched", follower(-1, 50, -1), false, "has not answered a fetch yet"},
		{"follower fetch too old", follower(3*time.Second, 50, 50), false, "3000 ms ago, over the fetch timeout of 2000 ms"},
		{"follower at the timeout", follower(timeout, 50, 50), true, "caught up"},
		{"observer caught up", func() raft.Status { st := follower(0, 5, 5); st.IsVoter = false; return st }(), true, "following leader 2"},
	} {
		h := Readiness(c.st, now, timeout)
		if h.OK != c.ready || !strings.Contains(h.Reason, c.reason) {
			t.Errorf("%s: ok %v %q, want %v and %q", c.name, h.OK, h.Reason, c.ready, c.reason)
		}
	}
}

func TestLiveness(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	if h := Liveness(time.Time{}, now, time.Second); h.OK {
		t.Error("live before the loop started")
	}
	if h := Liveness(now.Add(-500*time.Millisecond), now, time.Second); !h.OK || *h.LoopAgeMs != 500 {
		t.Errorf("recent turn: %+v", h)
	}
	if h := Liveness(now.Add(-3*time.Second), now, time.Second); h.OK || !strings.Contains(h.Reason, "3000 ms ago") {
		t.Errorf("stale loop: %+v", h)
	}
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func TestHandlers(t *testing.T) {
	c := newClock()
	var (
		view   View
		have   bool
		turned time.Time
	)
	m := newMetrics(func() (View, bool) { return view, have }, func() time.Time { return turned }, c.now)
	h := m.Handler(HandlerOptions{FetchTimeout: 2 * time.Second})

	if code, body := get(t, h, "/readyz"); code != 503 || !strings.Contains(body, "starting") {
		t.Errorf("readyz before any status: %d %s", code, body)
	}
	if code, _ := get(t, h, "/livez"); code != 503 {
		t.Errorf("livez before the loop turned: %d", code)
	}
	view, have, turned = leaderView(t), true, c.now()
	code, body := get(t, h, "/readyz")
	var hr Health
	if err := json.Unmarshal([]byte(body), &hr); err != nil || code != 200 || !hr.OK || hr.State != "leader" || hr.Epoch != 7 {
		t.Errorf("readyz of a leader: %d %s (%v)", code, body, err)
	}
	if code, body := get(t, h, "/livez"); code != 200 || !strings.Contains(body, `"state": "leader"`) {
		t.Errorf("livez: %d %s", code, body)
	}
	c.add(time.Minute)
	if code, _ := get(t, h, "/livez"); code != 503 {
		t.Errorf("livez of a loop stuck for a minute: %d", code)
	}
	code, body = get(t, h, "/metrics")
	if code != 200 || !strings.Contains(body, `kafka_server_raft_metrics_current_state{state="leader"} 1`) ||
		!strings.Contains(body, "go_goroutines") || !strings.Contains(body, "process_") {
		t.Errorf("metrics: %d %.500s", code, body)
	}
	if code, _ := get(t, h, "/debug/pprof/"); code != 404 {
		t.Errorf("pprof served while off: %d", code)
	}
	if code, _ := get(t, m.Handler(HandlerOptions{Pprof: true}), "/debug/pprof/"); code != 200 {
		t.Errorf("pprof not served while on: %d", code)
	}
}

func TestRequestMetrics(t *testing.T) {
	c := newClock()
	m := newMetrics(fixedView(leaderView(t)), c.fn(), c.now)
	for _, d := range []network.RequestDone{
		{Listener: "CONTROLLER", APIKey: 1, Response: kmsg.NewPtrFetchResponse(), ErrorCode: kerr.FencedLeaderEpoch.Code, Took: time.Millisecond},
		{Listener: "CONTROLLER", APIKey: 52, Response: kmsg.NewPtrVoteResponse()},
		{Listener: "CONTROLLER", APIKey: 80, Response: kmsg.NewPtrAddRaftVoterResponse(), ErrorCode: 9999},
		{Listener: "CONTROLLER", APIKey: 1, Response: nil},
	} {
		m.OnRequest(d)
	}
	got := gather(t, m.Registry())
	for k, w := range map[string]float64{
		"kraftd_network_requests_total{api=Fetch,listener=CONTROLLER}":             2,
		"kraftd_network_requests_total{api=Vote,listener=CONTROLLER}":              1,
		"kraftd_network_request_errors_total{api=Fetch,error=FENCED_LEADER_EPOCH}": 1,
		"kraftd_network_request_errors_total{api=Fetch,error=CONNECTION_CLOSED}":   1,
		"kraftd_network_request_errors_total{api=AddRaftVoter,error=UNKNOWN_9999}": 1,
		"kraftd_network_request_duration_seconds{api=Fetch}_count":                 2,
	} {
		if got[k] != w {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
	if _, ok := got["kraftd_network_request_errors_total{api=Vote,error=NONE}"]; ok {
		t.Error("a success counted as an error")
	}
}
