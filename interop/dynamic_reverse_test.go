package interop

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/admin"
	"github.com/kraftd/kraftd/clusterid"
	"github.com/kraftd/kraftd/interop/kafkatest"
)

// revQuorum is a dynamic quorum built up by voter changes: every node has its own extra
// properties, and the path of its server properties is kept for add-controller's
// --command-config.
type revQuorum struct {
	*dynQuorum
	bin    string
	props  map[int32]kafkatest.Props
	config map[int32]string
}

// newRevQuorum allocates ports and dirs for one node per side; every node lists all of
// them as controller.quorum.bootstrap.servers. Nothing is formatted or started yet.
func newRevQuorum(t *testing.T, env *kafkatest.Env, sides []bool) *revQuorum {
	q := &revQuorum{dynQuorum: &dynQuorum{t: t, env: env, clusterID: kafkatest.NewUUID()},
		bin: kafkatest.BuildKraftd(t), props: map[int32]kafkatest.Props{}, config: map[int32]string{}}
	for i, k := range sides {
		n := &dynNode{id: int32(i + 1), kraftd: k, port: kafkatest.FreePort(t), dir: filepath.Join(t.TempDir(), "data")}
		n.addr = "127.0.0.1:" + strconv.Itoa(n.port)
		q.nodes = append(q.nodes, n)
		q.bootstrap = append(q.bootstrap, n.addr)
	}
	return q
}

func (q *revQuorum) node(id int32) *dynNode { return q.nodes[id-1] }

// formatKraftd runs kraftd's `controller format` with flags on n's dir.
func (q *revQuorum) formatKraftd(n *dynNode, flags ...string) {
	props := kafkatest.ControllerProps(kafkatest.ControllerConfig{NodeID: n.id, Port: n.port, BootstrapServers: q.bootstrap}, n.dir)
	path := filepath.Join(q.t.TempDir(), "format.properties")
	if err := props.WriteFile(path); err != nil {
		q.t.Fatal(err)
	}
	args := append([]string{"format", "-c", path, "-t", q.clusterID}, flags...)
	if r := runFormatCommand(filepath.Dir(path), exec.Command(q.bin, args...)); r.code != 0 {
		q.t.Fatalf("kraftd format %v for %s: exit %d: %s", flags, n.label(), r.code, r.errs)
	}
	q.readDirID(n)
}

