package interop

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// Mixed quorums of kraftd's test-kraft-server-start and Kafka 4.4.0's TestRaftServer on
// __raft_performance_test: both sides lead, hand over on SIGTERM, fail over on kill -9, and
// every node ends with the same committed log, byte for byte, as kraftd's metadatalog and
// Kafka's kafka-dump-log both read it.

const (
	mixedThroughput = 200 // records/s offered by whichever node leads
	mixedRecordSize = 256
	// mixedElectionWait bounds one election on a loaded two-core machine (JVM pauses included).
	mixedElectionWait = 45 * time.Second
)

// kafkaRaftDebug makes Kafka log "Overriding follower fetch timeout ... after receiving
// EndQuorumEpoch", the evidence that a JVM follower honoured a resignation.
var kafkaRaftDebug = map[string]string{"org.apache.kafka.raft.KafkaRaftClient": "DEBUG"}

func TestMixedRaftQuorum(t *testing.T) {
	t.Parallel() // see interop/doc.go
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	K, J := kafkatest.SideKraftd, kafkatest.SideKafka
	t.Run("2kraftd+1kafka", func(t *testing.T) { runMixedRaft(t, env, []kafkatest.Side{K, K, J}) })
	t.Run("1kraftd+2kafka", func(t *testing.T) { runMixedRaft(t, env, []kafkatest.Side{J, K, J}) })
}

// mixedRun follows one mixed quorum through its leader changes.
type mixedRun struct {
	t      *testing.T
	q      *kafkatest.MixedRaft
	leader int32
	epoch  int32
	hw     int64                    // last high watermark known committed
	led    map[int32]kafkatest.Side // epoch -> side of its leader
}

func (r *mixedRun) side(id int32) kafkatest.Side { return r.q.Node(id).Side }

func (r *mixedRun) label(id int32) string { return fmt.Sprintf("%s node %d", r.side(id), id) }

// elected waits for a leader above the current epoch and for a commit in its epoch.
func (r *mixedRun) elected(what string, since time.Time) time.Duration {
	r.t.Helper()
	leader, epoch, err := r.q.WaitLeader(r.epoch, mixedElectionWait)
	if err != nil {
		r.t.Fatalf("%s: %v", what, err)
	}
	took := time.Since(since)
	r.leader, r.epoch = leader, epoch
	r.led[epoch] = r.side(leader)
	hw, err := r.q.WaitCommit(epoch, r.hw, 30*time.Second)
	if err != nil {
		r.t.Fatalf("%s: new leader %s (epoch %d) commits nothing: %v", what, r.label(leader), epoch, err)
	}
	r.hw = hw
	return took
}

// caughtUp waits until every running node has fetched up to a leader's high watermark of at
// least atLeast, and returns that high watermark: below it every log holds the same batches.
func (r *mixedRun) caughtUp(atLeast int64) int64 {
	r.t.Helper()
	hw, err := r.q.WaitCaughtUp(atLeast, mixedElectionWait)
	if err != nil {
		r.t.Fatal(err)
	}
	return hw
}

func (r *mixedRun) others(id int32) []int32 {
	var ids []int32
	for _, n := range r.q.Nodes {
		if n.ID != id {
			ids = append(ids, n.ID)
		}
	}
	return ids
}

// waitExit waits for node id's process to exit after a signal.
func (r *mixedRun) waitExit(id int32) {
	r.t.Helper()
	select {
	case <-r.q.Node(id).Proc.Done():
	case <-time.After(kafkatest.StopGrace):
		r.t.Fatalf("%s did not exit within %v of SIGTERM", r.label(id), kafkatest.StopGrace)
	}
	if err := r.q.ExitErr(id); err != nil {
		r.t.Errorf("%s exited with %v after SIGTERM", r.label(id), err)
	}
}

