package interop

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
	"github.com/kraftd/kraftd/uuid"
)

// TestDynamicMixedQuorum: dynamic quorums (KIP-853, kraft.version 1) of kraftd and Kafka
// 4.4.0 controllers, every node formatted by Kafka's storage tool with the same
// --initial-controllers (a bootstrap snapshot naming the voters with their directory ids)
// and configured with controller.quorum.bootstrap.servers only. The quorum elects, fails over
// when a leader is killed with SIGKILL, and replicates; kafka-metadata-quorum describe
// --status/--replication shows the directory ids kraftd and Kafka agree on; every node's log
// reads the same through kafka-dump-log.
//
// make test runs 1 kraftd + 2 Kafka; make interop-long also 2 kraftd + 1 Kafka
// (TestDynamicMixedQuorumLong).
func TestDynamicMixedQuorum(t *testing.T) {
	t.Parallel() // see interop/doc.go: the long mixed tests overlap their waits
	dynamicMixed(t, []bool{true, false, false})
}

func dynamicMixed(t *testing.T, sides []bool) {
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	name := fmt.Sprintf("%d kraftd + %d Kafka", countSides(sides, true), countSides(sides, false))
	t.Run(name, func(t *testing.T) { runDynamicMixed(t, env, sides) })
}

// dynNode is one voter of a dynamic mixed quorum.
type dynNode struct {
	id      int32
	kraftd  bool
	port    int
	addr    string
	dirID   string // directory id given to --initial-controllers
	dir     string // log dir
	proc    *kafkatest.Process
	stopped bool
}

func (n *dynNode) label() string {
	if n.kraftd {
		return fmt.Sprintf("kraftd %d", n.id)
	}
	return fmt.Sprintf("Kafka %d", n.id)
}

func (n *dynNode) partitionDir() string { return filepath.Join(n.dir, "__cluster_metadata-0") }

type dynQuorum struct {
	t         *testing.T
	env       *kafkatest.Env
	clusterID string
	nodes     []*dynNode
	bootstrap []string
	initial   string
}

func newDynQuorum(t *testing.T, env *kafkatest.Env, kraftd []bool) *dynQuorum {
	q := &dynQuorum{t: t, env: env, clusterID: kafkatest.NewUUID()}
	var initial []string
	for i, k := range kraftd {
		n := &dynNode{id: int32(i + 1), kraftd: k, port: kafkatest.FreePort(t), dirID: kafkatest.NewUUID(), dir: filepath.Join(t.TempDir(), "data")}
		n.addr = "127.0.0.1:" + strconv.Itoa(n.port)
		q.nodes = append(q.nodes, n)
		q.bootstrap = append(q.bootstrap, n.addr)
		initial = append(initial, fmt.Sprintf("%d@127.0.0.1:%d:%s", n.id, n.port, n.dirID))
	}
	q.initial = strings.Join(initial, ",")
	for _, n := range q.nodes {
		q.format(n)
	}
	return q
}

