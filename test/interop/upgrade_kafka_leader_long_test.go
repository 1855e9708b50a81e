//go:build interoplong

package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/admin"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// TestKRaftVersionUpgradeKafkaLeaderLong (about 75 s): a static mixed controller quorum
// (two Kafka 4.4.0 controllers and kraftd, controller.quorum.voters) led by a Kafka
// controller is upgraded to kraft.version 1 with Kafka's own `kafka-features
// --bootstrap-controller <leader> upgrade --feature kraft.version=1`. The Kafka leader takes
// the upgrade only once every voter has registered (ControllerRegistration, a
// RegisterControllerRecord) with a kraft.version range that covers 1: kraftd registers while
// a JVM leads. Checked: the leader's DescribeCluster lists kraftd; after the upgrade every
// node, kraftd included, reports kraft.version 1 and kafka-metadata-quorum every voter's
// directory id; Kafka's remove-controller then removes the other JVM voter (a voter change
// at kraft.version 1, leaving the Kafka leader committing through kraftd), and every node's
// log reads the same, through kafka-dump-log too, kraftd's RegisterControllerRecord
// included.
func TestKRaftVersionUpgradeKafkaLeaderLong(t *testing.T) {
	t.Parallel() // see interop/doc.go
	K, J := kafkatest.SideKraftd, kafkatest.SideKafka
	runKafkaLeaderUpgrade(t, []kafkatest.Side{J, J, K}, nil)
}

// TestKRaftVersionUpgradeKafkaLeaderTwoKraftdLong (about 75 s): as
// TestKRaftVersionUpgradeKafkaLeaderLong with one Kafka controller and two kraftd voters, so
// the Kafka leader commits everything, registrations included, through a kraftd follower;
// both kraftd voters register, and Kafka's remove-controller removes one of them. kraftd's
// election timeout is raised so that the Kafka controller wins the first election.
func TestKRaftVersionUpgradeKafkaLeaderTwoKraftdLong(t *testing.T) {
	t.Parallel() // see interop/doc.go
	K, J := kafkatest.SideKraftd, kafkatest.SideKafka
	runKafkaLeaderUpgrade(t, []kafkatest.Side{J, K, K}, kafkatest.Props{"controller.quorum.election.timeout.ms": "10000"})
}

// runKafkaLeaderUpgrade runs a static quorum of sides (node 1 a Kafka controller) whose
// nodes 1 and 2 start first and elect a Kafka leader; node 3 joins after.
func runKafkaLeaderUpgrade(t *testing.T, sides []kafkatest.Side, kraftdProps kafkatest.Props) {
	env := kafkatest.Require(t)
	J := kafkatest.SideKafka
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: sides, Controllers: true, KafkaLog4j: kafkaRaftDebug, KraftdProps: kraftdProps})
	r := &mixedRun{t: t, q: q, hw: -1, led: map[int32]kafkatest.Side{}}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// A Kafka controller leads first and writes the bootstrap metadata (metadata.version);
	// node 3 then joins as a follower.
	q.Start(1)
	q.Start(2)
	r.elected("first election", time.Now())
	if r.side(r.leader) != J {
		t.Fatalf("leader %s, want a Kafka controller", r.label(r.leader))
	}
	jvmLeader := q.Node(r.leader).Addr
	adminReady(ctx, t, env, jvmLeader)
	q.Start(3)

	// The Kafka leader lists each kraftd voter once its registration is committed.
	var kraftds []*kafkatest.MixedNode
	for _, n := range q.Nodes {
		if n.Side != J {
			kraftds = append(kraftds, n)
			waitRegistered(ctx, t, jvmLeader, n)
		}
	}
	if lvl := finalizedKRaftVersion(ctx, t, env, jvmLeader); lvl != "0" {
		t.Errorf("kraft.version finalized at %s before the upgrade, want 0", lvl)
	}
	out := upgradeKRaftVersion(ctx, t, env, jvmLeader)
	t.Logf("kafka-features upgrade through Kafka leader %d: %s", r.leader, strings.TrimSpace(out))
	for _, n := range q.Nodes {
		waitFinalizedKRaftVersion(ctx, t, env, n, "1")
	}
	checkVoterDirectories(ctx, t, env, q, jvmLeader)
	if _, err := env.MetadataQuorum(ctx, jvmLeader, "describe", "--status"); err != nil {
		t.Errorf("kafka-metadata-quorum describe --status against the Kafka leader after the upgrade: %v", err)
	}

	// A voter change at kraft.version 1: a follower leaves, chosen so that a kraftd follower
	// stays and the Kafka leader commits through kraftd alone.
	followers := r.others(r.leader)
	var victim *kafkatest.MixedNode
	for i := len(followers) - 1; i >= 0 && victim == nil; i-- {
		for _, f := range followers {
			if f != followers[i] && r.side(f) != J {
				victim = q.Node(followers[i])
				break
			}
		}
	}
	removeController(ctx, t, env, jvmLeader, victim)
	waitVoters(ctx, t, env, jvmLeader, len(q.Nodes)-1)
	hw := r.caughtUp(waitHighWatermarkGrows(t, jvmLeader))
	for _, n := range q.Nodes {
		if err := q.Stop(n.ID); err != nil {
			t.Errorf("stop node %d: %v", n.ID, err)
		}
	}
	checkMixedLogs(t, env, q, r.led, hw, true)
	checkControlRecordsDumped(ctx, t, env, q)
	for _, n := range kraftds {
		checkRegistrationDumped(ctx, t, env, q.Node(r.leader), n.ID)
	}
}