// handover SIGTERMs the leader: it must resign with EndQuorumEpoch, which every follower
// honours (each logs it), and a follower takes over. The old leader is restarted.
func (r *mixedRun) handover() {
	r.t.Helper()
	old, oldEpoch := r.leader, r.epoch
	followers := r.others(old)
	start := time.Now()
	r.q.Terminate(old)
	took := r.elected(fmt.Sprintf("SIGTERM of leader %s", r.label(old)), start)
	r.t.Logf("failover after SIGTERM: leader %s (epoch %d) -> %s (epoch %d) in %v", r.label(old), oldEpoch, r.label(r.leader), r.epoch, took.Round(time.Millisecond))
	// Every follower gets the EndQuorumEpoch, but one that already moved to the next epoch
	// (the first preferred successor starts its election at once) ignores it silently; so
	// at least one must show it honoured the resignation.
	var honoured []string
	for _, f := range followers {
		n := r.q.Node(f)
		var want string
		if n.Side == kafkatest.SideKafka {
			want = fmt.Sprintf("after receiving EndQuorumEpoch request from leader %d in epoch %d", old, oldEpoch)
		} else {
			want = fmt.Sprintf(`"msg":"leader resigned; election timer shortened","node_id":%d,"node":%d,"leader":%d,"epoch":%d`, f, f, old, oldEpoch)
		}
		if strings.Contains(n.Proc.Log(), want) {
			honoured = append(honoured, r.label(f))
		}
	}
	if len(honoured) == 0 {
		r.t.Errorf("no follower shows the EndQuorumEpoch of resigning leader %s (epoch %d)", r.label(old), oldEpoch)
	}
	r.t.Logf("EndQuorumEpoch of %s honoured by %v", r.label(old), honoured)
	r.waitExit(old)
	r.q.Start(old)
}

// crash kills the leader with SIGKILL; a follower takes over after its fetch timeout; the
// old leader is restarted and must catch up.
func (r *mixedRun) crash() {
	r.t.Helper()
	old, oldEpoch := r.leader, r.epoch
	// Let the leader commit data of its own epoch first (seen by a kraftd node's high
	// watermark), so every epoch that led holds records to compare.
	hw, err := r.q.WaitCommit(r.epoch, r.hw+10, 30*time.Second)
	if err != nil {
		r.t.Fatalf("leader %s (epoch %d) commits no data: %v", r.label(old), r.epoch, err)
	}
	r.hw = hw
	start := time.Now()
	r.q.Kill(old)
	took := r.elected(fmt.Sprintf("kill -9 of leader %s", r.label(old)), start)
	r.t.Logf("failover after kill -9: leader %s (epoch %d) -> %s (epoch %d) in %v", r.label(old), oldEpoch, r.label(r.leader), r.epoch, took.Round(time.Millisecond))
	r.q.Start(old)
}

// force makes a node of side want the leader. When both followers are of that side a
// SIGTERM of the leader suffices; otherwise the follower of the wrong side is stopped
// first, the leader is stopped, and the stopped follower is restarted: only the right-side
// follower has a live log to be elected with (the restarted node grants it its vote).
func (r *mixedRun) force(want kafkatest.Side) {
	r.t.Helper()
	for attempt := 0; attempt < 3 && r.side(r.leader) != want; attempt++ {
		var wrong []int32
		for _, f := range r.others(r.leader) {
			if r.side(f) != want {
				wrong = append(wrong, f)
			}
		}
		if len(wrong) == 0 {
			r.handover()
			continue
		}
		old, w := r.leader, wrong[0]
		if err := r.q.Stop(w); err != nil {
			r.t.Fatalf("stop follower %s: %v", r.label(w), err)
		}
		start := time.Now()
		r.q.Terminate(old)
		r.waitExit(old)
		r.q.Start(w)
		took := r.elected(fmt.Sprintf("forcing a %s leader", want), start)
		r.t.Logf("forced a %s leader: %s leads epoch %d after %v", want, r.label(r.leader), r.epoch, took.Round(time.Millisecond))
		r.q.Start(old)
	}
	if r.side(r.leader) != want {
		r.t.Fatalf("could not make a %s node lead in 3 attempts (leader %s)", want, r.label(r.leader))
	}
}

