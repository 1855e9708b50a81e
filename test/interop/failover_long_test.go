//go:build interoplong

package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
	"github.com/kraftd/kraftd/topics"
)

// failoverBound bounds every wait of the failover judge (a failover, a restart's catch-up,
// the read-back): a hang bound, not a speed goal.
const failoverBound = 2 * time.Minute

// failoverKills is how many times each quorum shape loses its active controller.
const failoverKills = 4

// TestActiveControllerFailoverLong: quorums KKK, JJK and KKJ (K kraftd with the active
// side on) serve three Kafka 4.4.0 brokers under a workload: an idempotent producer
// (acks=all) writing numbered records to a topic with three replicas and
// min.insync.replicas=2, a consumer group reading it, and an admin loop creating and
// deleting small topics and altering a topic config, all through the brokers. The active
// controller, whichever kind it is, is killed -9 failoverKills times; each time the time
// from the kill to the next CreateTopics answered through a broker is logged with the kind
// and node that became active, then the killed node restarts and catches up. In the mixed
// shapes both kinds become active after a kill at least once, and one kill hands the role
// between two nodes of one kind while the third replays: when the wanted kind
// (wantedSide) is one survivor's only, the other survivor is paused (SIGSTOP) while the
// active controller commits past everything it could hold, so that it cannot win the
// election, and resumed at the kill (steer).
//
// Judged: each new active controller continues the other's log (every topic created under
// an earlier one exists: CreateTopics answers TOPIC_ALREADY_EXISTS, the three brokers stay
// registered and unfenced, the log holds one bootstrap transaction); no JVM controller or
// broker logs a replay or metadata fault, no kraftd node an error or a connection closed
// unanswered; no broker or controller exits by itself; every acked record is read
// back, by the group and from the start; the admin loop's confirmed changes hold on every
// broker; and the three controllers' __cluster_metadata logs hold the same batches, byte
// for byte by offset, over their common committed range (the brokers' too, where they hold
// it).
func TestActiveControllerFailoverLong(t *testing.T) {
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	K, J := kafkatest.SideKraftd, kafkatest.SideKafka
	for _, sides := range [][]kafkatest.Side{{K, K, K}, {J, J, K}, {K, K, J}} {
		t.Run(shapeLabel(sides), func(t *testing.T) { runFailover(t, env, sides) })
	}
}

// shapeLabel names a quorum by its sides in node order, K for kraftd and J for Kafka
// ("JJK"); no commas: subtest names become temp dirs, and log.dirs is a comma list.
func shapeLabel(sides []kafkatest.Side) string {
	var b strings.Builder
	for _, side := range sides {
		b.WriteString(sideLetter(side))
	}
	return b.String()
}

func sideLetter(s kafkatest.Side) string {
	if s == kafkatest.SideKraftd {
		return "K"
	}
	return "J"
}

// failover is one kill and what followed it.
type failover struct {
	killed     int32
	killedSide kafkatest.Side
	next       int32
	nextSide   kafkatest.Side
	epoch      int32
	activation time.Duration // kill to the new active controller's activation line
	create     time.Duration // kill to the first CreateTopics answered through a broker
	steered    bool
}

type failoverRun struct {
	t       *testing.T
	env     *kafkatest.Env
	q       *kafkatest.MixedRaft
	brokers []*kafkatest.Broker
	addrs   []string
	cl      *kafkatest.Client
	w       *failoverWorkload
	done    []failover
	probes  []string // topics created after each kill, each under a different active controller
}

