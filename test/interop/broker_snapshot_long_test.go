//go:build interoplong

package interop

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/test/interop/kafkatest"
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
	s := startBrokerScenario(t, kafkatest.Props{"metadata.log.max.snapshot.interval.ms": "1000"}, false)
	q := s.q
	jvmSnapshots := watchSnapshots(t, q.Node(scenarioJVM).PartitionDir)
	defer jvmSnapshots.stop()
	d, err := kafkatest.WaitQuorum(q.Node(scenarioJVM).Addr, "__cluster_metadata", time.Minute, func(kafkatest.QuorumInfo) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	topicHW := d.HighWatermark
	name, _, err := waitSnapshotFrom(q.Node(scenarioJVM).PartitionDir, topicHW, time.Minute)
	if err != nil {
		t.Fatalf("the JVM leader took no snapshot past the topic (offset %d): %v", topicHW, err)
	}
	t.Logf("the JVM leader's snapshot %s covers the topic (high watermark %d after it)", name, topicHW)

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

	kraftdLeader := s.killJVM()
	t.Logf("kraftd node %d leads epoch %d", kraftdLeader, s.r.epoch)
	// Broker 102 can fetch only from kraftd, whose log holds nothing below its snapshot.
	b2 := s.launchLateBroker()
	name, got, err := waitSnapshotFrom(b2.PartitionDir, topicHW, 2*time.Minute)
	if err != nil {
		t.Fatalf("broker 102 loaded no snapshot from kraftd leader %d: %v", kraftdLeader, err)
	}
	if want, ok := jvmSnapshots.get(name); !ok || !bytes.Equal(got, want) {
		t.Errorf("broker 102's snapshot %s (%d bytes) is not the JVM's file (written by it: %v, %d bytes)", name, len(got), ok, len(want))
	}
	t.Logf("broker 102 loaded snapshot %s (%d bytes) from kraftd leader %d", name, len(got), kraftdLeader)
	waitObserversCaughtUp(t, q.Node(kraftdLeader).Addr, 101, 102)

	copies := s.restartJVM(s.r.hw) // controllers 1-3, brokers 101, 102
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
