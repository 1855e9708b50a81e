//go:build interoplong

package interop

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// TestKraftdSnapshotToJVMLong: snapshots kraftd writes of its committed image are what
// Kafka 4.4.0 nodes load. Controllers J,K,K; the kraftd voters snapshot every 4 KiB of
// committed metadata (the JVM active controller's NoOps fill the log) and apply a small
// retention, so their logs soon start past a topic created through a broker. The JVM
// controller is killed -9 and a kraftd voter leads with its own snapshot and no log
// below it. (a) Broker 102 starts on an empty metadata dir, can fetch only from kraftd,
// and must load kraftd's snapshot (its copy byte for byte the kraftd leader's file).
// (b) The JVM controller restarts on a wiped disk: it loads kraftd's snapshot too (the
// same bytes), becomes active again, registers broker 102, which serves the topic created
// before the snapshot, a new topic reaches both brokers, and every copy of the metadata
// log agrees where they overlap.
func TestKraftdSnapshotToJVMLong(t *testing.T) {
	t.Parallel() // see interop/doc.go
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	K, J := kafkatest.SideKraftd, kafkatest.SideKafka
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{J, K, K}, Controllers: true,
		KraftdProps: kafkatest.Props{
			config.LeadershipDeferralKey:                      "true",
			"metadata.log.max.record.bytes.between.snapshots": "4096",
			// Segments roll by time (Kafka's 8 MiB floor on their size is not kraftd's).
			"metadata.log.segment.ms":      "500",
			"metadata.max.retention.bytes": "16384",
		},
		KraftdArgs: []string{"--log-maintenance-interval", "300ms"}})
	s := &brokerScenario{t: t, env: env, q: q, r: &mixedRun{t: t, q: q, hw: -1, led: map[int32]kafkatest.Side{}}}
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	if active, err := q.WaitActiveController(time.Minute); err != nil || active != scenarioJVM {
		t.Fatalf("active controller %d (%v), want the JVM controller %d", active, err, scenarioJVM)
	}
	s.r.leader, s.r.epoch, _ = q.AgreedLeader()
	saved := map[int32]*fileWatch{}
	for _, id := range []int32{2, 3} {
		saved[id] = watchSnapshots(t, q.Node(id).PartitionDir)
		defer saved[id].stop()
	}
	s.b1 = q.StartBrokers(101)[0]
	t.Cleanup(func() { keepBrokerLogs(t, q, s.b1, s.b2) })
	s.cl = kafkatest.NewClient(t, s.b1.Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s.ctx = ctx
	if err := s.cl.CreateTopic(ctx, "before", 2, 1); err != nil {
		t.Fatal(err)
	}
	s.acked = produceConsume(t, ctx, s.cl, "before", "jvm-led", 200, nil)
	d, err := kafkatest.WaitQuorum(q.Node(scenarioJVM).Addr, "__cluster_metadata", time.Minute, func(kafkatest.QuorumInfo) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	topicHW := d.HighWatermark

	// Both kraftd voters write a snapshot past the topic and drop the log below one.
	retention := regexp.MustCompile(`"msg":"log retention removed old segments and snapshots".*"log_start_offset":(\d+)`)
	for _, id := range []int32{2, 3} {
		name, _, err := waitSnapshotFrom(q.Node(id).PartitionDir, topicHW, 2*time.Minute)
		if err != nil {
			t.Fatalf("kraftd node %d wrote no snapshot past the topic (offset %d): %v", id, topicHW, err)
		}
		var start int64
		for deadline := time.Now().Add(2 * time.Minute); start <= topicHW; time.Sleep(100 * time.Millisecond) {
			for _, m := range retention.FindAllStringSubmatch(q.Node(id).Proc.Log(), -1) {
				start, _ = strconv.ParseInt(m[1], 10, 64)
			}
			if time.Now().After(deadline) {
				t.Fatalf("kraftd node %d: log start %d, not past the topic (offset %d)", id, start, topicHW)
			}
		}
		t.Logf("kraftd node %d wrote %s; its log starts at %d", id, name, start)
	}

	kraftdLeader := s.killJVM()
	t.Logf("kraftd node %d leads epoch %d", kraftdLeader, s.r.epoch)
	// (a) Broker 102 can fetch only from kraftd, whose log starts past the topic.
	b2 := s.launchLateBroker()
	name, got, err := waitSnapshotFrom(b2.PartitionDir, topicHW, 2*time.Minute)
	if err != nil {
		t.Fatalf("broker 102 loaded no snapshot from kraftd leader %d: %v", kraftdLeader, err)
	}
	if want, ok := saved[kraftdLeader].get(name); !ok || !bytes.Equal(got, want) {
		t.Fatalf("broker 102's snapshot %s (%d bytes) is not kraftd leader %d's file (%v, %d bytes)", name, len(got), kraftdLeader, ok, len(want))
	}
	t.Logf("broker 102 loaded kraftd's snapshot %s (%d bytes)", name, len(got))
	waitObserversCaughtUp(t, q.Node(kraftdLeader).Addr, 101, 102)

	// (b) The JVM controller on a new disk.
	q.Wipe(scenarioJVM)
	copies := s.restartJVM(s.r.hw)
	jvmSnaps, _ := filepath.Glob(filepath.Join(q.Node(scenarioJVM).PartitionDir, "*.checkpoint"))
	loaded := 0
	for _, p := range jvmSnaps {
		base := filepath.Base(p)
		if base == "00000000000000000000-0000000000.checkpoint" {
			continue // the bootstrap snapshot format wrote
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range saved {
			if want, ok := w.get(base); ok && bytes.Equal(b, want) {
				loaded++
				t.Logf("the JVM controller holds kraftd's snapshot %s", base)
				break
			}
		}
	}
	if loaded == 0 {
		t.Errorf("the wiped JVM controller holds no snapshot kraftd wrote (it has %v)", jvmSnaps)
	}
	for _, c := range []metadataCopy{copies[0], copies[4]} {
		if c.start == 0 {
			t.Errorf("%s: log starts at 0: it did not start from kraftd's snapshot", c.label)
		}
	}
}