// format runs Kafka's storage tool on n's log dir with the quorum's --initial-controllers.
func (q *dynQuorum) format(n *dynNode) {
	props := kafkatest.ControllerProps(kafkatest.ControllerConfig{NodeID: n.id, Port: n.port, BootstrapServers: q.bootstrap}, n.dir)
	path := filepath.Join(q.t.TempDir(), "format.properties")
	if err := props.WriteFile(path); err != nil {
		q.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := q.env.StorageFormat(ctx, path, q.clusterID, "--initial-controllers", q.initial); err != nil {
		q.t.Fatalf("format %s: %v", n.label(), err)
	}
	meta, err := kafkatest.MetaProperties(n.dir)
	if err != nil || meta["directory.id"] != n.dirID {
		q.t.Fatalf("%s: meta.properties directory.id %q (%v), want %s", n.label(), meta["directory.id"], err, n.dirID)
	}
}

// start starts (or restarts) n on its formatted dir.
func (q *dynQuorum) start(n *dynNode) {
	if n.kraftd {
		k := kafkatest.StartKraftd(q.t, kafkatest.KraftdConfig{NodeID: n.id, ClusterID: q.clusterID, Port: n.port,
			BootstrapServers: q.bootstrap, Dir: n.dir, NoFormat: true})
		n.proc = k.Process
	} else {
		c := q.env.StartController(q.t, kafkatest.ControllerConfig{NodeID: n.id, ClusterID: q.clusterID, Port: n.port,
			BootstrapServers: q.bootstrap, Dir: n.dir, NoFormat: true})
		n.proc = c.Process
	}
	n.stopped = false
}

// leader waits until a running node answers DescribeQuorum as leader of an epoch above
// minEpoch with a known high watermark.
func (q *dynQuorum) leader(minEpoch int32, timeout time.Duration) (*dynNode, kafkatest.QuorumInfo) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, n := range q.nodes {
			if n.stopped {
				continue
			}
			d, err := kafkatest.DescribeQuorum(n.addr, "__cluster_metadata")
			if err == nil && d.LeaderID == n.id && d.LeaderEpoch > minEpoch && d.HighWatermark > 0 {
				return n, d
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	q.dumpLogs()
	q.t.Fatalf("no leader above epoch %d within %v", minEpoch, timeout)
	return nil, kafkatest.QuorumInfo{}
}

func (q *dynQuorum) dumpLogs() {
	for _, n := range q.nodes {
		if n.proc != nil {
			q.t.Logf("---- %s", n.label())
			n.proc.DumpLog(40)
		}
	}
}

// checkDescribe compares the leader's DescribeQuorum and Kafka's describe --replication and
// --status with the directory ids the quorum was formatted with.
func (q *dynQuorum) checkDescribe(leader *dynNode, d kafkatest.QuorumInfo) {
	t := q.t
	want := map[int32]string{}
	for _, n := range q.nodes {
		want[n.id] = n.dirID
	}
	if len(d.Voters) != len(q.nodes) {
		t.Errorf("%s describes %d voters, want %d", leader.label(), len(d.Voters), len(q.nodes))
	}
	for _, v := range d.Voters {
		if got := uuid.UUID(v.ReplicaDirectoryID).String(); got != want[v.ReplicaID] {
			t.Errorf("%s: voter %d directory id %s, want %s", leader.label(), v.ReplicaID, got, want[v.ReplicaID])
		}
	}
	// Kafka's tool is pointed at a kraftd node: it lists the voters in force
	// (DescribeCluster) and names the leader, which the tool then asks. A JVM
	// controller that just took over may not answer the tool's admin requests
	// yet (its controller is still loading).
	via := leader
	for _, n := range q.nodes {
		if n.kraftd && !n.stopped {
			via = n
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rows, err := q.env.DescribeReplication(ctx, via.addr)
	if err != nil {
		t.Fatalf("describe --replication via %s: %v", via.label(), err)
	}
	for _, r := range rows {
		id, _ := strconv.Atoi(r["NodeId"])
		if r["DirectoryId"] != want[int32(id)] {
			t.Errorf("describe --replication: node %d DirectoryId %q, want %q", id, r["DirectoryId"], want[int32(id)])
		}
	}
	st, err := q.env.DescribeStatus(ctx, via.addr)
	if err != nil {
		t.Fatalf("describe --status via %s: %v", via.label(), err)
	}
	if st["LeaderId"] != strconv.Itoa(int(leader.id)) {
		t.Errorf("describe --status: LeaderId %q, want %d", st["LeaderId"], leader.id)
	}
	for _, n := range q.nodes {
		if !strings.Contains(st["CurrentVoters"], n.dirID) {
			t.Errorf("describe --status: CurrentVoters %s lacks %s's directory id %s", st["CurrentVoters"], n.label(), n.dirID)
		}
	}
}

func runDynamicMixed(t *testing.T, env *kafkatest.Env, kraftd []bool) {
	q := newDynQuorum(t, env, kraftd)
	for _, n := range q.nodes {
		q.start(n)
	}
	leader, d := q.leader(0, 90*time.Second)
	t.Logf("%s leads epoch %d (hw %d)", leader.label(), d.LeaderEpoch, d.HighWatermark)
	q.checkDescribe(leader, d)

	// Fail over until a leader of each side has been killed (bounded: who wins an election
	// is up to the quorum).
	killed := map[bool]bool{}
	for round := 0; round < 4 && !(killed[true] && killed[false]); round++ {
		leader.proc.Kill()
		leader.stopped = true
		killed[leader.kraftd] = true
		next, nd := q.leader(d.LeaderEpoch, 90*time.Second)
		t.Logf("killed %s (epoch %d); %s leads epoch %d (hw %d)", leader.label(), d.LeaderEpoch, next.label(), nd.LeaderEpoch, nd.HighWatermark)
		q.start(leader)
		leader, d = next, nd
	}
	if !killed[true] || !killed[false] {
		t.Logf("only leaders of one side were killed (kraftd %v, Kafka %v)", killed[true], killed[false])
	}
	// Replication: the restarted nodes catch up with the leader's high watermark.
	hw := q.waitCaughtUp(leader, 90*time.Second)
	q.checkDescribe(leader, d)
	for _, n := range q.nodes {
		if err := n.proc.Stop(); err != nil {
			t.Errorf("stop %s: %v", n.label(), err)
		}
		n.stopped = true
	}
	q.checkLogs(hw)
}

// waitCaughtUp waits until every voter's end offset reaches the leader's high watermark and
// returns it.
func (q *dynQuorum) waitCaughtUp(leader *dynNode, timeout time.Duration) int64 {
	deadline := time.Now().Add(timeout)
	for {
		d, err := kafkatest.DescribeQuorum(leader.addr, "__cluster_metadata")
		if err == nil && d.HighWatermark > 0 {
			behind := 0
			for _, v := range d.Voters {
				if v.LogEndOffset < d.HighWatermark {
					behind++
				}
			}
			if behind == 0 {
				return d.HighWatermark
			}
		}
		if time.Now().After(deadline) {
			q.dumpLogs()
			q.t.Fatalf("voters did not catch up with %s within %v: %+v (%v)", leader.label(), timeout, d, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkLogs: every node's log holds the same batches up to the committed offset (byte for
// byte, metadatalog reading), and kafka-dump-log decodes them the same on every node,
// KRaftVersion and Voters records included. It returns the first node's decoded records
// ("offset rest" lines).
func (q *dynQuorum) checkLogs(committed int64) []string {
	t := q.t
	var ref [][]byte
	for i, n := range q.nodes {
		l, err := metadatalog.OpenReadOnly(n.partitionDir())
		if err != nil {
			t.Fatalf("%s: open log: %v", n.label(), err)
		}
		var batches [][]byte
		err = l.Batches(l.StartOffset(), func(b []byte) error {
			if h, herr := protocol.ParseBatchHeader(b); herr == nil && h.LastOffset() < committed {
				batches = append(batches, bytes.Clone(b))
			}
			return nil
		})
		l.Close()
		if err != nil {
			t.Fatalf("%s: read log: %v", n.label(), err)
		}
		if i == 0 {
			ref = batches
			continue
		}
		if len(batches) != len(ref) {
			t.Fatalf("%s holds %d committed batches, %s %d", n.label(), len(batches), q.nodes[0].label(), len(ref))
		}
		for j := range batches {
			if !bytes.Equal(batches[j], ref[j]) {
				t.Fatalf("committed batch %d differs between %s and %s", j, q.nodes[0].label(), n.label())
			}
		}
	}
	var files []string
	for _, n := range q.nodes {
		segs, err := filepath.Glob(filepath.Join(n.partitionDir(), "*.log"))
		if err != nil || len(segs) == 0 {
			t.Fatalf("no segments in %s", n.partitionDir())
		}
		sort.Strings(segs)
		files = append(files, segs...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := q.env.DumpLog(ctx, kafkatest.DumpOptions{DeepIteration: true, ClusterMetadataDecoder: true}, files...)
	if err != nil {
		t.Fatal(err)
	}
	dumped, err := kafkatest.ParseDumpLog(out)
	if err != nil {
		t.Fatal(err)
	}
	byDir := map[string][]string{}
	for _, f := range dumped {
		for _, b := range f.Batches {
			if off, err := b.Int("baseOffset"); err != nil || off >= committed {
				continue
			}
			for _, r := range b.Records {
				byDir[filepath.Dir(f.Path)] = append(byDir[filepath.Dir(f.Path)], r.Fields["offset"]+" "+r.Rest)
			}
		}
	}
	first := byDir[q.nodes[0].partitionDir()]
	if !strings.Contains(strings.Join(first, "\n"), "Voters") {
		t.Errorf("kafka-dump-log shows no Voters record in %s's committed log:\n%s", q.nodes[0].label(), strings.Join(first, "\n"))
	}
	for _, n := range q.nodes[1:] {
		if got := byDir[n.partitionDir()]; strings.Join(got, "\n") != strings.Join(first, "\n") {
			t.Errorf("kafka-dump-log of %s differs from %s's:\n%s\n----\n%s", n.label(), q.nodes[0].label(),
				strings.Join(got, "\n"), strings.Join(first, "\n"))
		}
	}
	return first
}

func countSides(xs []bool, v bool) int {
	n := 0
	for _, x := range xs {
		if x == v {
			n++
		}
	}
	return n
}
