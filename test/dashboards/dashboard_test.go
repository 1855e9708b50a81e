package dashboards

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/admin"
	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/internal/freeport"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/topics"
)

// Every query of the dashboard reads metrics and labels that a live 3-node
// quorum exposes; and the check catches a query that does not.
func TestDashboardAgainstLiveQuorum(t *testing.T) {
	queries, err := Queries(readKraftd(t))
	if err != nil {
		t.Fatal(err)
	}
	exposed := liveQuorumMetrics(t)
	for _, q := range queries {
		if err := exposed.Check(q.Query); err != nil {
			t.Errorf("%s: %s: %v", q.Where, q.Expr, err)
		}
	}

	bad := []struct{ expr, want string }{
		{`kafka_server_raft_metrics_current_leaderr{job=~"$job"}`, "no metric kafka_server_raft_metrics_current_leaderr"},
		{`rate(kraftd_raft_commit_latency_seconds[5m])`, "no metric kraftd_raft_commit_latency_seconds"}, // a histogram's own name
		{`kraftd_raft_appended_records`, "no metric kraftd_raft_appended_records"},                       // the counter without _total
		{`kraftd_raft_voter_lag_records{peer="2"}`, "has no label peer"},
		{`sum by (api) (kraftd_network_connections)`, "no metric of the query has label api"},
		{`histogram_quantile(0.99, sum by (le) (rate(kraftd_raft_commit_latency_seconds_sum[5m])))`, "no metric of the query has label le"},
		{`go_gc_duration_seconds_sum{quantile="1"}`, "has no label quantile"},
	}
	for _, b := range bad {
		q, err := ParseQuery(b.expr)
		if err != nil {
			t.Fatalf("%s: %v", b.expr, err)
		}
		if err := exposed.Check(q); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: check said %v, want %q", b.expr, err, b.want)
		}
	}
}

// liveQuorumMetrics runs a 3-node quorum in this process and returns what
// its nodes' /metrics expose together (some series only the leader has),
// once every series the dashboard can show has had a reason to appear.
func liveQuorumMetrics(t *testing.T) Exposed {
	ports, err := freeport.Take(3)
	if err != nil {
		t.Fatal(err)
	}
	var voters []string
	for i, p := range ports {
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", i+1, p))
	}
	nodes := make([]*node.Node, 3)
	for i := range nodes {
		nodes[i] = startNode(t, i+1, ports[i], strings.Join(voters, ","))
	}
	// A DescribeQuorum of an unknown topic is answered with an error code,
	// so the error counter has a series to check.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := admin.DescribeQuorumAt(ctx, fmt.Sprintf("127.0.0.1:%d", ports[0]), "no-such-topic"); err == nil {
		t.Fatal("DescribeQuorum of an unknown topic succeeded")
	}
	var union Exposed
	deadline := time.Now().Add(30 * time.Second)
	for {
		union = Exposed{}
		for _, n := range nodes {
			for name, labels := range scrape(t, n) {
				if union[name] == nil {
					union[name] = map[string]bool{}
				}
				for l := range labels {
					union[name][l] = true
				}
			}
		}
		// The leader reports each voter's fetch age once the followers fetched.
		if union["kraftd_raft_voter_last_fetch_age_seconds"]["voter"] && union["kraftd_network_request_errors_total"] != nil {
			return union
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for a leader with fetching followers")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func startNode(t *testing.T, id, port int, voters string) *node.Node {
	t.Helper()
	p, err := config.ParseProperties(fmt.Sprintf("node.id=%d\nprocess.roles=controller\n"+
		"listeners=CONTROLLER://127.0.0.1:%d\ncontroller.listener.names=CONTROLLER\n"+
		"controller.quorum.voters=%s\nlog.dirs=%s\nkraftd.metrics.listener=http://127.0.0.1:0\n",
		id, port, voters, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.New(p, false)
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.New(cfg, node.Options{ClusterID: "MkU3OEVBNTcwNTJENDM2Qg", TopicName: topics.ClusterMetadata, ShutdownTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("node %d: %v", id, err)
		}
	})
	for deadline := time.Now().Add(10 * time.Second); n.MetricsAddr() == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("node %d: no metrics listener", id)
		}
	}
	return n
}

func scrape(t *testing.T, n *node.Node) Exposed {
	t.Helper()
	resp, err := http.Get("http://" + n.MetricsAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	e, err := ParseExposed(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// The dashboard imports anywhere: every panel queries the data source
// variable, the job and instance variables exist, panel ids are unique.
func TestDashboardShape(t *testing.T) {
	var d struct {
		Panels     []json.RawMessage `json:"panels"`
		Templating struct {
			List []struct{ Name, Type string } `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(readKraftd(t), &d); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
	}
	if vars["DS_PROMETHEUS"] != "datasource" || vars["job"] != "query" || vars["instance"] != "query" {
		t.Errorf("variables %v: want DS_PROMETHEUS (datasource), job and instance (query)", vars)
	}
	type shape struct {
		ID         int
		Type       string
		Title      string
		Datasource struct{ UID string }
		Panels     []json.RawMessage
	}
	ids := map[int]string{}
	var walk func([]json.RawMessage)
	walk = func(raw []json.RawMessage) {
		for _, r := range raw {
			var p shape
			if err := json.Unmarshal(r, &p); err != nil {
				t.Fatal(err)
			}
			if prev, dup := ids[p.ID]; dup {
				t.Errorf("panel id %d of %q and %q", p.ID, prev, p.Title)
			}
			ids[p.ID] = p.Title
			if p.Type != "row" && p.Datasource.UID != "${DS_PROMETHEUS}" {
				t.Errorf("panel %q: data source %q, want ${DS_PROMETHEUS}", p.Title, p.Datasource.UID)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	if len(ids) < 20 {
		t.Errorf("%d panels", len(ids))
	}
}

func readKraftd(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(KraftdPath)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
