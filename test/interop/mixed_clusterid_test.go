package interop

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// TestMixedClusterIDMismatch: a voter formatted for another cluster is refused with
// INCONSISTENT_CLUSTER_ID in both directions (its requests and the quorum's requests to it),
// and the two voters of the right cluster elect a leader, commit and stay in one epoch.
// Once a kraftd node is the stranger (Kafka controllers refuse it), once a Kafka controller
// (kraftd nodes refuse it).
func TestMixedClusterIDMismatch(t *testing.T) {
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	K, J := kafkatest.SideKraftd, kafkatest.SideKafka
	t.Run("kraftd-stranger", func(t *testing.T) { runClusterIDMismatch(t, env, []kafkatest.Side{J, J, K}) })
	t.Run("kafka-stranger", func(t *testing.T) { runClusterIDMismatch(t, env, []kafkatest.Side{K, K, J}) })
}

// runClusterIDMismatch formats node 3 with a foreign cluster id.
func runClusterIDMismatch(t *testing.T, env *kafkatest.Env, sides []kafkatest.Side) {
	const stranger = 3
	foreign := kafkatest.NewUUID()
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: sides, Controllers: true, ClusterIDs: map[int32]string{stranger: foreign}})
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	members := []int32{1, 2}
	leader, epoch, err := q.WaitLeaderAmong(members, 0, mixedElectionWait)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.WaitCommit(epoch, -1, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s node %d leads epoch %d of cluster %s; node 3 (%s) belongs to %s", q.Node(leader).Side, leader, epoch, q.ClusterID(1), q.Node(stranger).Side, foreign)

	// Both directions refused, each side saying so in its log.
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range q.Nodes {
		var want []string
		switch {
		case n.Side == kafkatest.SideKraftd && n.ID == stranger:
			want = []string{
				`"msg":"peer refused our request: INCONSISTENT_CLUSTER_ID`,
				fmt.Sprintf(`"their_cluster_id":%q,"our_cluster_id":%q`, q.ClusterID(1), foreign),
			}
		case n.Side == kafkatest.SideKraftd:
			want = []string{fmt.Sprintf(`"their_cluster_id":%q,"our_cluster_id":%q`, foreign, q.ClusterID(1))}
		case n.ID == stranger || n.ID == leader:
			// A JVM logs the INCONSISTENT_CLUSTER_ID answers it gets (the stranger to its
			// Vote/Fetch, the leader to its BeginQuorumEpoch).
			want = []string{"INCONSISTENT_CLUSTER_ID"}
		}
		for _, w := range want {
			if err := n.Proc.WaitLog(w, time.Until(deadline)); err != nil {
				t.Errorf("node %d (%s): %v", n.ID, n.Side, err)
			}
		}
	}
	// The stranger never joins: no leader, no follower state in its log.
	if st, ok := q.Node(stranger).State(); ok && (st.Role == "Leader" || st.Role == "Follower") {
		t.Errorf("node 3 of cluster %s reached %+v in the quorum of %s", foreign, st, q.ClusterID(1))
	}
	// The quorum carries on in the same epoch (the scenario: two election timeouts of the
	// stranger's refusals, in which nothing may move).
	time.Sleep(2 * time.Second)
	if l, e, ok := q.AgreedLeaderAmong(members); !ok || l != leader || e != epoch {
		t.Errorf("quorum disturbed by the stranger: leader %d epoch %d (agreed %v), want %d in %d", l, e, ok, leader, epoch)
	}
	if !q.Node(stranger).Running() {
		t.Errorf("node 3 (%s) exited: a foreign cluster's refusals must not stop it", q.Node(stranger).Side)
	}
	for _, n := range q.Nodes {
		if strings.Contains(n.Proc.Log(), "Fatal") {
			t.Errorf("node %d logged a fatal error", n.ID)
		}
	}
	keepLogs(t, q)
	// Nothing of the shutdown is under test here: a JVM leader would wait out its resignation
	// timeout for the stranger's acknowledgement.
	for _, n := range q.Nodes {
		q.Kill(n.ID)
	}
}
