//go:build interoplong

package interop

import (
	"testing"
	"time"

	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// TestDynamicChangesJVMFirstLong is TestDynamicChangesJVMFirst with a second JVM
// controller, formatted --no-initial-controllers and added by Kafka's add-controller,
// before the JVM leader is removed: kraftd or that JVM leads, elected without the removed
// node's vote.
func TestDynamicChangesJVMFirstLong(t *testing.T) {
	t.Parallel() // see interop/doc.go
	jvmFirst(t, true)
}

// TestAutoJoinLong: controller.quorum.auto.join.enable (KIP-1186) on both sides. A node
// formatted --no-initial-controllers with auto-join becomes a voter by itself, a kraftd
// node in a quorum a Kafka controller leads and a Kafka controller in one kraftd leads.
// Removed by Kafka's remove-controller, it asks to be added again and is: Kafka 4.4 keeps
// no memory of a removal, and kraftd does the same.
func TestAutoJoinLong(t *testing.T) {
	t.Parallel() // see interop/doc.go
	t.Run("kraftd joins a Kafka leader", func(t *testing.T) { autoJoin(t, false) })
	t.Run("Kafka joins a kraftd leader", func(t *testing.T) { autoJoin(t, true) })
}

func autoJoin(t *testing.T, kraftdLeads bool) {
	env := kafkatest.Require(t)
	q := newChangeQuorum(t, env, 1, 2)
	auto := kafkatest.Props{"controller.quorum.auto.join.enable": "true"}
	var first, joiner *dynNode
	if kraftdLeads {
		first = q.startKraftd(1, nil, "--standalone")
		q.waitMembers(members{voters: []int32{1}}, 60*time.Second)
		joiner = q.startJVM(2, auto, "--no-initial-controllers")
	} else {
		first = q.startJVM(1, nil, "--standalone")
		q.waitMembers(members{voters: []int32{1}}, 90*time.Second)
		joiner = q.startKraftd(2, auto, "--no-initial-controllers")
	}
	both := members{voters: []int32{1, 2}}
	leader, d := q.waitMembers(both, 90*time.Second)
	t.Logf("%s joined by itself: %s", joiner.label(), formatQuorum(d))
	if leader != first {
		t.Fatalf("%s leads, want %s", leader.label(), first.label())
	}
	q.describeAgree(first.addr, 2)

	q.removeWithKafka(first, joiner)
	leader, d = q.waitMembers(both, 90*time.Second)
	t.Logf("%s rejoined after its removal: %s", joiner.label(), formatQuorum(d))
	// Through kraftd: a JVM controller following a kraftd leader has no finalized
	// metadata.version (only Kafka's active controller writes it), so it refuses the
	// tool's direct-to-controller requests.
	ours := first
	if !kraftdLeads {
		ours = joiner
	}
	q.describeAgree(ours.addr, 2)

	committed := q.waitCaughtUp(leader, 60*time.Second)
	q.stopAll()
	checkVoterSets(t, q.checkLogs(committed), [][]int32{{1}, {1, 2}, {1}, {1, 2}})
}
