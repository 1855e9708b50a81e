//go:build interoplong

package interop

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/admin"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
	"github.com/kraftd/kraftd/topics"
)

// TestKillDuringAddKraftdLeaderLong: a kraftd leader is killed while its AddRaftVoter of a
// Kafka controller is uncommitted (see killDuringAdd).
func TestKillDuringAddKraftdLeaderLong(t *testing.T) {
	t.Parallel()
	killDuringAdd(t, true)
}

// TestKillDuringAddKafkaLeaderLong: a Kafka leader is killed while its AddRaftVoter of a
// kraftd node is uncommitted.
func TestKillDuringAddKafkaLeaderLong(t *testing.T) {
	t.Parallel()
	killDuringAdd(t, false)
}

// killDuringAdd: voters 1, 2 and 3 (formatted by Kafka's storage tool with the same
// --initial-controllers) and observer 4 (--no-initial-controllers). Node 1 leads (its side
// set by kraftdLeader; the others' longer election timeouts let it win, and its long
// fetch timeout keeps check quorum from resigning it below). Voters 2 and 3 are stopped
// (SIGSTOP), node 4 is added: the leader appends Voters{1,2,3,4}, which needs 3 of 4 to
// commit, and is killed with SIGKILL while the change is uncommitted; 2 and 3 resume.
// Whichever way the election goes: the add did not report success unless 4 became a voter;
// a new leader is elected; every node converges on one voter set; the old leader restarts
// and agrees; a fresh add of 4 succeeds if 4 is not a voter; every log reads the same
// through kafka-dump-log.
func killDuringAdd(t *testing.T, kraftdLeader bool) {
	env := kafkatest.Require(t)
	k := kraftdLeader
	q := newRevQuorum(t, env, []bool{k, !k, k, !k})
	n1, n2, n3, n4 := q.node(1), q.node(2), q.node(3), q.node(4)
	var initial []string
	for _, n := range q.nodes[:3] {
		n.dirID = kafkatest.NewUUID()
		initial = append(initial, fmt.Sprintf("%d@%s:%s", n.id, n.addr, n.dirID))
	}
	q.initial = strings.Join(initial, ",")
	patient := kafkatest.Props{"controller.quorum.election.timeout.ms": "4000"}
	q.props[1] = kafkatest.Props{"controller.quorum.fetch.timeout.ms": "60000"}
	q.props[2], q.props[3] = patient, patient
	parallel(func() { q.format(n1) }, func() { q.format(n2) }, func() { q.format(n3) }, func() {
		if n4.kraftd {
			q.formatKraftd(n4, "--no-initial-controllers")
		} else {
			q.formatKafka(n4, "--no-initial-controllers")
		}
	})
	// The leader's side starts first.
	q.start(sideOf(q.nodes, k)...)
	q.start(sideOf(q.nodes, !k)...)
	leader, d := q.waitLeader(0, 90*time.Second, func(d kafkatest.QuorumInfo) bool {
		o, ok := replica(d, 4)
		return len(d.Voters) == 3 && ok && o.LogEndOffset >= d.HighWatermark
	})
	if leader != n1 {
		t.Fatalf("%s leads epoch %d, want %s", leader.label(), d.LeaderEpoch, n1.label())
	}
	epoch := d.LeaderEpoch
	q.waitAdmin(n1)

	for _, n := range []*dynNode{n2, n3} {
		signal(t, n, syscall.SIGSTOP)
	}
	// Kafka's tool adds a JVM to a kraftd leader, kraftd's a kraftd node to a JVM leader.
	added := make(chan cliResult, 1)
	go func() {
		if k {
			added <- runKafkaCLI(t, env, "--bootstrap-controller", n1.addr, "--command-config", q.config[4], "add-controller")
		} else {
			added <- runKraftdCLI(t, q.bin, "add-controller", "--bootstrap-controller", n1.addr, "--command-config", q.config[4])
		}
	}()
	if _, err := kafkatest.WaitQuorum(n1.addr, topics.ClusterMetadata, 90*time.Second, func(d kafkatest.QuorumInfo) bool { return len(d.Voters) == 4 }); err != nil {
		q.dumpLogs()
		t.Fatalf("the leader did not append Voters{1,2,3,4}: %v", err)
	}
	q.kill(n1)
	for _, n := range []*dynNode{n2, n3} {
		signal(t, n, syscall.SIGCONT)
	}
	r := <-added
	t.Logf("add-controller while %s was killed: exit %d, stdout %q, error %q", n1.label(), r.code, r.stdout, r.errLine)

	leader, d = q.waitLeader(epoch, 90*time.Second, func(kafkatest.QuorumInfo) bool { return true })
	d = q.waitAllCaughtUp(leader, 90*time.Second)
	voters := ids(d.Voters)
	t.Logf("%s leads epoch %d with voters %v", leader.label(), d.LeaderEpoch, voters)
	if !slices.Equal(voters, []int32{1, 2, 3}) && !slices.Equal(voters, []int32{1, 2, 3, 4}) {
		t.Fatalf("voters %v after the crash, want 1, 2, 3 with or without 4", voters)
	}
	if r.code == 0 && !slices.Contains(voters, 4) {
		t.Errorf("add-controller reported success (%q) but 4 is not a voter: %v", r.stdout, voters)
	}

	q.start(n1)
	leader, d = q.waitLeader(d.LeaderEpoch-1, 90*time.Second, func(kafkatest.QuorumInfo) bool { return true })
	d = q.waitAllCaughtUp(leader, 90*time.Second)
	if got := ids(d.Voters); !slices.Equal(got, voters) {
		t.Errorf("after %s restarted: voters %v, want %v", n1.label(), got, voters)
	}
	if !slices.Contains(voters, 4) {
		// The other tool this time.
		var again cliResult
		if k {
			again = runKraftdCLI(t, q.bin, "add-controller", "--bootstrap-controller", leader.addr, "--command-config", q.config[4])
		} else {
			again = runKafkaCLI(t, env, "--bootstrap-controller", leader.addr, "--command-config", q.config[4], "add-controller")
		}
		if again.code != 0 || again.stdout != addedLine(n4) {
			t.Fatalf("add-controller after the crash: exit %d, stdout %q, error %q; want %q", again.code, again.stdout, again.errLine, addedLine(n4))
		}
	}
	leader, d = q.waitLeader(d.LeaderEpoch-1, 90*time.Second, func(d kafkatest.QuorumInfo) bool { return len(d.Voters) == 4 })
	d = q.waitAllCaughtUp(leader, 90*time.Second)
	q.checkVoters(d, []int32{1, 2, 3, 4}, nil)
	// A kraftd node names the leader to both tools (see TestDynamicReverseQuorumLong).
	via := n1
	if !via.kraftd {
		via = n2
	}
	describeSame(t, env, q.bin, via.addr, 4)
	d = q.waitAllCaughtUp(leader, 90*time.Second)
	q.stopAll()
	q.checkLogs(d.HighWatermark)
}

