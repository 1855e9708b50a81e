//go:build interophostile

package interop

// The hostile-client suite pointed at Apache Kafka 4.4.0: the attacks of package hostile
// against the leader of a 3-node Kafka TestRaftServer quorum (the JVM's raft with its own
// workload), measured as cmd/controller's TestHostile measures kraftd, so that the two
// tables can be read side by side. Kafka is the reference here, not the subject: the test
// asserts only that each attack ran and was measured, and its table names any attack under
// which Kafka itself bloats, stalls, loses its leader or dies. Only built with -tags
// interophostile (make soak-hostile-kafka): a reference measurement of about 90 s that
// make test need not repeat. hostile_controller_test.go, in the same suite, sends every
// controller api with hostile bodies to an active kraftd controller and judges it.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/internal/hostile"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
	"github.com/kraftd/kraftd/topics"
)

const (
	// The workload cmd/controller's hostile suite offers kraftd.
	kafkaHostileThroughput = 2000 // records/s
	kafkaHostileRecordSize = 64   // bytes
	// kafkaHostileBaseline is the window the commit rate without attack is measured in;
	// kafkaHostileSettle is added to an attack's window before its rate is measured (as in
	// cmd/controller, so the two rates mean the same).
	kafkaHostileBaseline = 1500 * time.Millisecond
	kafkaHostileSettle   = time.Second
	// kafkaRSSEvery is how often the attacked JVM's RSS is sampled during an attack.
	kafkaRSSEvery = 20 * time.Millisecond
	// kafkaMaxRequestBytes is socket.request.max.bytes's default: the largest frame Kafka's
	// socket server accepts (and allocates as soon as it has read the size).
	kafkaMaxRequestBytes = 100 << 20
)

// kafkaHostileDuration is each attack's duration: 3s, or KRAFTD_HOSTILE_DURATION (the
// variable cmd/controller's suite reads; make soak-hostile-kafka sets it to minutes).
func kafkaHostileDuration(t *testing.T) time.Duration {
	s := os.Getenv("KRAFTD_HOSTILE_DURATION")
	if s == "" {
		return 3 * time.Second
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		t.Fatalf("KRAFTD_HOSTILE_DURATION=%q: want a positive duration", s)
	}
	return d
}

// kafkaPerfPartition is TestRaftServer's partition (the same as kraftd's workload's); the
// cluster id is null, which a KRaft node accepts.
var kafkaPerfPartition = hostile.Partition{Topic: topics.RaftPerformanceTest, TopicID: topics.RaftPerformanceTestID}

// kafkaAttack is one attack against the leader's listener at addr.
type kafkaAttack struct {
	name string
	run  func(ctx context.Context, addr string) (hostile.Result, error)
}

// kafkaAttacks are cmd/controller's leader attacks with the same parameters, plus a frame
// just over Kafka's own limit. SlowFrame100MB goes last: a frame at Kafka's limit is
// allocated whole, so 16 of them may leave the JVM out of memory, and the cases after it
// would need a fresh quorum.
var kafkaAttacks = []kafkaAttack{
	{"FetchFlood", func(ctx context.Context, addr string) (hostile.Result, error) {
		return hostile.FetchFlood(ctx, addr, hostile.FetchFloodParams{Partition: kafkaPerfPartition, Conns: 32, PerConn: 200, ReplicaID: 1000})
	}},
	{"FetchSnapshotFlood", func(ctx context.Context, addr string) (hostile.Result, error) {
		return hostile.FetchFlood(ctx, addr, hostile.FetchFloodParams{Partition: kafkaPerfPartition, Conns: 32, PerConn: 200, ReplicaID: 1000,
			Snapshot: true, SnapshotID: kmsg.FetchSnapshotRequestTopicPartitionSnapshotID{EndOffset: 0, Epoch: 0}})
	}},
	{"SlowFrameOverBodyLimit", func(ctx context.Context, addr string) (hostile.Result, error) {
		// Over kraftd's body limit, under Kafka's: the same bytes as kraftd's case.
		return hostile.SlowFrame(ctx, addr, hostile.SlowFrameParams{Conns: 16, Announce: 1<<20 + 64, Rate: 256 << 10})
	}},
	{"SlowFrameOverKafkaLimit", func(ctx context.Context, addr string) (hostile.Result, error) {
		return hostile.SlowFrame(ctx, addr, hostile.SlowFrameParams{Conns: 16, Announce: kafkaMaxRequestBytes + 1, Rate: 256 << 10})
	}},
	{"Slowloris", func(ctx context.Context, addr string) (hostile.Result, error) {
		return hostile.Slowloris(ctx, addr, hostile.SlowlorisParams{Conns: 1000, Interval: 500 * time.Millisecond})
	}},
	{"ConnectStorm", func(ctx context.Context, addr string) (hostile.Result, error) {
		return hostile.ConnectStorm(ctx, addr, hostile.ConnectStormParams{Total: 20000, Rate: 2000, Open: 100})
	}},
	{"GarbageBody", func(ctx context.Context, addr string) (hostile.Result, error) {
		return hostile.Garbage(ctx, addr, hostile.GarbageParams{Frames: 1 << 20, MaxBody: 4096, Seed: 1})
	}},
	{"MaxValues", func(ctx context.Context, addr string) (hostile.Result, error) {
		r, err := hostile.MaxValues(ctx, addr, kafkaPerfPartition)
		<-ctx.Done() // the quorum is judged over the whole window
		return r, err
	}},
	{"SlowFrame100MB", func(ctx context.Context, addr string) (hostile.Result, error) {
		return hostile.SlowFrame(ctx, addr, hostile.SlowFrameParams{Conns: 16, Announce: kafkaMaxRequestBytes, Rate: 256 << 10})
	}},
}

