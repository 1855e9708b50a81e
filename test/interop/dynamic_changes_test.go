package interop

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/test/interop/kafkatest"
	"github.com/kraftd/kraftd/uuid"
)

// TestDynamicChangesJVMFirst: a Kafka 4.4 controller formatted --standalone leads a
// dynamic quorum; a kraftd node formatted --no-initial-controllers catches up as an
// observer and Kafka's own add-controller makes it a voter; Kafka's remove-controller then
// removes the JVM leader, which resigns once the change commits. kraftd leads, the JVM
// stays on as an observer that never leads again, and the quorum outlives it. At every
// step Kafka's describe and kraftd's describe-quorum agree; at the end kafka-dump-log
// reads every node's log the same.
//
// make interop-long also adds a second JVM controller the same way before the removal
// (TestDynamicChangesJVMFirstLong).
func TestDynamicChangesJVMFirst(t *testing.T) {
	t.Parallel() // see interop/doc.go
	jvmFirst(t, false)
}

// changeProps are every node's timeouts: a leader stays put while the two tools' describes
// run one after the other on a loaded machine, yet a removed leader's successor is elected
// within seconds.
var changeProps = kafkatest.Props{
	"controller.quorum.election.timeout.ms": "2000",
	"controller.quorum.fetch.timeout.ms":    "6000",
}

// changeQuorum is a dynamic quorum whose members join one by one, each formatted by its
// own side's tool; the dynQuorum's nodes are those started so far.
type changeQuorum struct {
	*dynQuorum
	bin     string
	ports   map[int32]int
	configs map[int32]string // server properties: --command-config of the node's add-controller
}

// newChangeQuorum reserves a port for each id; every node's bootstrap servers are all of
// them, so a removed node still finds the leader.
func newChangeQuorum(t *testing.T, env *kafkatest.Env, ids ...int32) *changeQuorum {
	q := &changeQuorum{dynQuorum: &dynQuorum{t: t, env: env, clusterID: kafkatest.NewUUID()},
		bin: kafkatest.BuildKraftd(t), ports: map[int32]int{}, configs: map[int32]string{}}
	for i, port := range kafkatest.FreePorts(t, len(ids)) {
		q.ports[ids[i]] = port
		q.bootstrap = append(q.bootstrap, "127.0.0.1:"+strconv.Itoa(port))
	}
	return q
}

// startJVM formats (Kafka's storage tool with format) and starts a Kafka controller.
func (q *changeQuorum) startJVM(id int32, props kafkatest.Props, format ...string) *dynNode {
	c := q.env.StartController(q.t, kafkatest.ControllerConfig{NodeID: id, ClusterID: q.clusterID, Port: q.ports[id],
		BootstrapServers: q.bootstrap, FormatArgs: format, Props: changeProps.Clone().Merge(props)})
	return q.started(&dynNode{id: id, port: c.Port, addr: c.Addr, dirID: c.DirectoryID, dir: c.LogDir, proc: c.Process}, c.ConfigPath)
}

// startKraftd formats (kraftd's controller format with format) and starts a kraftd node.
func (q *changeQuorum) startKraftd(id int32, props kafkatest.Props, format ...string) *dynNode {
	k := kafkatest.StartKraftd(q.t, kafkatest.KraftdConfig{NodeID: id, ClusterID: q.clusterID, Port: q.ports[id],
		BootstrapServers: q.bootstrap, FormatArgs: format, Props: changeProps.Clone().Merge(props)})
	return q.started(&dynNode{id: id, kraftd: true, port: k.Port, addr: k.Addr, dirID: k.DirectoryID, dir: k.LogDir, proc: k.Process}, k.ConfigPath)
}

func (q *changeQuorum) started(n *dynNode, config string) *dynNode {
	if n.dirID == "" {
		q.t.Fatalf("%s: no directory.id in meta.properties after format", n.label())
	}
	q.nodes = append(q.nodes, n)
	q.configs[n.id] = config
	return n
}