func runMixedRaft(t *testing.T, env *kafkatest.Env, sides []kafkatest.Side) {
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: sides, Throughput: mixedThroughput,
		RecordSize: mixedRecordSize, KafkaLog4j: kafkaRaftDebug})
	r := &mixedRun{t: t, q: q, epoch: 0, hw: -1, led: map[int32]kafkatest.Side{}}
	start := time.Now()
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	took := r.elected("first election", start)
	t.Logf("first election: %s leads epoch %d, %v after the first start", r.label(r.leader), r.epoch, took.Round(time.Millisecond))

	// SIGTERM: EndQuorumEpoch hands over to a follower (either side).
	r.handover()
	// Make the side that has not led yet lead.
	ledKraftd, ledKafka := false, false
	for _, s := range r.led {
		ledKraftd = ledKraftd || s == kafkatest.SideKraftd
		ledKafka = ledKafka || s == kafkatest.SideKafka
	}
	if !ledKraftd {
		r.force(kafkatest.SideKraftd)
	} else if !ledKafka {
		r.force(kafkatest.SideKafka)
	}
	// kill -9 of a leader of each side.
	killed := map[kafkatest.Side]bool{}
	for !killed[kafkatest.SideKraftd] || !killed[kafkatest.SideKafka] {
		if killed[r.side(r.leader)] {
			other := kafkatest.SideKraftd
			if r.side(r.leader) == kafkatest.SideKraftd {
				other = kafkatest.SideKafka
			}
			r.force(other)
		}
		killed[r.side(r.leader)] = true
		r.crash()
	}

	// Wait for the restarted node to catch up, then stop followers first and the leader
	// last, so every log is a prefix of the leader's.
	committed := r.caughtUp(max(r.hw, q.MaxKraftdHighWatermark()))
	for _, id := range append(r.others(r.leader), r.leader) {
		if err := q.Stop(id); err != nil {
			t.Errorf("stop %s: %v", r.label(id), err)
		}
	}
	checkMixedLogs(t, env, q, r.led, committed, false)
	keepLogs(t, q)
}

// keepLogs copies every node's process output to $KRAFTD_INTEROP_KEEP_LOGS/<test>/ when set
// (the temp dirs are removed with the test).
func keepLogs(t *testing.T, q *kafkatest.MixedRaft) {
	dir := os.Getenv("KRAFTD_INTEROP_KEEP_LOGS")
	if dir == "" {
		return
	}
	dir = filepath.Join(dir, strings.NewReplacer("/", "_", "+", "_").Replace(t.Name()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Log(err)
		return
	}
	for _, n := range q.Nodes {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("node%d-%s.log", n.ID, n.Side)), []byte(n.Logs()), 0o644); err != nil {
			t.Log(err)
		}
	}
}