// waitRegistered waits until the Kafka controller at addr lists n in DescribeCluster (its
// answer comes from the controller registrations in its metadata image).
func waitRegistered(ctx context.Context, t *testing.T, addr string, n *kafkatest.MixedNode) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.EndpointType = 2 // controllers
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		resp, err := admin.Request(rctx, addr, req)
		cancel()
		if err == nil {
			dc := resp.(*kmsg.DescribeClusterResponse)
			var ids []string
			for _, b := range dc.Brokers {
				ids = append(ids, fmt.Sprintf("%d@%s:%d", b.NodeID, b.Host, b.Port))
				if b.NodeID == n.ID && fmt.Sprintf("%s:%d", b.Host, b.Port) == n.Addr {
					t.Logf("the Kafka leader's DescribeCluster lists kraftd node %d: %v", n.ID, ids)
					return
				}
			}
			last = fmt.Sprintf("error %d, controllers %v", dc.ErrorCode, ids)
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			t.Fatalf("DescribeCluster of %s never listed kraftd node %d at %s: %s", addr, n.ID, n.Addr, last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// waitFinalizedKRaftVersion waits until kafka-features describe against node n shows
// kraft.version finalized at want (a follower applies the KRaftVersion record once it
// fetched the leader's high watermark past it).
func waitFinalizedKRaftVersion(ctx context.Context, t *testing.T, env *kafkatest.Env, n *kafkatest.MixedNode, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		lvl := finalizedKRaftVersion(ctx, t, env, n.Addr)
		if lvl == want {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s node %d: kraft.version finalized at %s, want %s", n.Side, n.ID, lvl, want)
			return
		}
		time.Sleep(time.Second)
	}
}

// checkRegistrationDumped: kafka-dump-log of node n's log decodes a RegisterControllerRecord
// of kraftd node id with kraft.version 0-1 among its features, and the same feature ranges
// as a Kafka controller's registration.
func checkRegistrationDumped(ctx context.Context, t *testing.T, env *kafkatest.Env, n *kafkatest.MixedNode, id int32) {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(n.PartitionDir, "*.log"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no segments in %s", n.PartitionDir)
	}
	sort.Strings(segs)
	out, err := env.DumpLog(ctx, kafkatest.DumpOptions{DeepIteration: true, ClusterMetadataDecoder: true}, segs...)
	if err != nil {
		t.Fatal(err)
	}
	type registration struct {
		Type string `json:"type"`
		Data struct {
			ControllerID int32 `json:"controllerId"`
			Features     []struct {
				Name string `json:"name"`
				Min  int16  `json:"minSupportedVersion"`
				Max  int16  `json:"maxSupportedVersion"`
			} `json:"features"`
		} `json:"data"`
	}
	features := map[int32]string{} // node id -> sorted "name min-max" list
	for _, line := range strings.Split(out, "\n") {
		i := strings.Index(line, "payload: ")
		if i < 0 || !strings.Contains(line, `"REGISTER_CONTROLLER_RECORD"`) {
			continue
		}
		var r registration
		if err := json.Unmarshal([]byte(line[i+len("payload: "):]), &r); err != nil {
			t.Errorf("kafka-dump-log registration: %v: %s", err, line)
			continue
		}
		var fs []string
		for _, f := range r.Data.Features {
			fs = append(fs, fmt.Sprintf("%s %d-%d", f.Name, f.Min, f.Max))
		}
		sort.Strings(fs)
		features[r.Data.ControllerID] = strings.Join(fs, ", ")
	}
	got, ok := features[id]
	if !ok {
		t.Fatalf("no RegisterControllerRecord of node %d in node %d's log (registrations: %v)", id, n.ID, features)
	}
	if !strings.Contains(got, "kraft.version 0-1") {
		t.Errorf("kraftd's registration lacks kraft.version 0-1: %s", got)
	}
	if jvm := features[n.ID]; got != jvm {
		t.Errorf("kraftd registered features\n%s\nKafka node %d registered\n%s", got, n.ID, jvm)
	}
	t.Logf("kraftd's RegisterControllerRecord: %s", got)
}

// TestKRaftVersionUpgradeKraftdLeaderLong: a static mixed controller quorum (kraftd and two Kafka
// 4.4.0 controllers, controller.quorum.voters) led by kraftd is upgraded to kraft.version 1
// with Kafka's own `kafka-features --bootstrap-controller ... upgrade --feature
// kraft.version=1`. The JVM followers' UpdateRaftVoter reports give the kraftd leader their
// directory ids; afterwards kafka-features describe against the kraftd leader shows
// kraft.version 1, kafka-metadata-quorum every voter's directory id, first from the kraftd
// leader, then from a Kafka leader, which reads the kraftd leader's KRaftVersion and Voters
// records and removes a voter with Kafka's remove-controller; every node's log reads the
// same through kafka-dump-log, KRaftVersion and Voters records included.
//
// kafka-features is only run against kraftd: a Kafka controller answers its DescribeCluster
// from controller registrations, which a quorum that kraftd led may lack (kraftd serves no
// ControllerRegistration), and the tool then waits for metadata until it times out.
func TestKRaftVersionUpgradeKraftdLeaderLong(t *testing.T) {
	t.Parallel() // see interop/doc.go
	env := kafkatest.Require(t)
	K, J := kafkatest.SideKraftd, kafkatest.SideKafka
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{K, J, J}, Controllers: true, KafkaLog4j: kafkaRaftDebug})
	r := &mixedRun{t: t, q: q, hw: -1, led: map[int32]kafkatest.Side{}}
	// The JVM controllers start first: a Kafka leader writes the bootstrap metadata
	// (metadata.version) and takes the controller registrations, which Kafka's admin tools
	// need from a Kafka controller; then kraftd joins and is made the leader.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	q.Start(2)
	q.Start(3)
	r.elected("first election", time.Now())
	adminReady(ctx, t, env, q.Node(r.leader).Addr)
	q.Start(1)
	r.force(K)

	kraftdLeader := q.Node(r.leader).Addr
	if lvl := finalizedKRaftVersion(ctx, t, env, kraftdLeader); lvl != "0" {
		t.Errorf("kraft.version finalized at %s before the upgrade, want 0", lvl)
	}
	out := upgradeKRaftVersion(ctx, t, env, kraftdLeader)
	t.Logf("kafka-features upgrade through kraftd node %d: %s", r.leader, strings.TrimSpace(out))
	if lvl := finalizedKRaftVersion(ctx, t, env, kraftdLeader); lvl != "1" {
		t.Errorf("kraftd leader: kraft.version finalized at %s after the upgrade, want 1", lvl)
	}
	checkVoterDirectories(ctx, t, env, q, kraftdLeader)

	// A Kafka leader takes over from the kraftd leader's records: it describes the voters
	// with their directory ids, and serves RemoveRaftVoter (UNSUPPORTED_VERSION at
	// kraft.version 0): Kafka's tool removes the other JVM voter.
	r.force(J)
	jvmLeader := q.Node(r.leader).Addr
	checkVoterDirectories(ctx, t, env, q, jvmLeader)

	var victim *kafkatest.MixedNode
	for _, id := range r.others(r.leader) {
		if r.side(id) == J {
			victim = q.Node(id)
		}
	}
	removeController(ctx, t, env, jvmLeader, victim)
	waitVoters(ctx, t, env, jvmLeader, len(q.Nodes)-1)

	d, err := kafkatest.DescribeQuorum(jvmLeader, "__cluster_metadata")
	if err != nil {
		t.Fatal(err)
	}
	hw := r.caughtUp(d.HighWatermark)
	for _, n := range q.Nodes {
		if err := q.Stop(n.ID); err != nil {
			t.Errorf("stop node %d: %v", n.ID, err)
		}
	}
	checkMixedLogs(t, env, q, r.led, hw, true)
	checkControlRecordsDumped(ctx, t, env, q)
}
