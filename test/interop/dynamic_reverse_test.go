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

	"github.com/kraftd/kraftd/test/interop/kafkatest"
	"github.com/kraftd/kraftd/topics"
	"github.com/kraftd/kraftd/uuid"
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
			d, err := kafkatest.DescribeQuorum(n.addr, topics.ClusterMetadata)
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
	d, err := kafkatest.WaitQuorum(leader.addr, topics.ClusterMetadata, timeout, func(d kafkatest.QuorumInfo) bool {
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
		if dir := uuid.UUID(v.ReplicaDirectoryID).String(); dir != q.node(v.ReplicaID).dirID {
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
