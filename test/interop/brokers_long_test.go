//go:build interoplong

package interop

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// TestBrokersObserveKraftdLong: Kafka 4.4.0 brokers are observers of __cluster_metadata and
// fetch it from a kraftd leader as from a Kafka one. Controllers J,K,K, the kraftd voters
// deferring leadership (their default): the JVM controller is active whenever it is alive
// (it is the only node that can be); a broker registers and a client creates a topic,
// produces and consumes. Then the JVM controller is killed -9 and a kraftd node leads: the
// broker keeps serving the existing partitions (produce with acks=all and consume need no
// controller), and a fresh broker started now fetches the whole metadata log from kraftd
// (it cannot finish starting: no active controller can register it). The JVM controller
// restarts and kraftd hands leadership to it as soon as it has caught up: both brokers
// serve every topic, and every broker's metadata log is the controllers', byte for byte
// and as kafka-dump-log --cluster-metadata-decoder prints it.
func TestBrokersObserveKraftdLong(t *testing.T) {
	t.Parallel() // see interop/doc.go
	s := startBrokerScenario(t, nil, true)
	kraftdLeader := s.killJVM()
	t.Logf("kraftd node %d leads epoch %d; no controller is active", kraftdLeader, s.r.epoch)
	s.acked = produceConsume(t, s.ctx, s.cl, "before", "kraftd-led", 200, s.acked)
	s.launchLateBroker()
	waitObserversCaughtUp(t, s.q.Node(kraftdLeader).Addr, 101, 102)
	for _, c := range s.restartJVM(s.r.hw) {
		if c.start != 0 {
			t.Errorf("%s: log start offset %d, want 0 (no snapshot was taken)", c.label, c.start)
		}
	}
}

// keepBrokerLogs is keepLogs with the brokers' logs too, taken before the processes stop.
func keepBrokerLogs(t *testing.T, q *kafkatest.MixedRaft, brokers ...*kafkatest.Broker) {
	keepLogs(t, q)
	dir := os.Getenv("KRAFTD_INTEROP_KEEP_LOGS")
	if dir == "" {
		return
	}
	dir = filepath.Join(dir, strings.NewReplacer("/", "_", "+", "_").Replace(t.Name()))
	for _, b := range brokers {
		if b == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("broker%d.log", b.NodeID)), []byte(b.Log()), 0o644); err != nil {
			t.Log(err)
		}
	}
}

// produceConsume produces n records with acks=all, fails the test on any produce error,
// and consumes every record acked so far (earlier plus these) back; it returns them all.
func produceConsume(t *testing.T, ctx context.Context, cl *kafkatest.Client, topic, prefix string, n int, earlier []string) []string {
	t.Helper()
	acked, err := cl.Produce(ctx, topic, prefix, n)
	if err != nil {
		t.Fatalf("%d of %d records acked: %v", len(acked), n, err)
	}
	all := append(slices.Clone(earlier), acked...)
	if err := cl.ConsumeAll(ctx, topic, all); err != nil {
		t.Fatal(err)
	}
	return all
}

// waitObserversCaughtUp waits until the leader at addr reports each broker as an observer
// whose log ends at the high watermark: they fetch the metadata log from it.
func waitObserversCaughtUp(t *testing.T, addr string, ids ...int32) {
	t.Helper()
	d, err := kafkatest.WaitQuorum(addr, "__cluster_metadata", time.Minute, func(d kafkatest.QuorumInfo) bool {
		for _, id := range ids {
			i := slices.IndexFunc(d.Observers, func(o kmsg.DescribeQuorumResponseTopicPartitionReplicaState) bool { return o.ReplicaID == id })
			if i < 0 || d.Observers[i].LogEndOffset < d.HighWatermark {
				return false
			}
		}
		return true
	})
	if err != nil {
		t.Fatalf("brokers %v do not fetch the metadata log from the leader at %s: %v", ids, addr, err)
	}
	t.Logf("leader %d (epoch %d, high watermark %d) has observers %v caught up", d.LeaderID, d.LeaderEpoch, d.HighWatermark, observerIDs(d))
}

func observerIDs(d kafkatest.QuorumInfo) []int32 {
	var ids []int32
	for _, o := range d.Observers {
		ids = append(ids, o.ReplicaID)
	}
	return ids
}

// stopAll stops the brokers, then the controllers, each gracefully.
func stopAll(t *testing.T, q *kafkatest.MixedRaft, brokers []*kafkatest.Broker) {
	t.Helper()
	for _, b := range brokers {
		if err := b.Stop(); err != nil {
			t.Errorf("stop broker %d: %v", b.NodeID, err)
		}
	}
	for _, n := range q.Nodes {
		if n.Running() {
			if err := q.Stop(n.ID); err != nil {
				t.Errorf("stop node %d (%s): %v", n.ID, n.Side, err)
			}
		}
	}
}

// metadataCopy is one node's copy of __cluster_metadata.
type metadataCopy struct {
	label      string
	dir        string
	batches    [][]byte
	start, end int64
}

