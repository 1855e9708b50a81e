package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/internal/testenv"
	"github.com/kraftd/kraftd/storage"
	"github.com/kraftd/kraftd/uuid"
)

func skipShort(t *testing.T) {
	t.Helper()
	testenv.SkipShort(t, "real-process test")
}

// Lines a follower logs when its leader resigned (EndQuorumEpoch), when its
// fetch timer expired, and when its leader's port refused the connection.
const (
	resignedLine     = "leader resigned; election timer shortened"
	fetchTimeoutLine = "fetch timeout expired; starting an election"
	refusedLine      = "leader refused the connection; election timer shortened"
)

// logCount counts the lines of every node's stderr, all runs, containing s.
func (c *cluster) logCount(s string) int {
	n := 0
	for _, p := range c.nodes {
		b, _ := os.ReadFile(p.errPath)
		n += strings.Count(string(b), s)
	}
	return n
}

// committedHW is the highest high watermark any node reported.
func (c *cluster) committedHW() int64 {
	var hw int64 = -1
	for id := range c.nodes {
		for _, s := range c.statsLines(id) {
			hw = max(hw, s.HighWatermark)
		}
	}
	return hw
}

// TestQuorum runs three voters with the workload: one leader, DescribeQuorum
// through franz-go, commits on all three with identical logs, then a SIGTERM
// and a kill -9 failover with their times, and a restart that catches up
// without losing anything committed.
func TestQuorum(t *testing.T) {
	skipShort(t)
	c := newCluster(t, 3)
	for id := int32(1); id <= 3; id++ {
		c.start(id)
	}
	leader, epoch := c.waitLeader(10*time.Second, 0)
	t.Logf("leader %d at epoch %d", leader, epoch)

	// One leader per epoch, and the quorum settles on one: the others answer
	// NOT_LEADER_OR_FOLLOWER. A node may briefly still lead an older epoch, or a
	// later election may win (dueling candidates on a loaded machine); two
	// leaders of one epoch fail the test at once.
	c.waitFor(20*time.Second, "exactly one node answering DescribeQuorum as leader", func() bool {
		byEpoch := map[int32]int32{}
		for id := int32(1); id <= 3; id++ {
			dq, err := c.describeQuorum(id)
			if err != nil {
				continue
			}
			p := dq.Topics[0].Partitions[0]
			if p.LeaderID != id {
				continue
			}
			if other, ok := byEpoch[p.LeaderEpoch]; ok {
				t.Fatalf("nodes %d and %d both lead epoch %d", other, id, p.LeaderEpoch)
			}
			byEpoch[p.LeaderEpoch] = id
		}
		if len(byEpoch) != 1 {
			return false
		}
		for e, id := range byEpoch {
			leader, epoch = id, e
		}
		return true
	})
	dq, err := c.describeQuorum(leader)
	if err != nil {
		t.Fatal(err)
	}
	if dq.Topics[0].Topic != "__cluster_metadata" {
		t.Errorf("DescribeQuorum topic %q", dq.Topics[0].Topic)
	}
	part := dq.Topics[0].Partitions[0]
	if len(part.CurrentVoters) != 3 {
		t.Fatalf("DescribeQuorum voters %+v", part.CurrentVoters)
	}
	seen := map[int32]bool{}
	for _, v := range part.CurrentVoters {
		seen[v.ReplicaID] = true
	}
	if !seen[1] || !seen[2] || !seen[3] {
		t.Fatalf("voters %+v", part.CurrentVoters)
	}

	// DescribeCluster as kafka-metadata-quorum --bootstrap-controller sends it.
	dcReq := kmsg.NewPtrDescribeClusterRequest()
	dcReq.EndpointType = 2
	resp, err := c.request(1, dcReq)
	if err != nil {
		t.Fatal(err)
	}
	dc := resp.(*kmsg.DescribeClusterResponse)
	if dc.ErrorCode != 0 || dc.ControllerID != leader || dc.ClusterID != testRaftClusterID || len(dc.Brokers) != 3 {
		t.Fatalf("DescribeCluster: %+v", dc)
	}
	// The describe-quorum command end to end.
	code, out, errs := runCmd(t, "describe-quorum", "--bootstrap-controller", "127.0.0.1:"+itoa(c.nodes[2].port), "--status", "--timeout", "5s")
	if code != 0 || !strings.Contains(out, "LeaderId:               "+itoa(int(leader))) || !strings.Contains(out, "ClusterId:              AAAAAAAAAAAAAAAAAAAAAA") {
		t.Fatalf("describe-quorum --status: %d %q %q", code, out, errs)
	}

	// The workload commits on all three.
	c.waitFor(10*time.Second, "commits on all three nodes", func() bool {
		for id := int32(1); id <= 3; id++ {
			s, ok := c.lastStats(id)
			if !ok || s.CommittedRecords < 500 {
				return false
			}
		}
		return true
	})
	hw := c.committedHW()
	c.waitFor(5*time.Second, "every log to reach the committed offset", func() bool {
		for id := int32(1); id <= 3; id++ {
			if bs, ok := readLiveLog(c.nodes[id].dataDir); !ok || endOffset(bs) < hw {
				return false
			}
		}
		return true
	})
	logs := map[int32][]logBatch{}
	for id := int32(1); id <= 3; id++ {
		logs[id] = readRunningLog(t, c.nodes[id].dataDir)
	}
	checkSamePrefix(t, hw, logs)

	// SIGTERM of the leader: it resigns (EndQuorumEpoch) and a successor
	// takes over.
	start := time.Now()
	resigned := c.logCount(resignedLine)
	c.signal(leader, syscall.SIGTERM)
	newLeader, newEpoch := c.waitLeader(10*time.Second, epoch)
	sigtermFailover := time.Since(start)
	if !c.waitExit(leader, 10*time.Second) {
		t.Fatalf("leader %d did not exit after SIGTERM", leader)
	}
	if c.nodes[leader].exitErr != nil {
		t.Errorf("leader %d exited with %v after SIGTERM", leader, c.nodes[leader].exitErr)
	}
	t.Logf("SIGTERM failover: node %d -> node %d (epoch %d -> %d) in %v", leader, newLeader, epoch, newEpoch, sigtermFailover)
	// The leader resigned: the followers heard its EndQuorumEpoch and shortened their
	// election timers (how much sooner that elects a successor than a kill -9's fetch
	// timeout is a figure of make bench-quorum's failover scenario, not of a test).
	if n := c.logCount(resignedLine); n <= resigned {
		t.Errorf("after SIGTERM of leader %d no follower logged %q", leader, resignedLine)
	}
	if b, _ := os.ReadFile(c.nodes[leader].outPath); !strings.Contains(string(b), `"final":true`) {
		t.Errorf("node %d printed no final summary", leader)
	}
	c.start(leader)

	// kill -9 of the new leader.
	hwBefore := c.committedHW()
	c.waitFor(10*time.Second, "commits under the new leader", func() bool { return c.committedHW() > hwBefore+200 })
	hwBeforeKill := c.committedHW()
	// What the leader holds below the reported high watermark right before
	// it dies: every node must hold exactly these bytes afterwards.
	var committedBefore []logBatch
	for _, b := range readRunningLog(t, c.nodes[newLeader].dataDir) {
		if b.last < hwBeforeKill {
			committedBefore = append(committedBefore, b)
		}
	}
	start = time.Now()
	timedOut, refused := c.logCount(fetchTimeoutLine), c.logCount(refusedLine)
	c.signal(newLeader, syscall.SIGKILL)
	c.waitExit(newLeader, 5*time.Second)
	third, thirdEpoch := c.waitLeader(10*time.Second, newEpoch)
	killFailover := time.Since(start)
	t.Logf("kill -9 failover: node %d -> node %d (epoch %d -> %d) in %v", newLeader, third, newEpoch, thirdEpoch, killFailover)
	t.Logf("failover times: SIGTERM %v, kill -9 %v", sigtermFailover, killFailover)
	// A killed leader resigns nothing, but its port refuses: a follower's fetch timer,
	// shortened by the refusal, started the election.
	if n := c.logCount(fetchTimeoutLine); n <= timedOut {
		t.Errorf("after kill -9 of leader %d no follower logged %q", newLeader, fetchTimeoutLine)
	}
	if n := c.logCount(refusedLine); n <= refused {
		t.Errorf("after kill -9 of leader %d no follower logged %q", newLeader, refusedLine)
	}
	c.waitFor(10*time.Second, "commits after the kill", func() bool { return c.committedHW() > hwBeforeKill+200 })

	// Restart the killed node: it catches up and nothing committed is lost.
	c.start(newLeader)
	final := c.committedHW()
	c.waitFor(15*time.Second, "all logs to reach the committed offset after restart", func() bool {
		for id := int32(1); id <= 3; id++ {
			if bs, ok := readLiveLog(c.nodes[id].dataDir); !ok || endOffset(bs) < final {
				return false
			}
		}
		return true
	})
	for id := int32(1); id <= 3; id++ {
		logs[id] = readRunningLog(t, c.nodes[id].dataDir)
	}
	checkSamePrefix(t, final, logs)
	// Everything reported committed before the kill is still there, with
	// the bytes it had then.
	if len(committedBefore) == 0 {
		t.Fatal("no committed batches captured before the kill")
	}
	for id := int32(1); id <= 3; id++ {
		if endOffset(logs[id]) < hwBeforeKill {
			t.Fatalf("node %d lost committed data: log end %d < %d", id, endOffset(logs[id]), hwBeforeKill)
		}
		for i, b := range committedBefore {
			if i >= len(logs[id]) || !bytes.Equal(logs[id][i].raw, b.raw) {
				t.Fatalf("node %d: the committed batch at offset %d changed or vanished after the kill", id, b.base)
			}
		}
	}
}