// kafkaHostileRow is one line of the table.
type kafkaHostileRow struct {
	attack             string
	target             string
	rssBefore, peakRSS int64
	before, during     float64 // committed offsets/s
	elections          int32   // epochs the quorum went through; -1: no agreed leader after
	survived           bool
	result             hostile.Result
	note               string
}

// TestHostileAgainstKafka runs each attack against the leader of a Kafka TestRaftServer
// quorum (Kafka's shipped JVM flags: a 1 GiB heap) for KRAFTD_HOSTILE_DURATION (3s) and
// logs, per attack: the JVM's RSS before and its peak during the attack and the settle
// after it, the commit rate (the leader's high watermark, logged by Kafka's LeaderState)
// during against just before, the elections it caused and whether the JVM survived. A
// case that leaves the quorum broken (a node exited or out of memory, no agreed leader)
// gets the next case a fresh quorum.
func TestHostileAgainstKafka(t *testing.T) {
	env := kafkatest.Require(t)
	d := kafkaHostileDuration(t)
	var rows []kafkaHostileRow
	var q *kafkatest.MixedRaft
	for _, a := range kafkaAttacks {
		// Quorums are started here, not in a subtest: their processes outlive the case.
		if q == nil || !kafkaQuorumHealthy(q) {
			if q != nil {
				for _, n := range q.Nodes {
					q.Kill(n.ID)
				}
			}
			q = startKafkaHostileQuorum(t, env)
		}
		t.Run(a.name, func(t *testing.T) {
			rows = append(rows, judgeKafkaAttack(t, q, a, d))
		})
	}
	logKafkaHostileTable(t, d, rows)
}

// kafkaDefaultThreads undoes the harness's thread counts (sized for several JVMs on two
// cores): the attacked socket server is Kafka's as configured by default.
var kafkaDefaultThreads = kafkatest.Props{"num.network.threads": "3", "num.io.threads": "8"}

