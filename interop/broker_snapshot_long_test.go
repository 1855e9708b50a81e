//go:build interoplong

package interop

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/interop/kafkatest"
)

// TestBrokerSnapshotFromKraftdLong: a Kafka 4.4.0 broker that starts with an empty metadata
// log while a kraftd voter leads loads the metadata snapshot from kraftd (FetchSnapshot)
// and reaches the image a JVM leader would give it. Controllers J,K,K; the JVM controller
// snapshots every second. A broker registers and a client creates a topic; once the JVM
// has a snapshot past the topic, kraftd node 3 joins with an empty log and node 2 gets a
// new disk: both load that snapshot from the JVM leader, so their logs start past 0. The
// JVM controller is killed -9 and a kraftd node leads; a fresh broker fetches from it and
// must take the snapshot (the leader's log holds nothing below it): its copy is byte for
// byte the JVM's file. The JVM controller restarts and takes over, the new broker
// registers and serves the topic created before the snapshot, and every copy of the
// metadata log (controllers and brokers) holds the same batches where they overlap.
func TestBrokerSnapshotFromKraftdLong(t *testing.T) {
	t.Parallel() // see interop/doc.go
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	K, J := kafkatest.SideKraftd, kafkatest.SideKafka
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{J, K, K}, Controllers: true,
		Props:       kafkatest.Props{"metadata.log.max.snapshot.interval.ms": "1000"},
		KraftdProps: kafkatest.Props{config.LeadershipDeferralKey: "true"}})
	r := &mixedRun{t: t, q: q, hw: -1, led: map[int32]kafkatest.Side{}}
	const jvm = 1
	q.Start(1)
	q.Start(2)
	if active, err := q.WaitActiveController(time.Minute); err != nil || active != jvm {
		t.Fatalf("active controller %d (%v), want the JVM controller %d", active, err, jvm)
	}
	r.leader, r.epoch, _ = q.AgreedLeader()
	jvmSnapshots := watchSnapshots(t, q.Node(jvm).PartitionDir)
	defer jvmSnapshots.stop()
	b1 := q.StartBrokers(101)[0]
	var b2 *kafkatest.Broker
	t.Cleanup(func() { keepBrokerLogs(t, q, b1, b2) })
	cl := kafkatest.NewClient(t, b1.Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := cl.CreateTopic(ctx, "before", 2, 1); err != nil {
		t.Fatal(err)
	}
	acked := produceConsume(t, ctx, cl, "before", "jvm-led", 100, nil)
	d, err := kafkatest.WaitQuorum(q.Node(jvm).Addr, "__cluster_metadata", time.Minute, func(kafkatest.QuorumInfo) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	topicHW := d.HighWatermark
	name, _, err := waitSnapshotFrom(q.Node(jvm).PartitionDir, topicHW, time.Minute)
	if err != nil {
		t.Fatalf("the JVM leader took no snapshot past the topic (offset %d): %v", topicHW, err)
	}
	t.Logf("the JVM leader's snapshot %s covers the topic (high watermark %d at its creation)", name, topicHW)

	// Both kraftd voters load a JVM snapshot past the topic: node 3 joins empty, node 2
	// restarts on an empty disk.
	q.Start(3)
	waitKraftdSnapshot(t, q, 3, topicHW)
	if err := q.Stop(2); err != nil {
		t.Fatal(err)
	}
	q.Wipe(2)
	q.Start(2)
	waitKraftdSnapshot(t, q, 2, topicHW)

	q.Kill(jvm)
	r.elected(fmt.Sprintf("kill -9 of the JVM controller %d", jvm), time.Now())
	kraftdLeader := r.leader
	if r.side(kraftdLeader) != K {
		t.Fatalf("leader %s with the only JVM controller down", r.label(kraftdLeader))
	}
	t.Logf("kraftd node %d leads epoch %d", kraftdLeader, r.epoch)

	// The new broker can fetch only from kraftd: it registers once the JVM is back.
	cfg := q.BrokerConfig(102)
	cfg.Props = kafkatest.Props{"initial.broker.registration.timeout.ms": "300000"}
	b2 = env.LaunchBrokers(t, cfg)[0]
	name, got, err := waitSnapshotFrom(b2.PartitionDir, topicHW, 2*time.Minute)
	if err != nil {
		t.Fatalf("broker 102 loaded no snapshot from kraftd leader %d: %v", kraftdLeader, err)
	}
	if want, ok := jvmSnapshots.get(name); !ok || !bytes.Equal(got, want) {
		t.Errorf("broker 102's snapshot %s (%d bytes) is not the JVM's file (written by it: %v, %d bytes)", name, len(got), ok, len(want))
	}
	t.Logf("broker 102 loaded snapshot %s (%d bytes) from kraftd leader %d", name, len(got), kraftdLeader)
	waitObserversCaughtUp(t, q.Node(kraftdLeader).Addr, 101, 102)
	kraftdHW := r.hw

	q.Start(jvm)
	if active, err := q.WaitActiveController(2 * time.Minute); err != nil || active != jvm {
		t.Fatalf("active controller %d (%v) after the JVM controller's restart", active, err)
	}
	if err := b2.WaitStarted(registrationWait); err != nil {
		t.Fatal(err)
	}
	if err := cl.CreateTopic(ctx, "after", 1, 2); err != nil {
		t.Fatal(err)
	}
	if err := kafkatest.WaitTopicsEverywhere(ctx, []string{b1.Addr, b2.Addr}, map[string]int{"before": 2, "after": 1}); err != nil {
		t.Fatal(err)
	}
	produceConsume(t, ctx, cl, "after", "jvm-again", 100, nil)
	if err := kafkatest.NewClient(t, b2.Addr).ConsumeAll(ctx, "before", acked); err != nil {
		t.Error(err)
	}

	brokers := []*kafkatest.Broker{b1, b2}
	stopAll(t, q, brokers)
	copies := checkBrokerLogs(t, env, q, brokers, kraftdHW) // controllers 1-3, brokers 101, 102
	for _, c := range []metadataCopy{copies[1], copies[2], copies[4]} {
		if c.start == 0 {
			t.Errorf("%s: log starts at 0: it did not start from a snapshot", c.label)
		}
	}
}

// waitKraftdSnapshot waits until kraftd node id holds a snapshot at or past offset.
func waitKraftdSnapshot(t *testing.T, q *kafkatest.MixedRaft, id int32, offset int64) {
	t.Helper()
	name, _, err := waitSnapshotFrom(q.Node(id).PartitionDir, offset, time.Minute)
	if err != nil {
		t.Fatalf("kraftd node %d loaded no snapshot from the JVM leader: %v", id, err)
	}
	t.Logf("kraftd node %d loaded snapshot %s", id, name)
}

// waitSnapshotFrom waits for a snapshot file in dir whose end offset is at least offset and
// returns its name and bytes, read at once.
func waitSnapshotFrom(dir string, offset int64, timeout time.Duration) (string, []byte, error) {
	for deadline := time.Now().Add(timeout); ; time.Sleep(20 * time.Millisecond) {
		got, _ := filepath.Glob(filepath.Join(dir, "*.checkpoint"))
		for _, name := range got {
			end, err := strconv.ParseInt(strings.SplitN(filepath.Base(name), "-", 2)[0], 10, 64)
			if err != nil || end < offset {
				continue
			}
			if b, err := os.ReadFile(name); err == nil {
				return filepath.Base(name), b, nil
			}
		}
		if time.Now().After(deadline) {
			return "", nil, fmt.Errorf("no snapshot at or past offset %d in %s within %v", offset, dir, timeout)
		}
	}
}