// TestClusterIDMismatch: a voter formatted with another cluster id is
// refused with INCONSISTENT_CLUSTER_ID, logs why, and the other two carry on.
func TestClusterIDMismatch(t *testing.T) {
	skipShort(t)
	c := newCluster(t, 3)
	bad := c.nodes[3]
	if err := os.MkdirAll(bad.dataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	dirID, _ := uuid.Parse(bad.dirID)
	if err := storage.WriteMetaProperties(bad.dataDir, storage.MetaProperties{Version: 1, ClusterID: uuid.Random().String(), NodeID: 3, DirectoryID: dirID}); err != nil {
		t.Fatal(err)
	}
	for id := int32(1); id <= 3; id++ {
		c.start(id)
	}
	leader, _ := c.waitLeader(10*time.Second, 0)
	if leader == 3 {
		t.Fatal("the node with the wrong cluster id became leader")
	}
	c.waitFor(10*time.Second, "commits on nodes 1 and 2", func() bool {
		s1, ok1 := c.lastStats(1)
		s2, ok2 := c.lastStats(2)
		return ok1 && ok2 && s1.CommittedRecords > 300 && s2.CommittedRecords > 300
	})
	c.waitFor(5*time.Second, "a log line about INCONSISTENT_CLUSTER_ID", func() bool {
		for id := int32(1); id <= 3; id++ {
			b, _ := os.ReadFile(c.nodes[id].errPath)
			if strings.Contains(string(b), "INCONSISTENT_CLUSTER_ID") {
				return true
			}
		}
		return false
	})
	if s, ok := c.lastStats(3); ok && s.CommittedRecords > 0 {
		t.Fatalf("node 3 with the wrong cluster id committed %d records", s.CommittedRecords)
	}
	if n := endOffset(readLog(t, bad.dataDir)); n != 0 {
		t.Fatalf("node 3 with the wrong cluster id replicated up to offset %d", n)
	}
}

// TestObserver: a node outside controller.quorum.voters follows the log and
// never votes or stands for election, also across a leader change.
func TestObserver(t *testing.T) {
	skipShort(t)
	c := newCluster(t, 3)
	obs := c.addObserver(4)
	for id := int32(1); id <= 4; id++ {
		c.start(id)
	}
	leader, epoch := c.waitLeader(10*time.Second, 0)
	c.waitFor(10*time.Second, "the observer to replicate committed data", func() bool {
		s, ok := c.lastStats(4)
		return ok && s.CommittedRecords > 300
	})
	c.waitFor(5*time.Second, "the leader to list the observer", func() bool {
		dq, err := c.describeQuorum(leader)
		if err != nil {
			return false
		}
		for _, o := range dq.Topics[0].Partitions[0].Observers {
			if o.ReplicaID == 4 {
				return true
			}
		}
		return false
	})
	c.signal(leader, syscall.SIGKILL)
	c.waitExit(leader, 5*time.Second)
	l2, _ := c.waitLeader(10*time.Second, epoch)
	if l2 == 4 {
		t.Fatal("the observer became leader")
	}
	hw := c.committedHW()
	c.waitFor(10*time.Second, "the observer to follow the new leader", func() bool {
		s, ok := c.lastStats(4)
		return ok && s.LeaderID == l2 && s.HighWatermark >= hw
	})
	b, _ := os.ReadFile(obs.errPath)
	for _, role := range []string{`"role": "Candidate"`, `"role": "Prospective"`, `"role": "Leader"`, `"role": "Voted"`} {
		if strings.Contains(string(b), role) {
			t.Fatalf("observer log shows %s", role)
		}
	}
	for _, s := range c.statsLines(4) {
		if s.CurrentState != "observer" {
			t.Fatalf("observer stats show current_state %q", s.CurrentState)
		}
		if s.Role == "Candidate" || s.Role == "Leader" || s.Role == "Prospective" || s.Role == "Voted" {
			t.Fatalf("observer stats show role %s", s.Role)
		}
	}
}

// TestLatePeers: a voter started alone keeps retrying its peers, elects
// nobody, and joins the quorum once they start.
func TestLatePeers(t *testing.T) {
	skipShort(t)
	c := newCluster(t, 3)
	c.start(1)
	time.Sleep(2 * time.Second) // the scenario: several election timeouts pass alone
	if !c.nodes[1].running() {
		t.Fatal("node 1 exited while its peers were down")
	}
	if l, _ := c.leader(); l >= 0 {
		t.Fatalf("node %d leads without a majority", l)
	}
	c.start(2)
	c.start(3)
	c.waitLeader(10*time.Second, 0)
	c.waitFor(10*time.Second, "node 1 to commit with the quorum", func() bool {
		s, ok := c.lastStats(1)
		return ok && s.CommittedRecords > 300
	})
}

// TestStartCommand: `start` refuses an unformatted dir; after `format` three
// controllers elect a leader on __cluster_metadata, and describe-quorum
// prints what kafka-metadata-quorum prints for them.
func TestStartCommand(t *testing.T) {
	skipShort(t)
	c := newCluster(t, 3)
	c.command = "start"
	c.start(1)
	if !c.waitExit(1, 10*time.Second) {
		t.Fatal("start on an unformatted dir did not exit")
	}
	if c.nodes[1].exitErr == nil {
		t.Fatal("start on an unformatted dir exited 0")
	}
	if b, _ := os.ReadFile(c.nodes[1].errPath); !strings.Contains(string(b), "format") {
		t.Fatalf("no hint to format in %q", b)
	}
	clusterID := uuid.Random().String()
	for id := int32(1); id <= 3; id++ {
		if code, out, errs := runCmd(t, "format", "--config", c.nodes[id].cfgPath, "--cluster-id", clusterID); code != 0 {
			t.Fatalf("format node %d: %d %s %s", id, code, out, errs)
		}
	}
	for id := int32(1); id <= 3; id++ {
		c.start(id)
	}
	leader, epoch := c.waitLeader(10*time.Second, 0)
	code, out, errs := runCmd(t, "describe-quorum", "--bootstrap-controller", "127.0.0.1:"+itoa(c.nodes[1].port), "--status", "--timeout", "5s")
	if code != 0 || !strings.Contains(out, "ClusterId:              "+clusterID+"\n") ||
		!strings.Contains(out, "LeaderId:               "+itoa(int(leader))+"\n") ||
		!strings.Contains(out, "LeaderEpoch:            "+itoa(int(epoch))+"\n") {
		t.Fatalf("describe-quorum --status: %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = runCmd(t, "describe-quorum", "--bootstrap-controller", "127.0.0.1:"+itoa(c.nodes[3].port), "--replication", "--timeout", "5s")
	if code != 0 || strings.Count(out, "\n") != 4 || !strings.Contains(out, "\tLeader  \t") || strings.Count(out, "Follower") != 2 {
		t.Fatalf("describe-quorum --replication: %d\n%s\n%s", code, out, errs)
	}
	// The leader's log, under __cluster_metadata-0, starts with its
	// LeaderChange record; the active controller's activation records (the
	// bootstrap) follow as data.
	if _, err := os.Stat(filepath.Join(c.nodes[leader].dataDir, "__cluster_metadata-0")); err != nil {
		t.Fatal(err)
	}
	c.waitFor(10*time.Second, "the activation records in the leader's log", func() bool {
		bs := readTopicLog(t, c.nodes[leader].dataDir, "__cluster_metadata")
		return len(bs) >= 2 && bs[0].control && slices.ContainsFunc(bs, func(b logBatch) bool { return !b.control })
	})
}

// TestShutdownBoundAndSecondSignal: a leader whose followers are gone cannot
// hand over; its graceful shutdown is bounded, and a second SIGTERM ends it
// at once.
func TestShutdownBoundAndSecondSignal(t *testing.T) {
	skipShort(t)
	c := newCluster(t, 3)
	c.args = append(c.args, "--shutdown-timeout", "3s")
	for id := int32(1); id <= 3; id++ {
		c.start(id)
	}
	leader, _ := c.waitLeader(10*time.Second, 0)
	var others []int32
	for id := int32(1); id <= 3; id++ {
		if id != leader {
			others = append(others, id)
			c.signal(id, syscall.SIGKILL)
			c.waitExit(id, 5*time.Second)
		}
	}
	// Bounded: one SIGTERM, no peers to hand over to.
	start := time.Now()
	c.signal(leader, syscall.SIGTERM)
	if !c.waitExit(leader, 8*time.Second) {
		t.Fatal("graceful shutdown without peers did not end within its bound")
	}
	took := time.Since(start)
	t.Logf("graceful shutdown without peers took %v (bound 3s)", took)
	// A second signal: restart the leader alone, SIGTERM twice.
	c.start(leader)
	c.waitFor(10*time.Second, "the restarted node to run its loop", func() bool {
		b, _ := os.ReadFile(c.nodes[leader].errPath)
		return strings.Count(string(b), "initial quorum state") >= 2
	})
	c.start(others[0])
	l2, _ := c.waitLeader(10*time.Second, 0)
	peer := others[0]
	if l2 == peer {
		peer = leader
	}
	c.signal(peer, syscall.SIGKILL)
	c.waitExit(peer, 5*time.Second)
	c.signal(l2, syscall.SIGTERM)
	lastRun := func() string {
		b, _ := os.ReadFile(c.nodes[l2].errPath)
		return string(b[bytes.LastIndex(b, []byte("=== run ")):])
	}
	c.waitFor(10*time.Second, "the leader to start its shutdown", func() bool { return strings.Contains(lastRun(), "raft shutdown requested") })
	if !c.nodes[l2].running() {
		t.Fatal("leader exited before its shutdown bound without a second signal")
	}
	start = time.Now()
	c.signal(l2, syscall.SIGTERM)
	if !c.waitExit(l2, 10*time.Second) {
		t.Fatal("a second SIGTERM did not end the process")
	}
	t.Logf("second SIGTERM: exit after %v", time.Since(start))
	// It exited through the second signal, not at the end of its graceful shutdown.
	if out := lastRun(); !strings.Contains(out, "second signal: exiting at once") || strings.Contains(out, "raft shutdown complete") {
		t.Error("the second SIGTERM did not cut the graceful shutdown short")
	}
	if c.nodes[l2].exitErr == nil {
		t.Error("forced exit reported success")
	}
}

// TestSnapshotCatchUp: with small snapshot, segment and retention limits the
// leader's log start moves past offset 0; a voter that was down the whole
// time has an empty log, so it must load the leader's snapshot through
// FetchSnapshot and then fetch the rest.
func TestSnapshotCatchUp(t *testing.T) {
	skipShort(t)
	c := newCluster(t, 3)
	c.extra = append(append([]string(nil), fastQuorum...),
		"metadata.log.max.record.bytes.between.snapshots=65536",
		"metadata.log.segment.min.bytes=16384",
		"metadata.log.segment.bytes=32768",
		"metadata.max.retention.bytes=131072",
	)
	for _, p := range c.nodes {
		c.writeConfig(p, "controller")
	}
	c.args = append(c.args, "--log-maintenance-interval", "300ms")
	c.start(1)
	c.start(2)
	leader, _ := c.waitLeader(10*time.Second, 0)
	var startOffset int64
	c.waitFor(20*time.Second, "the leader's log start to move past 0", func() bool {
		bs, ok := readLiveLog(c.nodes[leader].dataDir)
		if ok && len(bs) > 0 && bs[0].base > 0 {
			startOffset = bs[0].base
			return true
		}
		return false
	})
	snaps, _ := filepath.Glob(filepath.Join(c.nodes[leader].dataDir, "__raft_performance_test-0", "*.checkpoint"))
	if len(snaps) == 0 {
		t.Fatal("log start moved but the leader has no snapshot")
	}
	t.Logf("leader %d log starts at %d; snapshots %v", leader, startOffset, snaps)
	c.start(3)
	hw := c.committedHW()
	c.waitFor(20*time.Second, "node 3 to catch up through a snapshot", func() bool {
		s, ok := c.lastStats(3)
		bs, readOK := readLiveLog(c.nodes[3].dataDir)
		return ok && readOK && s.HighWatermark >= hw && endOffset(bs) >= hw
	})
	got, _ := filepath.Glob(filepath.Join(c.nodes[3].dataDir, "__raft_performance_test-0", "*.checkpoint"))
	if len(got) == 0 {
		t.Fatal("node 3 caught up without a snapshot")
	}
	var bs []logBatch
	c.waitFor(10*time.Second, "a complete read of node 3's log", func() bool {
		var ok bool
		bs, ok = readLiveLog(c.nodes[3].dataDir)
		return ok
	})
	if len(bs) == 0 || bs[0].base == 0 {
		t.Fatalf("node 3's log starts at offset 0: it did not start from the snapshot")
	}
}

// TestCorruptQuorumStateStops: a corrupt quorum-state file stops the node
// with a non-zero exit and an error naming the file, never a silent reset.
func TestCorruptQuorumStateStops(t *testing.T) {
	skipShort(t)
	c := newCluster(t, 3)
	c.start(1)
	c.waitFor(10*time.Second, "node 1 to write its quorum state", func() bool {
		_, err := os.Stat(filepath.Join(c.nodes[1].dataDir, "__raft_performance_test-0", "quorum-state"))
		return err == nil
	})
	c.signal(1, syscall.SIGKILL) // the file is durable; no need to wait out a graceful shutdown
	if !c.waitExit(1, 10*time.Second) {
		t.Fatal("node 1 did not stop")
	}
	qs := filepath.Join(c.nodes[1].dataDir, "__raft_performance_test-0", "quorum-state")
	if err := os.WriteFile(qs, []byte(`{"leaderEpoch": "x"`), 0o644); err != nil {
		t.Fatal(err)
	}
	c.start(1)
	if !c.waitExit(1, 10*time.Second) {
		t.Fatal("node 1 kept running with a corrupt quorum-state")
	}
	if c.nodes[1].exitErr == nil {
		t.Fatal("exit status 0 with a corrupt quorum-state")
	}
	b, _ := os.ReadFile(c.nodes[1].errPath)
	if !strings.Contains(string(b), qs) {
		t.Fatalf("the error does not name %s:\n%s", qs, b)
	}
}
