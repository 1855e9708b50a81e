package node

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/internal/freeport"
	"github.com/kraftd/kraftd/metrics"
	"github.com/kraftd/kraftd/topics"
)

// metricsQuorum is a quorum of nodes run in this process, each with a
// metrics listener on a free port.
type metricsQuorum struct {
	t     *testing.T
	ports []int
	dirs  []string
	nodes []*Node
	stop  []func()
}

func newMetricsQuorum(t *testing.T, n int) *metricsQuorum {
	ports, err := freeport.Take(n)
	if err != nil {
		t.Fatal(err)
	}
	q := &metricsQuorum{t: t, ports: ports, nodes: make([]*Node, n), stop: make([]func(), n)}
	for range n {
		q.dirs = append(q.dirs, t.TempDir())
	}
	for i := range n {
		q.start(i)
	}
	t.Cleanup(func() {
		for i := range q.stop {
			q.kill(i)
		}
	})
	return q
}

func (q *metricsQuorum) start(i int) {
	q.t.Helper()
	var voters []string
	for j, p := range q.ports {
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", j+1, p))
	}
	p, err := config.ParseProperties(fmt.Sprintf("node.id=%d\nprocess.roles=controller\n"+
		"listeners=CONTROLLER://127.0.0.1:%d\ncontroller.listener.names=CONTROLLER\n"+
		"controller.quorum.voters=%s\nlog.dirs=%s\nkraftd.metrics.listener=http://127.0.0.1:0\n",
		i+1, q.ports[i], strings.Join(voters, ","), q.dirs[i]))
	if err != nil {
		q.t.Fatal(err)
	}
	cfg, err := config.New(p, false)
	if err != nil {
		q.t.Fatal(err)
	}
	n, err := New(cfg, Options{ClusterID: "MkU3OEVBNTcwNTJENDM2Qg", TopicName: topics.ClusterMetadata, ShutdownTimeout: time.Second})
	if err != nil {
		q.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	q.nodes[i] = n
	q.stop[i] = func() {
		cancel()
		if err := <-done; err != nil {
			q.t.Errorf("node %d: %v", i+1, err)
		}
	}
	waitFor(q.t, 10*time.Second, func() bool { return n.MetricsAddr() != "" }, "metrics listener of node %d", i+1)
}

func (q *metricsQuorum) kill(i int) {
	if q.stop[i] != nil {
		q.stop[i]()
		q.stop[i] = nil
	}
}

func waitFor(t *testing.T, d time.Duration, ok func() bool, what string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for "+what, args...)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// scrape reads a node's /metrics into name{labels} -> value.
func scrape(t *testing.T, n *Node) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + n.MetricsAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

func readyz(t *testing.T, n *Node) (int, metrics.Health) {
	t.Helper()
	resp, err := http.Get("http://" + n.MetricsAddr() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h metrics.Health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, h
}

// A 3-node quorum: every node's /metrics names the same leader and epoch,
// the leader reports the followers' high watermark; /readyz of a follower
// flips to 503 when its leader and the third voter are gone (no quorum),
// and back to 200 once they return.
func TestMetricsAndReadiness(t *testing.T) {
	q := newMetricsQuorum(t, 3)
	const leaderKey, epochKey = "kafka_server_raft_metrics_current_leader", "kafka_server_raft_metrics_current_epoch"
	var leader int
	waitFor(t, 20*time.Second, func() bool {
		ms := []map[string]float64{scrape(t, q.nodes[0]), scrape(t, q.nodes[1]), scrape(t, q.nodes[2])}
		leader = int(ms[0][leaderKey])
		for _, m := range ms {
			if m[leaderKey] < 1 || m[leaderKey] != ms[0][leaderKey] || m[epochKey] != ms[0][epochKey] ||
				m["kafka_server_raft_metrics_high_watermark"] < 1 ||
				m["kafka_server_raft_metrics_high_watermark"] != ms[0]["kafka_server_raft_metrics_high_watermark"] {
				return false
			}
		}
		return true
	}, "the nodes' metrics to agree on leader, epoch and a high watermark past the LeaderChange")
	lm := scrape(t, q.nodes[leader-1])
	if lm[`kafka_server_raft_metrics_current_state{state="leader"}`] != 1 || lm["kafka_server_raft_metrics_number_of_voters"] != 3 ||
		lm["kafka_server_raft_metrics_high_watermark"] < 1 || lm["kafka_server_raft_metrics_election_latency_max"] < 0 {
		t.Errorf("leader metrics: %v", lm)
	}
	for i := range q.nodes {
		waitFor(t, 10*time.Second, func() bool { code, _ := readyz(t, q.nodes[i]); return code == 200 }, "node %d ready", i+1)
	}

	follower := leader % 3 // index of a follower; the third voter is the other one
	other := 3 - (leader - 1) - follower
	q.kill(leader - 1)
	q.kill(other)
	waitFor(t, 15*time.Second, func() bool {
		code, h := readyz(t, q.nodes[follower])
		return code == 503 && !h.OK && h.Reason != ""
	}, "node %d to be unready without a quorum", follower+1)

	q.start(leader - 1)
	q.start(other)
	waitFor(t, 30*time.Second, func() bool { code, _ := readyz(t, q.nodes[follower]); return code == 200 }, "node %d ready again", follower+1)
	// It may have won the new election itself.
	if _, h := readyz(t, q.nodes[follower]); h.LeaderID < 1 || (h.State != "leader" && (h.Lag == nil || *h.Lag != 0)) {
		t.Errorf("ready again: %+v", h)
	}
}