// checkBrokerLogs compares every broker's metadata log with the controllers' (stopped)
// and returns the copies: where they all hold batches (from the latest log start, which a
// snapshot moves, to the earliest log end) they hold the same ones byte for byte, reaching
// at least atLeast, and kafka-dump-log --cluster-metadata-decoder prints the same batches
// and records for them.
func checkBrokerLogs(t *testing.T, env *kafkatest.Env, q *kafkatest.MixedRaft, brokers []*kafkatest.Broker, atLeast int64) []metadataCopy {
	t.Helper()
	var copies []metadataCopy
	for _, n := range q.Nodes {
		copies = append(copies, readMetadataCopy(t, fmt.Sprintf("%s controller %d", n.Side, n.ID), n.PartitionDir))
	}
	for _, b := range brokers {
		copies = append(copies, readMetadataCopy(t, fmt.Sprintf("broker %d", b.NodeID), b.PartitionDir))
	}
	from := copies[0].start
	for _, c := range copies {
		from = max(from, c.start)
	}
	for i := range copies {
		copies[i].batches = slices.DeleteFunc(copies[i].batches, func(b []byte) bool { return lastOffset(t, b) < from })
	}
	common := commonBatches(t, copies)
	if common == 0 {
		t.Fatal("no common metadata batches")
	}
	h := lastOffset(t, copies[0].batches[common-1])
	if h+1 < atLeast {
		t.Errorf("the copies agree only up to offset %d, below %d", h+1, atLeast)
	}
	t.Logf("%d copies of __cluster_metadata (%d controllers, %d brokers) hold the same %d batches in [%d, %d)",
		len(copies), len(q.Nodes), len(brokers), common, from, h+1)
	compareDumps(t, env, copies, from, common)
	return copies
}

func readMetadataCopy(t *testing.T, label, dir string) metadataCopy {
	t.Helper()
	l, err := metadatalog.OpenReadOnly(dir)
	if err != nil {
		t.Fatalf("%s: open %s: %v", label, dir, err)
	}
	defer l.Close()
	c := metadataCopy{label: label, dir: dir, start: l.StartOffset(), end: l.EndOffset().Offset}
	err = l.Batches(l.StartOffset(), func(b []byte) error {
		c.batches = append(c.batches, bytes.Clone(b))
		return nil
	})
	if err != nil {
		t.Fatalf("%s: read: %v", label, err)
	}
	return c
}

// commonBatches returns how many leading batches every copy holds below the shortest
// copy's end, failing on the first that differs.
func commonBatches(t *testing.T, copies []metadataCopy) int {
	t.Helper()
	minEnd := copies[0].end
	for _, c := range copies {
		minEnd = min(minEnd, c.end)
	}
	for j := 0; ; j++ {
		for _, c := range copies {
			if j >= len(c.batches) || lastOffset(t, c.batches[j]) >= minEnd {
				return j
			}
			if !bytes.Equal(c.batches[j], copies[0].batches[j]) {
				t.Fatalf("metadata batch %d: %s and %s differ", j, c.label, copies[0].label)
			}
		}
	}
}

func lastOffset(t *testing.T, b []byte) int64 {
	t.Helper()
	h, err := protocol.ParseBatchHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	return h.LastOffset()
}

// compareDumps runs kafka-dump-log --cluster-metadata-decoder over every copy's segments
// and checks each prints the first copy's decoded batches and records (the segment
// position aside: segments roll independently) for the common batches from offset from.
func compareDumps(t *testing.T, env *kafkatest.Env, copies []metadataCopy, from int64, common int) {
	t.Helper()
	var dirs []string
	for _, c := range copies {
		dirs = append(dirs, c.dir)
	}
	byDir := dumpDirs(t, env, true, dirs...)
	for dir, d := range byDir {
		byDir[dir] = slices.DeleteFunc(d, func(b kafkatest.DumpBatch) bool {
			last, err := b.Int("lastOffset")
			if err != nil {
				t.Fatal(err)
			}
			return last < from
		})
	}
	ref := byDir[copies[0].dir]
	if len(ref) < common {
		t.Fatalf("%s: kafka-dump-log prints %d batches, fewer than the %d in common", copies[0].label, len(ref), common)
	}
	for _, c := range copies[1:] {
		d := byDir[c.dir]
		if len(d) < common {
			t.Errorf("%s: kafka-dump-log prints %d batches, fewer than the %d in common", c.label, len(d), common)
			continue
		}
		for j := range common {
			if a, b := dumpText(ref[j]), dumpText(d[j]); a != b {
				t.Errorf("batch %d decoded differently:\n%s: %s\n%s: %s", j, copies[0].label, a, c.label, b)
				break
			}
		}
	}
}

// dumpText is a dumped batch with its records, without the segment position.
func dumpText(b kafkatest.DumpBatch) string {
	f := maps.Clone(b.Fields)
	delete(f, "position")
	s := fmt.Sprint(f)
	for _, r := range b.Records {
		s += fmt.Sprintf("\n%v %s", r.Fields, r.Rest)
	}
	return s
}