// waitAdmin waits until the admin requests of add-controller find the leader through
// DescribeCluster at leader: a JVM lists the controllers registered in its metadata,
// which the leader has committed only some time after its election.
func (q *revQuorum) waitAdmin(leader *dynNode) {
	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		got, err := admin.DescribeQuorum(ctx, admin.Bootstrap{Addrs: []string{leader.addr}})
		cancel()
		if err == nil && got.Partition.LeaderID == leader.id {
			return
		}
		if time.Now().After(deadline) {
			q.dumpLogs()
			q.t.Fatalf("DescribeCluster at %s does not lead to it: %+v %v", leader.label(), got, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitListsItself waits until the JVM leader's DescribeCluster (controller endpoints)
// names it the active controller and lists its endpoint, which Kafka's admin client needs
// before it sends DescribeQuorum: a JVM elected a moment ago answers from metadata that
// does not hold its own ControllerRegistration yet, and Kafka's tool then retries until
// its own timeout (kraftd's finds the leader through the bootstrap address itself).
func (q *revQuorum) waitListsItself(leader *dynNode) {
	deadline := time.Now().Add(90 * time.Second)
	var last string
	for {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.EndpointType = 2 // controllers
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := admin.Request(ctx, leader.addr, req)
		cancel()
		if err == nil {
			dc := resp.(*kmsg.DescribeClusterResponse)
			if dc.ErrorCode == 0 && dc.ControllerID == leader.id && slices.ContainsFunc(dc.Brokers,
				func(b kmsg.DescribeClusterResponseBroker) bool { return b.NodeID == leader.id }) {
				return
			}
			last = fmt.Sprintf("error %d, controller %d, %d endpoints", dc.ErrorCode, dc.ControllerID, len(dc.Brokers))
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			q.dumpLogs()
			q.t.Fatalf("DescribeCluster at %s never named it with its endpoint: %s", leader.label(), last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// sideOf returns the nodes of one side.
func sideOf(nodes []*dynNode, kraftd bool) []*dynNode {
	var out []*dynNode
	for _, n := range nodes {
		if n.kraftd == kraftd {
			out = append(out, n)
		}
	}
	return out
}

// signal sends sig to n's process; a stopped process is resumed when the test ends, so
// its cleanup can stop it.
func signal(t *testing.T, n *dynNode, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(n.proc.Pid(), sig); err != nil {
		t.Fatalf("%s to %s: %v", sig, n.label(), err)
	}
	if sig == syscall.SIGSTOP {
		pid := n.proc.Pid()
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	}
}

// TestDynamicReverseQuorumLong: a kraftd quorum grown with Kafka controllers. kraftd's `format
// --standalone` makes node 1 the single voter and leader of a dynamic quorum; two Kafka
// 4.4 controllers formatted --no-initial-controllers join as observers through the
// bootstrap servers; kraftd's add-controller adds one and Kafka's kafka-metadata-quorum
// add-controller the other; kraftd's remove-controller then removes the kraftd leader,
// which resigns once the removal commits: a JVM leads, and the kraftd node follows as an
// observer and never leads again. Kafka's describe and kraftd's describe-quorum agree at
// every step, and every node's log reads the same through kafka-dump-log.
func TestDynamicReverseQuorumLong(t *testing.T) {
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
	// NOT_CONTROLLER), so the tools can start at the JVM leader once it lists itself.
	q.waitListsItself(leader)
	describeSame(t, env, q.bin, leader.addr, 2)
	if _, err := kafkatest.DescribeQuorum(k1.addr, topics.ClusterMetadata); err == nil {
		t.Errorf("the removed %s still answers DescribeQuorum as leader", k1.label())
	}
	d = q.waitAllCaughtUp(leader, 60*time.Second)
	q.stopAll()
	if n := leaderTransitions(k1); n != 1 {
		t.Errorf("%s became leader %d times, want once (before its removal)", k1.label(), n)
	}
	q.checkLogs(d.HighWatermark)
}