// members is a quorum as a test expects it: voters and observers by id.
type members struct{ voters, observers []int32 }

// waitMembers waits until a running node leads with exactly want's voters (each with the
// directory id its node was formatted with) and at least want's observers, and returns the
// leader and its answer.
func (q *changeQuorum) waitMembers(want members, timeout time.Duration) (*dynNode, kafkatest.QuorumInfo) {
	q.t.Helper()
	deadline := time.Now().Add(timeout)
	var last kafkatest.QuorumInfo
	for time.Now().Before(deadline) {
		for _, n := range q.nodes {
			if n.stopped {
				continue
			}
			d, err := kafkatest.DescribeQuorum(n.addr, "__cluster_metadata")
			if err != nil || d.LeaderID != n.id {
				continue
			}
			if last = d; q.matches(d, want) {
				return n, d
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	q.dumpLogs()
	q.t.Fatalf("no leader with voters %v and observers %v within %v; last leader's answer: %s", want.voters, want.observers, timeout, formatQuorum(last))
	return nil, last
}

func (q *changeQuorum) matches(d kafkatest.QuorumInfo, want members) bool {
	if len(d.Voters) != len(want.voters) {
		return false
	}
	for _, v := range d.Voters {
		n := q.node(v.ReplicaID)
		if n == nil || !slices.Contains(want.voters, v.ReplicaID) || uuid.UUID(v.ReplicaDirectoryID).String() != n.dirID {
			return false
		}
	}
	for _, id := range want.observers {
		if !slices.ContainsFunc(d.Observers, func(o kmsg.DescribeQuorumResponseTopicPartitionReplicaState) bool {
			return o.ReplicaID == id && uuid.UUID(o.ReplicaDirectoryID).String() == q.node(id).dirID
		}) {
			return false
		}
	}
	return true
}

func (q *changeQuorum) node(id int32) *dynNode {
	for _, n := range q.nodes {
		if n.id == id {
			return n
		}
	}
	return nil
}

// formatQuorum renders a DescribeQuorum answer's membership for failure messages.
func formatQuorum(d kafkatest.QuorumInfo) string {
	replicas := func(rs []kmsg.DescribeQuorumResponseTopicPartitionReplicaState) string {
		var s []string
		for _, r := range rs {
			s = append(s, fmt.Sprintf("%d/%s@%d", r.ReplicaID, uuid.UUID(r.ReplicaDirectoryID), r.LogEndOffset))
		}
		return "[" + strings.Join(s, " ") + "]"
	}
	return fmt.Sprintf("leader %d epoch %d hw %d voters %s observers %s", d.LeaderID, d.LeaderEpoch, d.HighWatermark,
		replicas(d.Voters), replicas(d.Observers))
}

// addWithKafka runs Kafka's kafka-metadata-quorum add-controller for n (its own server
// properties as --command-config) against the controllers at via, and wants its output.
func (q *changeQuorum) addWithKafka(via *dynNode, n *dynNode) {
	q.t.Helper()
	r := runKafkaCLI(q.t, q.env, "--bootstrap-controller", via.addr, "--command-config", q.configs[n.id], "add-controller")
	want := fmt.Sprintf("Added controller %d with directory id %s and endpoints: CONTROLLER://%s\n", n.id, n.dirID, n.addr)
	if r.code != 0 || r.stdout != want {
		q.dumpLogs()
		q.t.Fatalf("kafka-metadata-quorum add-controller of %s: exit %d, stdout %q, error %q; want %q", n.label(), r.code, r.stdout, r.errLine, want)
	}
}

// removeWithKafka runs Kafka's kafka-metadata-quorum remove-controller for n against via.
func (q *changeQuorum) removeWithKafka(via *dynNode, n *dynNode) {
	q.t.Helper()
	r := runKafkaCLI(q.t, q.env, "--bootstrap-controller", via.addr, "remove-controller",
		"--controller-id", strconv.Itoa(int(n.id)), "--controller-directory-id", n.dirID)
	want := fmt.Sprintf("Removed KRaft controller %d with directory id %s\n", n.id, n.dirID)
	if r.code != 0 || r.stdout != want {
		q.dumpLogs()
		q.t.Fatalf("kafka-metadata-quorum remove-controller of %s: exit %d, stdout %q, error %q; want %q", n.label(), r.code, r.stdout, r.errLine, want)
	}
}

// waitObserverAt waits until the leader lists id as an observer whose log reaches offset.
func (q *changeQuorum) waitObserverAt(leader *dynNode, id int32, offset int64, timeout time.Duration) {
	q.t.Helper()
	_, err := kafkatest.WaitQuorum(leader.addr, "__cluster_metadata", timeout, func(d kafkatest.QuorumInfo) bool {
		return slices.ContainsFunc(d.Observers, func(o kmsg.DescribeQuorumResponseTopicPartitionReplicaState) bool {
			return o.ReplicaID == id && o.LogEndOffset >= offset
		})
	})
	if err != nil {
		q.dumpLogs()
		q.t.Fatalf("observer %d did not reach offset %d: %v", id, offset, err)
	}
}

// leaderTransitions counts the times a node's output says it became leader.
func leaderTransitions(n *dynNode) int {
	if n.kraftd {
		return strings.Count(n.proc.Log(), `"to": "Leader(`)
	}
	return strings.Count(n.proc.Log(), "Completed transition to Leader(")
}

// stopAll stops every running node, so their logs can be read.
func (q *changeQuorum) stopAll() {
	for _, n := range q.nodes {
		if !n.stopped {
			if err := n.proc.Stop(); err != nil {
				q.t.Errorf("stop %s: %v", n.label(), err)
			}
			n.stopped = true
		}
	}
}

func jvmFirst(t *testing.T, secondJVM bool) {
	env := kafkatest.Require(t)
	ids := []int32{1, 2}
	if secondJVM {
		ids = append(ids, 3)
	}
	q := newChangeQuorum(t, env, ids...)

	// 1. The JVM, formatted --standalone, leads alone.
	jvm := q.startJVM(1, nil, "--standalone")
	leader, d := q.waitMembers(members{voters: []int32{1}}, 90*time.Second)
	t.Logf("%s leads epoch %d alone", leader.label(), d.LeaderEpoch)

	// 2. kraftd, formatted --no-initial-controllers, observes and is added by Kafka's tool.
	ours := q.startKraftd(2, nil, "--no-initial-controllers")
	q.waitMembers(members{voters: []int32{1}, observers: []int32{2}}, 60*time.Second)
	q.describeAgree(ours.addr, 1)
	q.addWithKafka(jvm, ours)
	voters := []int32{1, 2}
	leader, d = q.waitMembers(members{voters: voters}, 30*time.Second)
	t.Logf("after kraftd's addition: %s", formatQuorum(d))
	q.describeAgree(jvm.addr, len(voters))

	// 3. A second JVM joins the same way.
	if secondJVM {
		jvm3 := q.startJVM(3, nil, "--no-initial-controllers")
		q.waitMembers(members{voters: voters, observers: []int32{3}}, 60*time.Second)
		q.addWithKafka(ours, jvm3)
		voters = []int32{1, 2, 3}
		leader, d = q.waitMembers(members{voters: voters}, 30*time.Second)
		t.Logf("after the second JVM's addition: %s", formatQuorum(d))
		q.describeAgree(ours.addr, len(voters))
	}
	if leader != jvm {
		t.Fatalf("%s leads before the removal, want the JVM that was formatted --standalone", leader.label())
	}

	// 4. Kafka's tool removes the JVM leader: it resigns once the change commits and
	// someone else leads without its vote.
	led := leaderTransitions(jvm)
	q.removeWithKafka(jvm, jvm)
	voters = voters[1:]
	next, nd := q.waitMembers(members{voters: voters, observers: []int32{1}}, 60*time.Second)
	if next == jvm || nd.LeaderEpoch <= d.LeaderEpoch {
		t.Fatalf("after the removal %s leads epoch %d (before: %s epoch %d)", next.label(), nd.LeaderEpoch, jvm.label(), d.LeaderEpoch)
	}
	t.Logf("after the JVM leader's removal: %s leads: %s", next.label(), formatQuorum(nd))
	q.describeAgree(next.addr, len(voters))

	// The removed JVM replicates as an observer; once it holds the committed log it is
	// killed, and the quorum keeps its leader.
	committed := nd.HighWatermark
	q.waitObserverAt(next, jvm.id, committed, 30*time.Second)
	if n := leaderTransitions(jvm); n != led {
		t.Errorf("the removed %s became leader %d more times", jvm.label(), n-led)
	}
	jvm.proc.Kill()
	jvm.stopped = true
	time.Sleep(3 * time.Second) // more than an election timeout: a quorum needing it would fail now
	after, ad := q.waitMembers(members{voters: voters}, 30*time.Second)
	if after != next || ad.LeaderEpoch != nd.LeaderEpoch {
		t.Errorf("after the removed JVM was killed %s leads epoch %d, want %s epoch %d", after.label(), ad.LeaderEpoch, next.label(), nd.LeaderEpoch)
	}

	q.stopAll()
	// The first leader copies the bootstrap snapshot's voter set into its log.
	wantSets := [][]int32{{1}, {1, 2}, {2}}
	if secondJVM {
		wantSets = [][]int32{{1}, {1, 2}, {1, 2, 3}, {2, 3}}
	}
	records := q.checkLogs(committed)
	checkVoterSets(t, records, wantSets)
	checkLastLeaderChange(t, records, next.id, jvm.id)
}

// describeAgree runs Kafka's describe --status and --replication and kraftd's
// describe-quorum with the same flags through addr and wants the fields that do not move
// to agree (describeSame without --human-readable, which TestQuorumCLIWithKafka covers).
func (q *changeQuorum) describeAgree(addr string, voters int) {
	conn := []string{"--bootstrap-controller", addr}
	parallel(
		func() { describeStatusSame(q.t, q.env, q.bin, conn, voters) },
		func() { describeReplicationSame(q.t, q.env, q.bin, conn, false) },
	)
}

// checkLastLeaderChange wants the log's last LeaderChange record to name leader, elected
// without removed: neither among its voters nor among those that granted their vote.
func checkLastLeaderChange(t *testing.T, records []string, leader, removed int32) {
	t.Helper()
	var last string
	for _, r := range records {
		if strings.Contains(r, "LeaderChange:") {
			last = r
		}
	}
	if !strings.Contains(last, fmt.Sprintf(`"leaderId":%d,`, leader)) {
		t.Errorf("last LeaderChange record %q: want leader %d", last, leader)
	}
	for _, m := range dumpedVoterID.FindAllStringSubmatch(last, -1) {
		if m[1] == strconv.Itoa(int(removed)) {
			t.Errorf("last LeaderChange record %q names the removed node %d", last, removed)
		}
	}
}

var dumpedVoterID = regexp.MustCompile(`"voterId":(\d+)`)

// checkVoterSets wants the Voters records kafka-dump-log decoded from a log (checkLogs'
// lines) to name the voter sets want, in order: one record per change.
func checkVoterSets(t *testing.T, records []string, want [][]int32) {
	t.Helper()
	var got [][]int32
	for _, r := range records {
		if !strings.Contains(r, " KRaftVoters ") { // kafka-dump-log's name for a Voters record
			continue
		}
		var ids []int32
		for _, m := range dumpedVoterID.FindAllStringSubmatch(r, -1) {
			id, _ := strconv.Atoi(m[1])
			ids = append(ids, int32(id))
		}
		got = append(got, ids)
	}
	if !slices.EqualFunc(got, want, slices.Equal[[]int32]) {
		t.Errorf("kafka-dump-log's Voters records name %v, want %v:\n%s", got, want, strings.Join(records, "\n"))
	}
}