// startKafkaHostileQuorum starts three TestRaftServer nodes and waits for their workload's
// first committed record. They are killed when the test ends: its measurements are taken,
// and a graceful shutdown of three JVMs would only add to its time.
func startKafkaHostileQuorum(t *testing.T, env *kafkatest.Env) *kafkatest.MixedRaft {
	t.Helper()
	K := kafkatest.SideKafka
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{K, K, K},
		Throughput: kafkaHostileThroughput, RecordSize: kafkaHostileRecordSize, Props: kafkaDefaultThreads,
		KafkaLog4j: map[string]string{kafkatest.LeaderStateLogger: "DEBUG"}, KafkaJVMFlags: kafkatest.ShippedJVMFlags})
	start := time.Now()
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	t.Cleanup(func() {
		keepLogs(t, q)
		for _, n := range q.Nodes {
			q.Kill(n.ID)
		}
	})
	if _, _, err := q.WaitLeader(0, time.Minute); err != nil {
		t.Fatal(err)
	}
	// Offset 0 is the leader's LeaderChange record: above it, the workload commits.
	deadline := time.Now().Add(30 * time.Second)
	for q.MaxKafkaHighWatermark() <= 1 {
		if time.Now().After(deadline) {
			t.Fatalf("no workload record committed 30s after the election (high watermark %d)", q.MaxKafkaHighWatermark())
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("quorum of 3 TestRaftServer nodes committing %v after the first start", time.Since(start).Round(time.Millisecond))
	return q
}

// kafkaQuorumHealthy reports whether every node runs, none ran out of memory and they agree
// on a leader.
func kafkaQuorumHealthy(q *kafkatest.MixedRaft) bool {
	for _, n := range q.Nodes {
		if !n.Running() || strings.Contains(n.Proc.Log(), "OutOfMemoryError") {
			return false
		}
	}
	_, _, ok := q.AgreedLeader()
	return ok
}

// judgeKafkaAttack runs a against q's leader and measures it. Only the harness is asserted
// on (the attack ran, every measurement was taken); what Kafka did is the row.
func judgeKafkaAttack(t *testing.T, q *kafkatest.MixedRaft, a kafkaAttack, d time.Duration) kafkaHostileRow {
	leader, epoch, err := q.WaitLeader(0, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	target := q.Node(leader)
	p := target.Proc
	before := kafkaCommitRate(q, kafkaHostileBaseline)
	u, err := p.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.ResetPeakRSS(); err != nil {
		t.Fatal(err)
	}
	sampled := sampleRSS(p)

	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start, hw0 := time.Now(), q.MaxKafkaHighWatermark()
	res, attackErr := a.run(ctx, target.Addr)
	// The measurement: the attack's whole window and the settle after it.
	if rest := time.Until(start.Add(d)); rest > 0 {
		time.Sleep(rest)
	}
	time.Sleep(kafkaHostileSettle)
	during := float64(q.MaxKafkaHighWatermark()-hw0) / time.Since(start).Seconds()
	peak := sampled()
	row := kafkaHostileRow{attack: a.name, target: fmt.Sprintf("leader %d", leader), rssBefore: u.RSS,
		before: before, during: during, survived: target.Running(), result: res}
	if after, err := p.Usage(); err == nil {
		peak = max(peak, after.PeakRSS) // VmHWM since the reset: catches a spike between samples
	}
	row.peakRSS = peak

	var notes []string
	if !row.survived {
		_, exitErr := p.Exited()
		notes = append(notes, fmt.Sprintf("JVM exited: %v", exitErr))
		q.Kill(leader) // marks the exit as known, so the others are waited on alone
	}
	if strings.Contains(p.Log(), "OutOfMemoryError") {
		notes = append(notes, "OutOfMemoryError in the JVM's log")
	}
	row.elections = -1
	if _, e, err := q.WaitLeader(0, 10*time.Second); err == nil {
		row.elections = e - epoch
	} else {
		notes = append(notes, "no agreed leader 10s after the attack")
	}
	row.note = strings.Join(notes, "; ")
	t.Logf("%s at %s: %v; RSS %.1f MiB before, peak %.1f MiB; commits %.0f/s (before %.0f/s); elections %d; survived %v %s",
		a.name, row.target, res, mib(row.rssBefore), mib(row.peakRSS), during, before, row.elections, row.survived, row.note)

	// The harness's own checks: Kafka's behaviour is the measurement, not an assertion.
	if attackErr != nil {
		t.Errorf("attack %s did not run: %v", a.name, attackErr)
	}
	if res.Conns == 0 {
		t.Errorf("attack %s established no connection: %v", a.name, res)
	}
	if before <= 0 || hw0 < 0 {
		t.Errorf("no commit rate before the attack (%.0f/s, high watermark %d): the workload did not run", before, hw0)
	}
	if u.RSS <= 0 || peak <= 0 {
		t.Errorf("RSS not measured: %d bytes before, peak %d", u.RSS, peak)
	}
	return row
}

// kafkaCommitRate is the rate at which the quorum's high watermark advances over d.
func kafkaCommitRate(q *kafkatest.MixedRaft, d time.Duration) float64 {
	start, hw := time.Now(), q.MaxKafkaHighWatermark()
	time.Sleep(d) // the measurement window
	return float64(q.MaxKafkaHighWatermark()-hw) / time.Since(start).Seconds()
}

// sampleRSS samples p's RSS every kafkaRSSEvery until the returned function is called,
// which returns the largest sample (0 if the process exited before the first).
func sampleRSS(p *kafkatest.Process) func() int64 {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var peak int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(kafkaRSSEvery)
		defer tick.Stop()
		for {
			if u, err := p.Usage(); err == nil {
				peak = max(peak, u.RSS)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 {
		close(stop)
		wg.Wait()
		return peak
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// logKafkaHostileTable logs the table: its first columns are cmd/controller's hostile table's.
func logKafkaHostileTable(t *testing.T, d time.Duration, rows []kafkaHostileRow) {
	var b strings.Builder
	fmt.Fprintf(&b, "\nKafka %s TestRaftServer quorum (JVM %s), each attack %v against the leader; commits/s: committed offsets (high watermark)\n",
		kafkatest.KafkaVersion, strings.Join(kafkatest.ShippedJVMFlags[:2], " "), d)
	fmt.Fprintf(&b, "%-24s %-12s %14s %16s %16s %14s %9s %8s  %s\n", "attack", "target", "peak RSS MiB", "commits/s before", "commits/s during",
		"RSS before MiB", "elections", "survived", "attack did")
	for _, r := range rows {
		elections := fmt.Sprint(r.elections)
		if r.elections < 0 {
			elections = "no leader"
		}
		fmt.Fprintf(&b, "%-24s %-12s %14.1f %16.0f %16.0f %14.1f %9s %8v  %v", r.attack, r.target, mib(r.peakRSS), r.before, r.during,
			mib(r.rssBefore), elections, r.survived, r.result)
		if r.note != "" {
			fmt.Fprintf(&b, "; %s", r.note)
		}
		b.WriteByte('\n')
	}
	t.Log(b.String())
}