func runFailover(t *testing.T, env *kafkatest.Env, sides []kafkatest.Side) {
	mc := kafkatest.MixedRaftConfig{Sides: sides, Controllers: true,
		KraftdProps: kafkatest.Props{config.ActiveControllerKey: "true"}}
	if !slices.Contains(sides, kafkatest.SideKafka) {
		mc.KraftdFormatArgs = []string{} // kraftd's own format; mixed shapes format each node with its own side's tool
	}
	q := env.NewMixedRaft(t, mc)
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	first, epoch, _, err := q.WaitActiveNode(0, failoverBound)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s node %d is the active controller at epoch %d", shapeLabel(sides), q.Node(first).Side, first, epoch)
	r := &failoverRun{t: t, env: env, q: q, brokers: q.StartBrokers(101, 102, 103)}
	t.Cleanup(func() { keepBrokerLogs(t, q, r.brokers...) })
	for _, b := range r.brokers {
		r.addrs = append(r.addrs, b.Addr)
	}
	r.cl = kafkatest.NewClient(t, r.addrs...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	waitBrokers(t, ctx, r.cl, []int32{101, 102, 103})
	minISR := "2"
	if err := createTopicWith(ctx, r.addrs, "orders", 3, 3, map[string]*string{"min.insync.replicas": &minISR}, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := kafkatest.WaitTopicsEverywhere(ctx, r.addrs, map[string]int{"orders": 3}); err != nil {
		t.Fatal(err)
	}
	r.w = startWorkload(t, r.addrs, "orders")
	defer r.w.stop()
	r.w.waitProgress(ctx, 250)

	for i := 1; i <= failoverKills; i++ {
		r.failover(ctx, i)
	}
	r.w.stop()
	r.report()
	r.judge(ctx)
}

// failover kills the active controller, times the next CreateTopics through a broker,
// checks the new active controller continues the old one's log, and restarts the killed
// node until it has caught up.
func (r *failoverRun) failover(ctx context.Context, i int) {
	t, q := r.t, r.q
	active, epoch, _, err := q.WaitActiveNode(0, failoverBound)
	if err != nil {
		t.Fatal(err)
	}
	want := r.wantedSide(i, active)
	paused := r.steer(active, want)
	killed := time.Now()
	q.Kill(active)
	if paused != nil {
		if err := syscall.Kill(paused.Proc.Pid(), syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}
	probe := fmt.Sprintf("failover-%d", i)
	cctx, cancel := context.WithTimeout(ctx, failoverBound)
	err = r.cl.CreateTopic(cctx, probe, 1, 3)
	cancel()
	created := time.Since(killed)
	if err != nil {
		t.Fatalf("kill %d of %s node %d: %v", i, q.Node(active).Side, active, err)
	}
	next, nextEpoch, at, err := q.WaitActiveNode(epoch, failoverBound)
	if err != nil {
		t.Fatal(err)
	}
	f := failover{killed: active, killedSide: q.Node(active).Side, next: next, nextSide: q.Node(next).Side, epoch: nextEpoch,
		activation: at.Sub(killed.Truncate(time.Millisecond)), create: created, steered: paused != nil}
	r.done = append(r.done, f)
	steer := ""
	if paused != nil {
		steer = fmt.Sprintf(" (node %d paused until the kill, steering to %s)", paused.ID, want)
		if f.nextSide != want {
			steer += ": steering failed"
		}
	}
	t.Logf("failover %d: killed %s node %d (epoch %d); %s node %d active at epoch %d, activation %v and CreateTopics through a broker %v after the kill%s",
		i, f.killedSide, f.killed, epoch, f.nextSide, f.next, f.epoch, f.activation.Round(time.Millisecond), f.create.Round(time.Millisecond), steer)

	// The new controller holds what the earlier ones wrote: every earlier probe topic
	// exists for it, and the brokers' registrations stay.
	for _, p := range r.probes {
		if err := createOnceErr(ctx, r.addrs, p); !errors.Is(err, kerr.TopicAlreadyExists) {
			t.Errorf("after kill %d: CreateTopics %s (created under an earlier controller) answered %v, want TOPIC_ALREADY_EXISTS", i, p, err)
		}
	}
	r.probes = append(r.probes, probe)
	waitBrokers(t, ctx, r.cl, []int32{101, 102, 103})
	r.checkRunning(active)

	q.Start(active)
	d, err := kafkatest.DescribeQuorum(q.Node(next).Addr, topics.ClusterMetadata)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.WaitCaughtUp(d.HighWatermark, failoverBound); err != nil {
		t.Fatal(err)
	}
	if q.Node(active).Side == kafkatest.SideKafka {
		if err := q.WaitLoaded(active, failoverBound); err != nil {
			t.Fatal(err)
		}
	}
	r.w.waitProgress(ctx, 250)
}

// wantedSide is the kind the run wants to take over from active at kill i in a mixed
// quorum: none at the first kill; then a kind no kill has handed the role to yet; then,
// once both have taken over, the killed node's own kind, until a kill has handed the role
// between two nodes of one kind there (a standby of the other kind replaying across it).
func (r *failoverRun) wantedSide(i int, active int32) kafkatest.Side {
	mixed := slices.ContainsFunc(r.q.Nodes, func(n *kafkatest.MixedNode) bool { return n.Side != r.q.Nodes[0].Side })
	if i == 1 || !mixed {
		return ""
	}
	seen, same := map[kafkatest.Side]bool{}, false
	for _, f := range r.done {
		seen[f.nextSide] = true
		same = same || f.nextSide == f.killedSide
	}
	for _, n := range r.q.Nodes {
		if !seen[n.Side] {
			return n.Side
		}
	}
	if !same {
		return r.q.Node(active).Side
	}
	return ""
}

// steer makes a survivor of side want win the election after active's kill when exactly
// one survivor is of that side: the other survivor is paused (SIGSTOP) and returned. Its
// last fetch is answered within the fetch wait (500 ms), so after a pause of two seconds
// its log ends at or below the active leader's log end then; once the wanted survivor has
// fetched past that, its log is the longer one of the same epoch and the paused node, once
// resumed, grants it the vote and cannot win one itself.
func (r *failoverRun) steer(active int32, want kafkatest.Side) *kafkatest.MixedNode {
	if want == "" {
		return nil
	}
	var wanted, other []*kafkatest.MixedNode
	for _, n := range r.q.Nodes {
		switch {
		case n.ID == active:
		case n.Side == want:
			wanted = append(wanted, n)
		default:
			other = append(other, n)
		}
	}
	if len(wanted) != 1 || len(other) != 1 {
		return nil // both survivors are of the wanted side, or neither
	}
	pause, keep := other[0], wanted[0]
	if err := syscall.Kill(pause.Proc.Pid(), syscall.SIGSTOP); err != nil {
		r.t.Fatal(err)
	}
	pid := pause.Proc.Pid()
	r.t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	time.Sleep(2 * time.Second)
	addr := r.q.Node(active).Addr
	d, err := kafkatest.DescribeQuorum(addr, topics.ClusterMetadata)
	if err != nil {
		r.t.Fatal(err)
	}
	bound := replicaEnd(d, active)
	if _, err := kafkatest.WaitQuorum(addr, topics.ClusterMetadata, failoverBound, func(d kafkatest.QuorumInfo) bool {
		return replicaEnd(d, keep.ID) > bound
	}); err != nil {
		r.t.Fatalf("node %d did not fetch past %d while node %d was paused: %v", keep.ID, bound, pause.ID, err)
	}
	return pause
}

func replicaEnd(d kafkatest.QuorumInfo, id int32) int64 {
	for _, v := range d.Voters {
		if v.ReplicaID == id {
			return v.LogEndOffset
		}
	}
	return -1
}

// checkRunning fails when a broker or a controller exited by itself: brokers never stop
// in this run, and a controller stops only when killed (and is restarted at once).
func (r *failoverRun) checkRunning(killed int32) {
	for _, b := range r.brokers {
		if exited, err := b.Exited(); exited {
			r.t.Fatalf("broker %d exited: %v", b.NodeID, err)
		}
	}
	for _, n := range r.q.Nodes {
		if exited, err := n.Proc.Exited(); exited && n.ID != killed {
			r.t.Fatalf("%s controller %d exited: %v", n.Side, n.ID, err)
		}
	}
}

// report logs the run's failovers as one parseable line: the times from each kill to the
// first CreateTopics answered through a broker and to the new controller's activation
// line (a steered kill's marked *: its election waited for a paused node), and who took
// over from whom.
func (r *failoverRun) report() {
	var ms, act, moves []string
	for _, f := range r.done {
		mark := ""
		if f.steered {
			mark = "*"
		}
		ms = append(ms, strconv.FormatInt(f.create.Milliseconds(), 10)+mark)
		act = append(act, strconv.FormatInt(f.activation.Milliseconds(), 10)+mark)
		moves = append(moves, fmt.Sprintf("%s%d->%s%d", sideLetter(f.killedSide), f.killed, sideLetter(f.nextSide), f.next))
	}
	load, _ := readLoadAvg()
	r.t.Logf("failover-times quorum=%s kills=%d create_ms=%s activation_ms=%s transitions=%s loadavg=%q",
		shapeLabel(sidesOf(r.q)), len(r.done), strings.Join(ms, ","), strings.Join(act, ","), strings.Join(moves, ","), load)
}

func sidesOf(q *kafkatest.MixedRaft) []kafkatest.Side {
	var s []kafkatest.Side
	for _, n := range q.Nodes {
		s = append(s, n.Side)
	}
	return s
}

// judge runs the end-of-run checks (see TestActiveControllerFailoverLong).
func (r *failoverRun) judge(ctx context.Context) {
	t, q := r.t, r.q
	kinds := map[kafkatest.Side]bool{}
	for _, f := range r.done {
		kinds[f.nextSide] = true
	}
	for _, n := range q.Nodes {
		if !kinds[n.Side] {
			t.Errorf("no %s node became the active controller after a kill", n.Side)
		}
	}
	r.checkRunning(-1)
	r.w.judge(ctx, r.addrs)
	for _, n := range q.Nodes {
		if n.Side == kafkatest.SideKafka {
			metadataFaults(t, fmt.Sprintf("JVM controller %d", n.ID), n.Logs())
		} else {
			kraftdErrors(t, fmt.Sprintf("kraftd controller %d", n.ID), n.Logs())
		}
	}
	for _, b := range r.brokers {
		metadataFaults(t, fmt.Sprintf("broker %d", b.NodeID), b.Log())
	}

	active, _, _, err := q.WaitActiveNode(0, failoverBound)
	if err != nil {
		t.Fatal(err)
	}
	d, err := kafkatest.DescribeQuorum(q.Node(active).Addr, topics.ClusterMetadata)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := q.WaitCaughtUp(d.HighWatermark, failoverBound)
	if err != nil {
		t.Fatal(err)
	}
	stopAll(t, q, r.brokers)
	var ctrl, brk []logCopy
	for _, n := range q.Nodes {
		ctrl = append(ctrl, readLogCopy(t, fmt.Sprintf("%s controller %d", n.Side, n.ID), n.PartitionDir, committed))
	}
	for _, b := range r.brokers {
		brk = append(brk, readLogCopy(t, fmt.Sprintf("broker %d", b.NodeID), b.PartitionDir, committed))
	}
	from, batches := agreeByOffset(t, ctrl, committed, true)
	t.Logf("the 3 controllers hold the same %d batches, byte for byte, in [%d, %d)", batches, from, committed)
	for _, b := range brk {
		bf, bn := agreeByOffset(t, append([]logCopy{ctrl[0]}, b), committed, false)
		t.Logf("%s holds the controllers' batches in [%d, %d): %d batches", b.label, bf, b.end(committed), bn)
	}
	bootstrapTransactions(t, r.env, q.Node(1).PartitionDir)
}

// metadataFaults fails on what a Kafka 4.4 controller or broker logs when a metadata
// record does not apply or a metadata publisher fails: the QuorumController's "Unable to
// apply", the fault handlers' "Encountered ... fault", and any ERROR of the loggers that
// load, replay and publish metadata.
func metadataFaults(t *testing.T, label, log string) {
	t.Helper()
	faults := 0
	for _, line := range strings.Split(log, "\n") {
		if !faultLine(line) {
			continue
		}
		if faults++; faults <= 5 {
			t.Errorf("%s: %s", label, line)
		}
	}
	if faults > 5 {
		t.Errorf("%s: %d such lines in all", label, faults)
	}
}

var (
	faultText   = regexp.MustCompile(`Unable to apply|Error replaying|Encountered [a-z ]*fault|Unhandled (fault|error) |Error loading metadata|Error generating new metadata image`)
	metadataLog = regexp.MustCompile(`^\[[^]]+\] ERROR .*\((org\.apache\.kafka\.(image|controller|metadata|server\.fault)|kafka\.server\.metadata)[.A-Za-z$]*\)$`)
)

func faultLine(line string) bool { return faultText.MatchString(line) || metadataLog.MatchString(line) }

// kraftdErrors fails on a kraftd node's error-level log lines (a replay or append failure
// is one, before the node stops), and on a connection it closed for want of an answer to
// give (a request whose refusal has no answer in Kafka's shape): in this run kraftd has
// nothing to log above warn, and answers every request.
func kraftdErrors(t *testing.T, label, log string) {
	t.Helper()
	for _, line := range strings.Split(log, "\n") {
		if kraftdBadLine(line) {
			t.Errorf("%s: %s", label, line)
		}
	}
}

func kraftdBadLine(line string) bool {
	return kraftdErrorLine.MatchString(line) || strings.Contains(line, `"msg":"request for an api the node does not route`)
}

var kraftdErrorLine = regexp.MustCompile(`^\{"level":"(error|dpanic|panic|fatal)"`)

// bootstrapTransactions checks, through kafka-dump-log's decoding of a controller's
// segments, that the bootstrap records were written once: each later active controller
// continued the log instead of bootstrapping again.
func bootstrapTransactions(t *testing.T, env *kafkatest.Env, dir string) {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no segments in %s: %v", dir, err)
	}
	sort.Strings(segs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := env.DumpLog(ctx, kafkatest.DumpOptions{DeepIteration: true, ClusterMetadataDecoder: true}, segs...)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, `"name":"Bootstrap records"`); n != 1 {
		t.Errorf("%d bootstrap transactions in %s, want 1", n, dir)
	}
	if strings.Contains(out, "ABORT_TRANSACTION_RECORD") {
		t.Errorf("an AbortTransactionRecord in %s: a controller took over inside an open transaction", dir)
	}
}

// logCopy is one node's __cluster_metadata below an offset: its batches by base offset.
type logCopy struct {
	label   string
	start   int64
	logEnd  int64
	batches map[int64][]byte
}

func (c logCopy) end(committed int64) int64 { return min(c.logEnd, committed) }

func readLogCopy(t *testing.T, label, dir string, below int64) logCopy {
	t.Helper()
	l, err := metadatalog.OpenReadOnly(dir)
	if err != nil {
		t.Fatalf("%s: open %s: %v", label, dir, err)
	}
	defer l.Close()
	c := logCopy{label: label, start: l.StartOffset(), logEnd: l.EndOffset().Offset, batches: map[int64][]byte{}}
	err = l.Batches(l.StartOffset(), func(b []byte) error {
		h, err := protocol.ParseBatchHeader(b)
		if err != nil {
			return err
		}
		if h.LastOffset() < below {
			c.batches[h.BaseOffset] = bytes.Clone(b)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: read %s: %v", label, dir, err)
	}
	return c
}

// sameBatches compares copies over the range they all hold below committed: from the
// latest log start (snapshots move it differently on each node) to the earliest log end.
// A batch raft replicated is the same bytes on every replica (the leader's epoch, offsets,
// timestamps and CRC included; only its position in a segment differs), so each base
// offset must name the same bytes everywhere. full: every copy must reach committed.
func agreeByOffset(t *testing.T, copies []logCopy, committed int64, full bool) (from int64, n int) {
	t.Helper()
	to := committed
	for _, c := range copies {
		from = max(from, c.start)
		if full && c.logEnd < committed {
			t.Errorf("%s ends at %d, below the committed offset %d", c.label, c.logEnd, committed)
		}
		to = min(to, c.logEnd)
	}
	ref := copies[0]
	var bases []int64
	for base, b := range ref.batches {
		h, _ := protocol.ParseBatchHeader(b)
		if base >= from && h.LastOffset() < to {
			bases = append(bases, base)
		}
	}
	slices.Sort(bases)
	next := from
	for _, base := range bases {
		if base != next {
			t.Errorf("%s: no batch starts at offset %d (next batch at %d)", ref.label, next, base)
		}
		h, _ := protocol.ParseBatchHeader(ref.batches[base])
		next = h.LastOffset() + 1
		for _, c := range copies[1:] {
			if got, ok := c.batches[base]; !ok {
				t.Errorf("%s holds no batch at offset %d, %s does", c.label, base, ref.label)
			} else if !bytes.Equal(got, ref.batches[base]) {
				t.Errorf("the batch at offset %d differs: %s and %s", base, c.label, ref.label)
			}
		}
	}
	if len(bases) == 0 {
		t.Errorf("no batches in common in [%d, %d)", from, to)
	}
	return from, len(bases)
}

// createTopicWith creates a topic with configs through the brokers at addrs, retrying
// every retry with new connections (see kafkatest.Client.CreateTopic) until ctx ends.
func createTopicWith(ctx context.Context, addrs []string, name string, partitions int32, rf int16, configs map[string]*string, retry time.Duration) error {
	for {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
		if err != nil {
			return err
		}
		actx, cancel := context.WithTimeout(ctx, 15*time.Second)
		_, err = kadm.NewClient(cl).CreateTopic(actx, partitions, rf, configs, name)
		cancel()
		cl.Close()
		if err == nil || errors.Is(err, kerr.TopicAlreadyExists) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("create topic %s: %w (last error %v)", name, ctx.Err(), err)
		case <-time.After(retry):
		}
	}
}

// createOnceErr sends one CreateTopics for an existing topic through the brokers and
// returns the topic's error, retrying only while no controller answers.
func createOnceErr(ctx context.Context, addrs []string, name string) error {
	var err error
	for deadline := time.Now().Add(failoverBound); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		cl, cerr := kgo.NewClient(kgo.SeedBrokers(addrs...))
		if cerr != nil {
			return cerr
		}
		actx, cancel := context.WithTimeout(ctx, 15*time.Second)
		_, err = kadm.NewClient(cl).CreateTopic(actx, 1, 3, nil, name)
		cancel()
		cl.Close()
		if !errors.Is(err, kerr.NotController) && !errors.Is(err, kerr.RequestTimedOut) && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
	}
	return err
}

func readLoadAvg() (string, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "", err
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " "), nil
}

// TestFailoverFaultLines: the lines the failover judge fails on, as Kafka 4.4.0 and
// kraftd log them, and lines of a normal failover it must let pass.
func TestFailoverFaultLines(t *testing.T) {
	for _, line := range []string{
		"[2026-12-07 19:44:43,551] ERROR Encountered fatal fault: Unable to apply PartitionChangeRecord record at offset 120 on standby controller, from the batch with baseOffset 118 (org.apache.kafka.server.fault.ProcessTerminatingFaultHandler)",
		"[2026-12-07 19:44:43,551] ERROR [MetadataLoader id=101] Encountered metadata loading fault: Error loading metadata log record from offset 120 (org.apache.kafka.server.fault.LoggingFaultHandler)",
		"[2026-12-07 19:44:43,551] ERROR [MetadataLoader id=2] Unhandled error publishing the new metadata image ending at 120 (org.apache.kafka.image.loader.MetadataLoader)",
		"[2026-12-07 19:44:43,551] ERROR [QuorumController id=2] something went wrong (org.apache.kafka.controller.QuorumController)",
		"[2026-12-07 19:44:43,551] ERROR [BrokerMetadataPublisher id=101] Error publishing (kafka.server.metadata.BrokerMetadataPublisher)",
	} {
		if !faultLine(line) {
			t.Errorf("not taken for a fault: %s", line)
		}
	}
	for _, line := range []string{
		"[2026-12-07 19:45:35,956] ERROR [ControllerApis nodeId=1] Unexpected error handling request RequestHeader(apiKey=BROKER_HEARTBEAT, apiVersion=2, clientId=102, correlationId=76, headerVersion=2) (kafka.server.ControllerApis)",
		"[2026-12-07 19:45:36,017] INFO [QuorumController id=1] CreateTopics result(s): CreatableTopic(name='failover-2'): SUCCESS (org.apache.kafka.controller.ReplicationControlManager)",
		"[2026-12-07 19:45:36,017] WARN [QuorumController id=1] Performing controller activation. (org.apache.kafka.controller.QuorumController)",
	} {
		if faultLine(line) {
			t.Errorf("taken for a fault: %s", line)
		}
	}
	for line, bad := range map[string]bool{
		`{"level":"error","ts":"2026-12-07T19:48:28.762Z","logger":"controller","msg":"cannot apply a committed record: stopping"}`:                            true,
		`{"level":"warn","ts":"2026-12-07T19:56:54.170Z","msg":"request for an api the node does not route; closing the connection","node_id":2,"api_key":70}`: true,
		`{"level":"warn","ts":"2026-12-07T19:48:28.762Z","logger":"peers","msg":"connect failed"}`:                                                             false,
	} {
		if kraftdBadLine(line) != bad {
			t.Errorf("kraftdBadLine(%s) = %v", line, !bad)
		}
	}
}