// formatKafka runs Kafka's storage tool with flags on n's dir.
func (q *revQuorum) formatKafka(n *dynNode, flags ...string) {
	props := kafkatest.ControllerProps(kafkatest.ControllerConfig{NodeID: n.id, Port: n.port, BootstrapServers: q.bootstrap}, n.dir)
	path := filepath.Join(q.t.TempDir(), "format.properties")
	if err := props.WriteFile(path); err != nil {
		q.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := q.env.StorageFormat(ctx, path, q.clusterID, flags...); err != nil {
		q.t.Fatalf("kafka-storage format %v for %s: %v", flags, n.label(), err)
	}
	q.readDirID(n)
}

func (q *revQuorum) readDirID(n *dynNode) {
	meta, err := kafkatest.MetaProperties(n.dir)
	if err != nil || meta["directory.id"] == "" {
		q.t.Fatalf("%s: meta.properties: %v %v", n.label(), meta, err)
	}
	n.dirID = meta["directory.id"]
}

// start starts (or restarts) nodes on their formatted dirs: the JVMs together, as each
// takes seconds to start.
func (q *revQuorum) start(nodes ...*dynNode) {
	var jvms []kafkatest.ControllerConfig
	for _, n := range nodes {
		if n.kraftd {
			k := kafkatest.StartKraftd(q.t, kafkatest.KraftdConfig{NodeID: n.id, ClusterID: q.clusterID, Port: n.port,
				BootstrapServers: q.bootstrap, Dir: n.dir, NoFormat: true, Props: q.props[n.id]})
			n.proc, n.stopped, q.config[n.id] = k.Process, false, k.ConfigPath
			continue
		}
		jvms = append(jvms, kafkatest.ControllerConfig{NodeID: n.id, ClusterID: q.clusterID, Port: n.port,
			BootstrapServers: q.bootstrap, Dir: n.dir, NoFormat: true, Props: q.props[n.id]})
	}
	if len(jvms) == 0 {
		return
	}
	for _, c := range q.env.StartControllers(q.t, jvms...) {
		n := q.node(c.NodeID)
		n.proc, n.stopped, q.config[n.id] = c.Process, false, c.ConfigPath
	}
}

// kill is kill -9.
func (q *revQuorum) kill(n *dynNode) {
	n.proc.Kill()
	n.stopped = true
}

// stopAll stops every node (SIGTERM) before their logs are compared.
func (q *revQuorum) stopAll() {
	for _, n := range q.nodes {
		if n.proc != nil && !n.stopped {
			if err := n.proc.Stop(); err != nil {
				q.t.Errorf("stop %s: %v", n.label(), err)
			}
			n.stopped = true
		}
	}
}

// waitLeader waits until a running node leads an epoch above minEpoch and its
// DescribeQuorum satisfies ok.
func (q *revQuorum) waitLeader(minEpoch int32, timeout time.Duration, ok func(kafkatest.QuorumInfo) bool) (*dynNode, kafkatest.QuorumInfo) {
	deadline := time.Now().Add(timeout)
	var last kafkatest.QuorumInfo
	for time.Now().Before(deadline) {
		for _, n := range q.nodes {
			if n.stopped || n.proc == nil {
				continue
			}
			d, err := kafkatest.DescribeQuorum(n.addr, admin.MetadataTopic)
			if err == nil && d.LeaderID == n.id && d.LeaderEpoch > minEpoch && d.HighWatermark > 0 {
				last = d
				if ok(d) {
					return n, d
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	q.dumpLogs()
	q.t.Fatalf("no leader above epoch %d as wanted within %v; last leader answer %s", minEpoch, timeout, describeText(last))
	return nil, kafkatest.QuorumInfo{}
}

// waitAllCaughtUp waits until every running node, voter or observer, has fetched up to
// the leader's high watermark, and returns that answer.
func (q *revQuorum) waitAllCaughtUp(leader *dynNode, timeout time.Duration) kafkatest.QuorumInfo {
	d, err := kafkatest.WaitQuorum(leader.addr, admin.MetadataTopic, timeout, func(d kafkatest.QuorumInfo) bool {
		for _, n := range q.nodes {
			if n.stopped || n.proc == nil {
				continue
			}
			r, ok := replica(d, n.id)
			if !ok || r.LogEndOffset < d.HighWatermark {
				return false
			}
		}
		return true
	})
	if err != nil {
		q.dumpLogs()
		q.t.Fatalf("not every node caught up with %s: %v", leader.label(), err)
	}
	return d
}

// checkVoters wants exactly the given voters, each with the directory id it was formatted
// with, and the given observers.
func (q *revQuorum) checkVoters(d kafkatest.QuorumInfo, voters, observers []int32) {
	q.t.Helper()
	var got, gotObs []int32
	for _, v := range d.Voters {
		got = append(got, v.ReplicaID)
		if dir := clusterid.UUID(v.ReplicaDirectoryID).String(); dir != q.node(v.ReplicaID).dirID {
			q.t.Errorf("voter %d has directory id %s, want %s", v.ReplicaID, dir, q.node(v.ReplicaID).dirID)
		}
	}
	for _, o := range d.Observers {
		gotObs = append(gotObs, o.ReplicaID)
	}
	slices.Sort(got)
	slices.Sort(gotObs)
	if !slices.Equal(got, voters) || !slices.Equal(gotObs, observers) {
		q.t.Errorf("voters %v observers %v, want %v and %v (%s)", got, gotObs, voters, observers, describeText(d))
	}
}

func replica(d kafkatest.QuorumInfo, id int32) (kmsg.DescribeQuorumResponseTopicPartitionReplicaState, bool) {
	for _, r := range append(slices.Clone(d.Voters), d.Observers...) {
		if r.ReplicaID == id {
			return r, true
		}
	}
	return kmsg.DescribeQuorumResponseTopicPartitionReplicaState{}, false
}

func ids(rs []kmsg.DescribeQuorumResponseTopicPartitionReplicaState) []int32 {
	var out []int32
	for _, r := range rs {
		out = append(out, r.ReplicaID)
	}
	slices.Sort(out)
	return out
}

func describeText(d kafkatest.QuorumInfo) string {
	return fmt.Sprintf("leader %d epoch %d hw %d voters %v observers %v", d.LeaderID, d.LeaderEpoch, d.HighWatermark, ids(d.Voters), ids(d.Observers))
}

// addedLine is what both tools print for a successful add-controller.
func addedLine(n *dynNode) string {
	return "Added controller " + strconv.Itoa(int(n.id)) + " with directory id " + n.dirID + " and endpoints: CONTROLLER://" + n.addr + "\n"
}

// TestDynamicReverseQuorum: a kraftd quorum grown with Kafka controllers. kraftd's `format
// --standalone` makes node 1 the single voter and leader of a dynamic quorum; two Kafka
// 4.4 controllers formatted --no-initial-controllers join as observers through the
// bootstrap servers; kraftd's add-controller adds one and Kafka's kafka-metadata-quorum
// add-controller the other; kraftd's remove-controller then removes the kraftd leader,
// which resigns once the removal commits: a JVM leads, and the kraftd node follows as an
// observer and never leads again. Kafka's describe and kraftd's describe-quorum agree at
// every step, and every node's log reads the same through kafka-dump-log.
func TestDynamicReverseQuorum(t *testing.T) {
	t.Parallel() // see interop/doc.go
	env := kafkatest.Require(t)
	q := newRevQuorum(t, env, []bool{true, false, false})
	k1, c2, c3 := q.node(1), q.node(2), q.node(3)
	// The leader stays put between the two tools' describes, run one after the other.
	for _, n := range q.nodes {
		q.props[n.id] = kafkatest.Props{"controller.quorum.election.timeout.ms": "5000", "controller.quorum.fetch.timeout.ms": "10000"}
	}
	q.formatKraftd(k1, "--standalone")
	parallel(func() { q.formatKafka(c2, "--no-initial-controllers") }, func() { q.formatKafka(c3, "--no-initial-controllers") })
	q.start(k1, c2, c3)
	leader, d := q.waitLeader(0, 60*time.Second, func(d kafkatest.QuorumInfo) bool {
		_, ok2 := replica(d, 2)
		_, ok3 := replica(d, 3)
		return ok2 && ok3
	})
	if leader != k1 {
		t.Fatalf("%s leads, want the standalone voter %s", leader.label(), k1.label())
	}
	d = q.waitAllCaughtUp(k1, 60*time.Second)
	q.checkVoters(d, []int32{1}, []int32{2, 3})
	epoch := d.LeaderEpoch

	// kraftd's tool adds Kafka controller 2, Kafka's tool Kafka controller 3.
	if r := runKraftdCLI(t, q.bin, "add-controller", "--bootstrap-controller", k1.addr, "--command-config", q.config[2]); r.code != 0 || r.stdout != addedLine(c2) {
		t.Fatalf("controller add-controller: exit %d, stdout %q, error %q; want %q", r.code, r.stdout, r.errLine, addedLine(c2))
	}
	d = q.waitAllCaughtUp(k1, 60*time.Second)
	q.checkVoters(d, []int32{1, 2}, []int32{3})
	describeSame(t, env, q.bin, k1.addr, 2)
	// Kafka's tool asks kraftd: a JVM controller has no finalized metadata.version
	// while kraftd leads (kraftd writes no bootstrap metadata records) and refuses
	// the tool's requests.
	conn := []string{"--bootstrap-controller", k1.addr}
	if r := runKafkaCLI(t, env, append(slices.Clone(conn), "--command-config", q.config[3], "add-controller")...); r.code != 0 || r.stdout != addedLine(c3) {
		t.Fatalf("kafka-metadata-quorum add-controller: exit %d, stdout %q, error %q; want %q", r.code, r.stdout, r.errLine, addedLine(c3))
	}
	d = q.waitAllCaughtUp(k1, 60*time.Second)
	q.checkVoters(d, []int32{1, 2, 3}, nil)
	if d.LeaderEpoch != epoch {
		t.Errorf("the leader's epoch moved from %d to %d while voters were added", epoch, d.LeaderEpoch)
	}
	describeSame(t, env, q.bin, k1.addr, 3)

	// The leader removes itself: it answers once the removal commits, then resigns.
	removed := runKraftdCLI(t, q.bin, "remove-controller", "--bootstrap-controller", k1.addr, "-i", "1", "-d", k1.dirID)
	if want := "Removed KRaft controller 1 with directory id " + k1.dirID + "\n"; removed.code != 0 || removed.stdout != want {
		t.Fatalf("controller remove-controller: exit %d, stdout %q, error %q; want %q", removed.code, removed.stdout, removed.errLine, want)
	}
	leader, d = q.waitLeader(epoch, 60*time.Second, func(kafkatest.QuorumInfo) bool { return true })
	if leader.kraftd {
		t.Fatalf("the removed %s leads epoch %d", leader.label(), d.LeaderEpoch)
	}
	t.Logf("after removing %s: %s leads epoch %d", k1.label(), leader.label(), d.LeaderEpoch)
	d = q.waitAllCaughtUp(leader, 60*time.Second)
	q.checkVoters(d, []int32{2, 3}, []int32{1})
	// The JVMs registered with the JVM leader (kraftd turned them away with
	// NOT_CONTROLLER), so the tools can start at the JVM leader now.
	describeSame(t, env, q.bin, leader.addr, 2)
	if _, err := kafkatest.DescribeQuorum(k1.addr, admin.MetadataTopic); err == nil {
		t.Errorf("the removed %s still answers DescribeQuorum as leader", k1.label())
	}
	d = q.waitAllCaughtUp(leader, 60*time.Second)
	q.stopAll()
	if n := leaderTransitions(k1); n != 1 {
		t.Errorf("%s became leader %d times, want once (before its removal)", k1.label(), n)
	}
	q.checkLogs(d.HighWatermark)
}