// checkMixedLogs reads every node's log with kraftd's metadatalog and with kafka-dump-log:
// the common prefix must hold every committed offset and be identical byte for byte, with
// batches of epochs led by both sides. In a controller quorum (controllers) only Kafka's
// leaders write metadata records; kraftd's leaders write nothing but their LeaderChange.
func checkMixedLogs(t *testing.T, env *kafkatest.Env, q *kafkatest.MixedRaft, led map[int32]kafkatest.Side, committed int64, controllers bool) {
	t.Helper()
	logs := make([][][]byte, len(q.Nodes))
	minEnd := int64(-1)
	for i, n := range q.Nodes {
		l, err := metadatalog.OpenReadOnly(n.PartitionDir)
		if err != nil {
			t.Fatalf("metadatalog cannot open %s's log %s: %v", n.Side, n.PartitionDir, err)
		}
		if l.StartOffset() != 0 {
			t.Errorf("node %d: log start offset %d, want 0", n.ID, l.StartOffset())
		}
		err = l.Batches(l.StartOffset(), func(b []byte) error {
			logs[i] = append(logs[i], bytes.Clone(b))
			return nil
		})
		end := l.EndOffset().Offset
		l.Close()
		if err != nil {
			t.Fatalf("node %d: read log: %v", n.ID, err)
		}
		t.Logf("node %d (%s): log end offset %d, %d batches", n.ID, n.Side, end, len(logs[i]))
		if minEnd < 0 || end < minEnd {
			minEnd = end
		}
	}
	if minEnd < committed {
		t.Fatalf("a node's log ends at %d, below the committed offset %d: committed records lost", minEnd, committed)
	}
	// Batch boundaries are the leader's, so the same batches must appear on every node.
	dataBatches, controlBatches := map[kafkatest.Side]int{}, map[kafkatest.Side]int{}
	for j := 0; ; j++ {
		var ref []byte
		for i := range q.Nodes {
			if j >= len(logs[i]) {
				ref = nil
				break
			}
			h, err := protocol.ParseBatchHeader(logs[i][j])
			if err != nil {
				t.Fatalf("node %d batch %d: %v", q.Nodes[i].ID, j, err)
			}
			if h.LastOffset() >= minEnd {
				ref = nil
				break
			}
			if i == 0 {
				ref = logs[i][j]
				continue
			}
			if !bytes.Equal(ref, logs[i][j]) {
				t.Fatalf("batch %d (base offset %d, epoch %d) differs: node %d and node %d", j, h.BaseOffset, h.PartitionLeaderEpoch, q.Nodes[0].ID, q.Nodes[i].ID)
			}
		}
		if ref == nil {
			break
		}
		h, _ := protocol.ParseBatchHeader(ref)
		if s, ok := led[h.PartitionLeaderEpoch]; ok {
			if h.IsControl() {
				controlBatches[s]++
			} else {
				dataBatches[s]++
			}
		}
	}
	t.Logf("identical committed prefix up to offset %d on all nodes: %d data batches written under kraftd leaders, %d under Kafka leaders",
		minEnd, dataBatches[kafkatest.SideKraftd], dataBatches[kafkatest.SideKafka])
	// A controller quorum that only Kafka led (TestKRaftVersionUpgradeKafkaLeaderLong) has no
	// kraftd batches to look for.
	kraftdLed := false
	for _, s := range led {
		kraftdLed = kraftdLed || s == kafkatest.SideKraftd
	}
	switch {
	case !controllers && (dataBatches[kafkatest.SideKraftd] == 0 || dataBatches[kafkatest.SideKafka] == 0):
		t.Errorf("the common prefix should hold data of both sides' leaders (epochs led: %v)", led)
	case controllers && (dataBatches[kafkatest.SideKraftd] != 0 || kraftdLed && controlBatches[kafkatest.SideKraftd] == 0 || dataBatches[kafkatest.SideKafka] == 0):
		t.Errorf("kraftd leaders should write only control batches and Kafka's leaders metadata: kraftd %d data / %d control batches, Kafka %d data batches (epochs led: %v)",
			dataBatches[kafkatest.SideKraftd], controlBatches[kafkatest.SideKraftd], dataBatches[kafkatest.SideKafka], led)
	}

	// kafka-dump-log reads every node's segments the same way kraftd does.
	var dirs []string
	for _, n := range q.Nodes {
		dirs = append(dirs, n.PartitionDir)
	}
	byDir := dumpDirs(t, env, controllers, dirs...)
	for i, n := range q.Nodes {
		d := byDir[n.PartitionDir]
		if len(d) != len(logs[i]) {
			t.Errorf("node %d (%s): kafka-dump-log prints %d batches, metadatalog reads %d", n.ID, n.Side, len(d), len(logs[i]))
			continue
		}
		for j := range d {
			checkBatchAgainstDump(t, j, logs[i][j], d[j])
		}
	}
}

// dumpDirs runs kafka-dump-log (--deep-iteration, with --cluster-metadata-decoder for a
// metadata log) over every segment of the partition dirs in one process and returns the
// printed batches of each dir, in offset order.
func dumpDirs(t *testing.T, env *kafkatest.Env, metadata bool, dirs ...string) map[string][]kafkatest.DumpBatch {
	t.Helper()
	var files []string
	for _, dir := range dirs {
		segs, err := filepath.Glob(filepath.Join(dir, "*.log"))
		if err != nil || len(segs) == 0 {
			t.Fatalf("no segments in %s", dir)
		}
		sort.Strings(segs)
		files = append(files, segs...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := env.DumpLog(ctx, kafkatest.DumpOptions{DeepIteration: true, ClusterMetadataDecoder: metadata}, files...)
	if err != nil {
		t.Fatal(err)
	}
	dumped, err := kafkatest.ParseDumpLog(out)
	if err != nil {
		t.Fatal(err)
	}
	byDir := map[string][]kafkatest.DumpBatch{}
	for _, f := range dumped {
		byDir[filepath.Dir(f.Path)] = append(byDir[filepath.Dir(f.Path)], f.Batches...)
	}
	return byDir
}
