package kafkatest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/security"
	"github.com/kraftd/kraftd/topics"
	"github.com/kraftd/kraftd/workload"
)

// Side says which implementation a quorum node runs.
type Side string

const (
	SideKraftd Side = "kraftd"
	SideKafka  Side = "kafka"
)

// MixedRaftConfig describes a static quorum of TestRaftServer-compatible nodes, some of them
// Kafka's kafka.tools.TestRaftServer and the rest kraftd's test-kraft-server-start, all on
// __raft_performance_test with TestRaftServer's topic id and cluster id.
type MixedRaftConfig struct {
	Sides      []Side // node i+1 runs Sides[i]
	Throughput int    // records/s while leading (both sides honour it)
	RecordSize int    // bytes
	Props      Props  // extra properties for every node
	// KraftdProps are extra properties for kraftd nodes only (e.g. segment sizes below the
	// 8 MiB floor Kafka 4.4 enforces on metadata.log.segment.bytes).
	KraftdProps Props
	// KafkaLog4j sets logger levels of the JVM nodes (e.g. DEBUG for KafkaRaftClient to see
	// EndQuorumEpoch handling).
	KafkaLog4j map[string]string
	KraftdArgs []string // extra test-kraft-server-start (or start) flags
	// KafkaJVMFlags replace the harness's small-heap JVM flags (benchmarks), for
	// TestRaftServers and controllers alike.
	KafkaJVMFlags []string

	// Controllers runs metadata quorum nodes instead: Kafka's kafka.Kafka with
	// process.roles=controller (formatted by kafka-storage) and kraftd's `start` (formatted
	// by `controller format`), on __cluster_metadata; no workload.
	Controllers bool
	ClusterID   string           // Controllers: the cluster id every node is formatted with
	ClusterIDs  map[int32]string // Controllers: per-node override (a foreign cluster)
	// KafkaFormatArgs are extra kafka-storage format flags (Controllers); when set,
	// kraftd nodes are formatted by Kafka's tool too (e.g. --add-scram, which kraftd's
	// format does not offer).
	KafkaFormatArgs []string
	// KraftdFormatArgs, when set, format kraftd nodes with kraftd's own format and
	// these flags instead of Kafka's tool (e.g. kraftd's --add-scram).
	KraftdFormatArgs []string
	// ClientSecurity is how the harness's own requests (DescribeQuorum) reach nodes
	// whose listeners use TLS or SASL; nil: plaintext.
	ClientSecurity *security.ClientSide
	// Metrics gives every node a MetricsPort: Kafka nodes serve remote JMX there (no
	// authentication, 127.0.0.1), kraftd nodes --metrics-listener.
	Metrics bool
}

// MixedNode is one voter of a mixed quorum. Its port, log dir and directory id survive
// restarts.
type MixedNode struct {
	ID           int32
	Side         Side
	Port         int
	Addr         string
	LogDir       string
	PartitionDir string
	DirectoryID  string
	MetricsPort  int      // MixedRaftConfig.Metrics: JMX or /metrics port; 0 otherwise
	Proc         *Process // the current (or last) process
	Starts       int

	procs   []*Process // every process run for this node, in order
	stopped bool       // stopped on purpose (Terminate, Kill): its exit is not a failure
}

// MixedRaft is a running mixed quorum.
type MixedRaft struct {
	t      testing.TB
	env    *Env
	cfg    MixedRaftConfig
	Voters []string
	Nodes  []*MixedNode
}

// NewMixedRaft allocates ports, log dirs and directory ids; nothing is started yet.
func (e *Env) NewMixedRaft(t testing.TB, cfg MixedRaftConfig) *MixedRaft {
	t.Helper()
	if cfg.Controllers && cfg.ClusterID == "" {
		cfg.ClusterID = NewUUID()
	}
	q := &MixedRaft{t: t, env: e, cfg: cfg}
	ports := FreePorts(t, len(cfg.Sides))
	var metricsPorts []int
	if cfg.Metrics {
		metricsPorts = FreePorts(t, len(cfg.Sides))
	}
	for i, side := range cfg.Sides {
		id := int32(i + 1)
		dir := filepath.Join(t.TempDir(), "data")
		topic := topics.RaftPerformanceTest
		if cfg.Controllers {
			topic = topics.ClusterMetadata
		}
		n := &MixedNode{ID: id, Side: side, Port: ports[i], Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[i])),
			LogDir: dir, PartitionDir: topics.PartitionDir(dir, topic), DirectoryID: NewUUID()}
		if cfg.Metrics {
			n.MetricsPort = metricsPorts[i]
		}
		q.Nodes = append(q.Nodes, n)
		q.Voters = append(q.Voters, Voter(id, n.Addr))
	}
	return q
}

// Node returns the node with the given id.
func (q *MixedRaft) Node(id int32) *MixedNode { return q.Nodes[id-1] }

// Start starts (or restarts, on the same dir and port) node id and waits until it listens.
func (q *MixedRaft) Start(id int32) {
	q.t.Helper()
	n := q.Node(id)
	if n.Proc != nil {
		if exited, _ := n.Proc.Exited(); !exited {
			q.t.Fatalf("kafkatest: node %d is still running", id)
		}
	}
	if q.cfg.Controllers {
		q.startController(n)
		return
	}
	switch n.Side {
	case SideKafka:
		s := q.env.StartTestRaftServer(q.t, RaftServerConfig{NodeID: id, Port: n.Port, Voters: q.Voters,
			DirectoryID: n.DirectoryID, Throughput: q.cfg.Throughput, RecordSize: q.cfg.RecordSize,
			Dir: n.LogDir, Props: q.cfg.Props, Log4jLevels: q.cfg.KafkaLog4j, JVMFlags: q.kafkaJVMFlags(n, q.cfg.KafkaJVMFlags)})
		n.Proc = s.Process
	case SideKraftd:
		args := []string{"--throughput", strconv.Itoa(q.cfg.Throughput), "--record-size", strconv.Itoa(q.cfg.RecordSize),
			"--stats-json", "--stats-interval", "1s", "--log-format", "json"}
		args = append(append(args, q.cfg.KraftdArgs...), q.kraftdMetricsArgs(n)...)
		k := StartKraftd(q.t, KraftdConfig{Command: "test-kraft-server-start", NodeID: id, Port: n.Port, Voters: q.Voters,
			DirectoryID: n.DirectoryID, Dir: n.LogDir, Props: q.kraftdProps(), Args: args})
		n.Proc = k.Process
	default:
		q.t.Fatalf("kafkatest: unknown side %q", n.Side)
	}
	n.Starts++
	n.stopped = false
	n.procs = append(n.procs, n.Proc)
}

// ClusterID is the cluster id node id is formatted with (Controllers).
func (q *MixedRaft) ClusterID(id int32) string {
	if c, ok := q.cfg.ClusterIDs[id]; ok {
		return c
	}
	return q.cfg.ClusterID
}

func (q *MixedRaft) startController(n *MixedNode) {
	q.t.Helper()
	formatted := n.Starts > 0
	switch n.Side {
	case SideKafka:
		c := q.env.StartController(q.t, ControllerConfig{NodeID: n.ID, ClusterID: q.ClusterID(n.ID), Port: n.Port, Voters: q.Voters,
			NoFormat: formatted, Dir: n.LogDir, Props: q.cfg.Props, Log4jLevels: q.cfg.KafkaLog4j, FormatArgs: q.cfg.KafkaFormatArgs,
			JVMFlags: q.kafkaJVMFlags(n, q.cfg.KafkaJVMFlags)})
		n.Proc = c.Process
	case SideKraftd:
		if !formatted && len(q.cfg.KafkaFormatArgs) > 0 && q.cfg.KraftdFormatArgs == nil {
			q.formatWithKafka(n)
			formatted = true
		}
		args := append(append([]string{"--log-format", "json"}, q.cfg.KraftdArgs...), q.kraftdMetricsArgs(n)...)
		k := StartKraftd(q.t, KraftdConfig{Command: "start", NodeID: n.ID, ClusterID: q.ClusterID(n.ID), Port: n.Port, Voters: q.Voters,
			Dir: n.LogDir, NoFormat: formatted, Props: q.kraftdProps(), Args: args, FormatArgs: q.cfg.KraftdFormatArgs})
		n.Proc = k.Process
	default:
		q.t.Fatalf("kafkatest: unknown side %q", n.Side)
	}
	n.Starts++
	n.stopped = false
	n.procs = append(n.procs, n.Proc)
}

// Wipe empties stopped node id's log dir, as a replaced disk: its next Start formats it
// anew (Controllers), with the same node id, directory id and port.
func (q *MixedRaft) Wipe(id int32) {
	q.t.Helper()
	n := q.Node(id)
	if n.Running() {
		q.t.Fatalf("kafkatest: wipe of running node %d", id)
	}
	if err := os.RemoveAll(n.LogDir); err != nil {
		q.t.Fatal(err)
	}
	n.Starts = 0
}

// Terminate sends SIGTERM to node id without waiting (a graceful shutdown: a leader resigns
// with EndQuorumEpoch).
func (q *MixedRaft) Terminate(id int32) {
	n := q.Node(id)
	q.settle(n)
	n.stopped = true
	n.Proc.Terminate()
}

// Kill sends SIGKILL to node id and waits for it to exit (a crash).
func (q *MixedRaft) Kill(id int32) {
	n := q.Node(id)
	n.stopped = true
	n.Proc.Kill()
}

// Stop stops node id gracefully and waits (SIGKILL after StopGrace). A Kafka controller
// that halts on the shutdown race described at jvmShutdownFault counts as stopped: it is
// Kafka's own fault, equivalent to a crash during shutdown, and the quorum tolerates crashes.
func (q *MixedRaft) Stop(id int32) error {
	n := q.Node(id)
	q.settle(n)
	n.stopped = true
	n.Proc.Stop()
	return q.ExitErr(id)
}

// ExitErr is the exit error of node id's exited process: nil after a clean exit, a
// graceful one on SIGTERM, or Kafka's shutdown race (jvmShutdownFault).
func (q *MixedRaft) ExitErr(id int32) error {
	n := q.Node(id)
	exited, err := n.Proc.Exited()
	var exit *exec.ExitError
	switch {
	case !exited || err == nil:
		return nil
	case errors.As(err, &exit) && exit.ExitCode() == 128+int(syscall.SIGTERM):
		return nil
	case n.Side == SideKafka && jvmShutdownFault(n.Proc.Log()):
		q.t.Logf("kafkatest: node %d (Kafka) halted in its metadata loader while shutting down (Kafka's shutdown race): taken as stopped", n.ID)
		return nil
	}
	return err
}

// jvmShutdownFault reports Kafka 4.4's shutdown race: the raft client closes the log while
// the metadata loader still reads a commit from it, and the loader's fault handler halts
// the JVM (exit 1) with a ClosedChannelException.
func jvmShutdownFault(log string) bool {
	return strings.Contains(log, "Unhandled fault in MetadataLoader#handleCommit") && strings.Contains(log, "ClosedChannelException")
}

// jvmCaughtUp is what a Kafka controller's metadata loader logs once it has loaded the
// log up to the high watermark (its bootstrap snapshot included).
const jvmCaughtUp = "The loader finished catching up to the current high water mark"

// SettleTimeout bounds settle: a JVM controller that cannot reach a leader never catches up.
const SettleTimeout = 30 * time.Second

// jvmPublished is what a Kafka 4.4 controller's metadata loader logs when it hands its first
// image to the last of the controller's publishers (ControllerServer installs AclPublisher
// last), after jvmCaughtUp.
const jvmPublished = "InitializeNewPublishers: initializing AclPublisher"

// settle waits until a running Kafka controller has loaded its metadata and published it
// (or SettleTimeout passes): Kafka 4.4 stopped while its loader still reads the log halts
// with a fatal fault (see jvmShutdownFault), a window that is wide open during its first
// catch-up.
func (q *MixedRaft) settle(n *MixedNode) {
	if !q.cfg.Controllers || n.Side != SideKafka || !n.Running() {
		return
	}
	settled := func() bool {
		out := n.Proc.Log()
		return strings.Contains(out, jvmCaughtUp) && strings.Contains(out, jvmPublished)
	}
	for deadline := time.Now().Add(SettleTimeout); !settled(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) || !n.Running() {
			q.t.Logf("kafkatest: node %d has not loaded and published its metadata after %v; stopping it anyway", n.ID, SettleTimeout)
			return
		}
	}
}

// Logs returns the output of every process node id has run, oldest first.
func (n *MixedNode) Logs() string {
	var b strings.Builder
	for _, p := range n.procs {
		b.WriteString(p.Log())
	}
	return b.String()
}

var jvmFirstHW = regexp.MustCompile(`High watermark set to LogOffsetMetadata\(offset=(\d+),.* for the first time for epoch (\d+)`)

// WaitCommit waits until a record of epoch is known committed past offset above: a kraftd
// node reports a high watermark above it in that epoch, or a JVM leader of that epoch logs
// its first high watermark (above it).
func (q *MixedRaft) WaitCommit(epoch int32, above int64, timeout time.Duration) (int64, error) {
	deadline := time.Now().Add(timeout)
	for {
		for _, n := range q.Nodes {
			if !n.Running() {
				continue
			}
			out := n.Proc.Log()
			switch n.Side {
			case SideKraftd:
				for _, s := range ParseKraftdStats(out) {
					if s.Epoch == epoch && s.HighWatermark > above {
						return s.HighWatermark, nil
					}
				}
				if st, ok := n.State(); ok && st.Role == "Leader" && st.Epoch == epoch {
					if d, err := DescribeQuorumSecure(n.Addr, q.topic(), q.cfg.ClientSecurity); err == nil && d.LeaderEpoch == epoch && d.HighWatermark > above {
						return d.HighWatermark, nil
					}
				}
			case SideKafka:
				for _, m := range jvmFirstHW.FindAllStringSubmatch(out, -1) {
					off, _ := strconv.ParseInt(m[1], 10, 64)
					e, _ := strconv.Atoi(m[2])
					if int32(e) == epoch && off > above {
						return off, nil
					}
				}
			}
		}
		if time.Now().After(deadline) {
			return -1, fmt.Errorf("kafkatest: nothing committed past %d in epoch %d within %v", above, epoch, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// WaitCaughtUp waits until every running node of the quorum holds the leader's log up to
// a committed offset of at least atLeast, and returns that offset: below it every running
// node's log then holds the leader's batches. A leader that answers DescribeQuorum (kraftd,
// a Kafka controller) must have a high watermark of atLeast or more and list every running
// node, voter or observer, with its log end at or past atLeast: a replica's log end there is
// the offset of its last fetch, which the leader checked against its own log (the offset
// returned is the lowest of those log ends and the high watermark). Under a Kafka
// TestRaftServer leader, which answers no DescribeQuorum, every running node's log on disk
// must hold, byte for byte, the leader's batch holding offset atLeast-1 (raft's log
// matching then covers every batch below it); atLeast is returned.
func (q *MixedRaft) WaitCaughtUp(atLeast int64, timeout time.Duration) (int64, error) {
	deadline := time.Now().Add(timeout)
	var last string
	for {
		for _, n := range q.Nodes {
			if !n.Running() {
				continue
			}
			if !q.cfg.Controllers && n.Side == SideKafka {
				if st, ok := n.State(); ok && st.Role == "Leader" {
					if err := q.logsMatch(n, atLeast-1); err != nil {
						last = err.Error()
						continue
					}
					return atLeast, nil
				}
				continue
			}
			d, err := DescribeQuorumSecure(n.Addr, q.topic(), q.cfg.ClientSecurity)
			if err != nil || d.LeaderID != n.ID {
				continue
			}
			last = fmt.Sprintf("leader %d: %+v", n.ID, d)
			if end, ok := q.lowestLogEnd(d); ok && d.HighWatermark >= atLeast && end >= atLeast {
				return min(end, d.HighWatermark), nil
			}
		}
		if time.Now().After(deadline) {
			return -1, fmt.Errorf("kafkatest: no leader's high watermark of %d or more reached every running node within %v; last: %s", atLeast, timeout, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// logsMatch: every running node's log holds leader's batch that holds offset, byte for byte
// (read-only: a running node's torn tail is ignored).
func (q *MixedRaft) logsMatch(leader *MixedNode, offset int64) error {
	want, err := batchAt(leader.PartitionDir, offset)
	if err != nil {
		return fmt.Errorf("leader %d: %w", leader.ID, err)
	}
	for _, n := range q.Nodes {
		if n == leader || !n.Running() {
			continue
		}
		got, err := batchAt(n.PartitionDir, offset)
		if err != nil {
			return fmt.Errorf("node %d: %w", n.ID, err)
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("node %d holds another batch than leader %d at offset %d", n.ID, leader.ID, offset)
		}
	}
	return nil
}

// batchAt returns the batch of the log in dir that holds offset.
func batchAt(dir string, offset int64) ([]byte, error) {
	l, err := metadatalog.OpenReadOnly(dir)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	var found []byte
	errFound := errors.New("found")
	err = l.Batches(max(offset, l.StartOffset()), func(b []byte) error {
		h, err := protocol.ParseBatchHeader(b)
		if err != nil {
			return err
		}
		if h.BaseOffset <= offset && offset <= h.LastOffset() {
			found = bytes.Clone(b)
			return errFound
		}
		return nil
	})
	if found != nil {
		return found, nil
	}
	if err == nil {
		err = fmt.Errorf("no batch holds offset %d (log end %d)", offset, l.EndOffset().Offset)
	}
	return nil, err
}

// lowestLogEnd is the lowest log end d lists for the running nodes of the quorum (ok false
// when it does not list one of them).
func (q *MixedRaft) lowestLogEnd(d QuorumInfo) (int64, bool) {
	leo := map[int32]int64{}
	for _, r := range append(append([]kmsg.DescribeQuorumResponseTopicPartitionReplicaState(nil), d.Voters...), d.Observers...) {
		leo[r.ReplicaID] = r.LogEndOffset
	}
	lowest := int64(math.MaxInt64)
	for _, n := range q.Nodes {
		if !n.Running() {
			continue
		}
		end, ok := leo[n.ID]
		if !ok {
			return 0, false
		}
		lowest = min(lowest, end)
	}
	return lowest, true
}

// Running reports whether the node's process is up.
func (n *MixedNode) Running() bool {
	if n.Proc == nil {
		return false
	}
	exited, _ := n.Proc.Exited()
	return !exited
}

// NodeState is a node's raft state as its own log last reported it.
type NodeState struct {
	Role   string // Leader, Follower, Candidate, Prospective, Unattached, Voted, Resigned
	Epoch  int32
	Leader int32 // -1 when unknown
}

var (
	jvmTransition = regexp.MustCompile(`Completed transition to ([A-Za-z]+)\((.*)$`)
	jvmEpoch      = regexp.MustCompile(`\bepoch=(\d+)`)
	jvmLeader     = regexp.MustCompile(`\bleader=(\d+)`)
	kraftdTo      = regexp.MustCompile(`^([A-Za-z]+)\(epoch (\d+)\)$`)
)

// State parses the node's latest state transition from its current process's log.
func (n *MixedNode) State() (NodeState, bool) {
	if n.Proc == nil {
		return NodeState{}, false
	}
	f, err := os.Open(n.Proc.LogPath)
	if err != nil {
		return NodeState{}, false
	}
	defer f.Close()
	var st NodeState
	found := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch n.Side {
		case SideKafka:
			if !strings.Contains(line, "Completed transition to ") {
				continue
			}
			if s, ok := parseJVMTransition(line, n.ID); ok {
				st, found = s, true
			}
		case SideKraftd:
			if !strings.Contains(line, `"msg":"completed transition"`) {
				continue
			}
			if s, ok := parseKraftdTransition(line); ok {
				st, found = s, true
			}
		}
	}
	return st, found
}

func parseJVMTransition(line string, self int32) (NodeState, bool) {
	m := jvmTransition.FindStringSubmatch(line)
	if m == nil {
		return NodeState{}, false
	}
	role := strings.TrimSuffix(m[1], "State")
	body := m[2]
	// Only the new state's text: the line goes on with " from <old state>".
	if i := strings.Index(body, ") from "); i >= 0 {
		body = body[:i]
	}
	e := jvmEpoch.FindStringSubmatch(body)
	if e == nil {
		return NodeState{}, false
	}
	epoch, _ := strconv.Atoi(e[1])
	st := NodeState{Role: role, Epoch: int32(epoch), Leader: -1}
	switch role {
	case "Leader":
		st.Leader = self
	case "Follower":
		if l := jvmLeader.FindStringSubmatch(body); l != nil {
			id, _ := strconv.Atoi(l[1])
			st.Leader = int32(id)
		}
	}
	return st, true
}

func parseKraftdTransition(line string) (NodeState, bool) {
	var v struct {
		To     string `json:"to"`
		Leader int32  `json:"leader"`
	}
	if json.Unmarshal([]byte(line), &v) != nil {
		return NodeState{}, false
	}
	m := kraftdTo.FindStringSubmatch(v.To)
	if m == nil {
		return NodeState{}, false
	}
	epoch, _ := strconv.Atoi(m[2])
	st := NodeState{Role: m[1], Epoch: int32(epoch), Leader: v.Leader}
	if st.Role != "Leader" && st.Role != "Follower" {
		st.Leader = -1
	}
	return st, true
}

// AgreedLeader returns the leader and epoch every running node agrees on: one node is
// Leader in epoch E and every other running node follows it in E.
func (q *MixedRaft) AgreedLeader() (leader, epoch int32, ok bool) {
	return q.AgreedLeaderAmong(nil)
}

// AgreedLeaderAmong is AgreedLeader over the running nodes of ids only (all when nil).
func (q *MixedRaft) AgreedLeaderAmong(ids []int32) (leader, epoch int32, ok bool) {
	leader, epoch = -1, -1
	running := 0
	for _, n := range q.Nodes {
		if !n.Running() || (ids != nil && !slices.Contains(ids, n.ID)) {
			continue
		}
		running++
		st, found := n.State()
		if !found || (st.Role != "Leader" && st.Role != "Follower") || st.Leader < 0 {
			return -1, -1, false
		}
		if epoch == -1 {
			leader, epoch = st.Leader, st.Epoch
		} else if st.Leader != leader || st.Epoch != epoch {
			return -1, -1, false
		}
	}
	if running == 0 || !q.Node(leader).Running() {
		return -1, -1, false
	}
	return leader, epoch, true
}

// WaitLeader waits until the running nodes agree on a leader in an epoch above minEpoch.
func (q *MixedRaft) WaitLeader(minEpoch int32, timeout time.Duration) (leader, epoch int32, err error) {
	return q.WaitLeaderAmong(nil, minEpoch, timeout)
}

// WaitLeaderAmong is WaitLeader over the nodes of ids only (all when nil).
func (q *MixedRaft) WaitLeaderAmong(ids []int32, minEpoch int32, timeout time.Duration) (leader, epoch int32, err error) {
	deadline := time.Now().Add(timeout)
	for {
		if l, e, ok := q.AgreedLeaderAmong(ids); ok && e > minEpoch {
			return l, e, nil
		}
		for _, n := range q.Nodes {
			if n.Proc != nil && n.Starts > 0 {
				if exited, err := n.Proc.Exited(); exited && err != nil && n.expectedRunning() {
					return -1, -1, fmt.Errorf("kafkatest: node %d (%s) exited: %v", n.ID, n.Side, err)
				}
			}
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, n := range q.Nodes {
				st, _ := n.State()
				fmt.Fprintf(&b, " node %d (%s, running %v): %+v;", n.ID, n.Side, n.Running(), st)
			}
			return -1, -1, fmt.Errorf("kafkatest: no agreed leader above epoch %d within %v:%s", minEpoch, timeout, b.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// expectedRunning is false for nodes a test stopped on purpose (Terminate, Kill, Stop); an
// exit of any other node fails the wait.
func (n *MixedNode) expectedRunning() bool { return !n.stopped }

// ParseKraftdStats returns every --stats-json line of a kraftd process's output.
func ParseKraftdStats(out string) []workload.Stats {
	var r []workload.Stats
	for _, line := range strings.Split(out, "\n") {
		// A stats object, not one of kraftd's JSON log lines sharing the output.
		if !strings.HasPrefix(line, "{") || !strings.Contains(line, `"committed_records":`) {
			continue
		}
		var s workload.Stats
		if json.Unmarshal([]byte(line), &s) == nil {
			r = append(r, s)
		}
	}
	return r
}

// MaxKraftdHighWatermark is the largest high watermark any kraftd node of the quorum has
// reported so far, in every process it ran (logs of earlier processes included).
func (q *MixedRaft) MaxKraftdHighWatermark() int64 {
	hw := int64(-1)
	for _, n := range q.Nodes {
		if n.Side != SideKraftd {
			continue
		}
		for _, p := range n.procs {
			for _, s := range ParseKraftdStats(p.Log()) {
				hw = max(hw, s.HighWatermark)
			}
		}
	}
	return hw
}

// LeaderStateLogger is the JVM logger that logs a leader's every high watermark update at
// DEBUG (at INFO only each epoch's first): set it to DEBUG in KafkaLog4j for
// MaxKafkaHighWatermark to follow commits as they happen.
const LeaderStateLogger = "org.apache.kafka.raft.LeaderState"

// jvmHWMark precedes the offset in every high watermark update a JVM leader logs.
const jvmHWMark = "High watermark set to LogOffsetMetadata(offset="

// MaxKafkaHighWatermark is the largest high watermark any Kafka node of the quorum has
// logged as leader so far, in its current process (-1: none yet). Each leader's updates only
// grow, so its last one is its largest.
func (q *MixedRaft) MaxKafkaHighWatermark() int64 {
	hw := int64(-1)
	for _, n := range q.Nodes {
		if n.Side != SideKafka || n.Proc == nil {
			continue
		}
		hw = max(hw, lastJVMHighWatermark(n.Proc.Log()))
	}
	return hw
}

// LeaderHighWatermark is the last high watermark the JVM logged as leader (-1: none yet);
// with LeaderStateLogger at DEBUG it follows every commit.
func (p *Process) LeaderHighWatermark() int64 { return lastJVMHighWatermark(p.Log()) }

// lastJVMHighWatermark is the offset of the last complete high watermark update in a JVM's
// output (-1: none).
func lastJVMHighWatermark(out string) int64 {
	for {
		i := strings.LastIndex(out, jvmHWMark)
		if i < 0 {
			return -1
		}
		digits := out[i+len(jvmHWMark):]
		// An update still being written has no end to its offset yet: take the one before.
		if end := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); end > 0 {
			if off, err := strconv.ParseInt(digits[:end], 10, 64); err == nil {
				return off
			}
		}
		out = out[:i]
	}
}

func (q *MixedRaft) topic() string {
	if q.cfg.Controllers {
		return topics.ClusterMetadata
	}
	return topics.RaftPerformanceTest
}

// kafkaJVMFlags are flags (nil: the harness's defaults) with remote JMX on the node's
// MetricsPort when the quorum has metrics.
func (q *MixedRaft) kafkaJVMFlags(n *MixedNode, flags []string) []string {
	if !q.cfg.Metrics {
		return flags
	}
	if flags == nil {
		flags = serverJVMFlags
	}
	port := strconv.Itoa(n.MetricsPort)
	return append(slices.Clip(flags), "-Dcom.sun.management.jmxremote", "-Dcom.sun.management.jmxremote.port="+port,
		"-Dcom.sun.management.jmxremote.rmi.port="+port, "-Dcom.sun.management.jmxremote.host=127.0.0.1",
		"-Djava.rmi.server.hostname=127.0.0.1", "-Dcom.sun.management.jmxremote.authenticate=false",
		"-Dcom.sun.management.jmxremote.ssl=false")
}

func (q *MixedRaft) kraftdMetricsArgs(n *MixedNode) []string {
	if !q.cfg.Metrics {
		return nil
	}
	return []string{"--metrics-listener", "http://127.0.0.1:" + strconv.Itoa(n.MetricsPort)}
}

func (q *MixedRaft) kraftdProps() Props {
	p := Props{}
	p.Merge(q.cfg.Props)
	return p.Merge(q.cfg.KraftdProps)
}

// formatWithKafka formats kraftd node n's log dir with kafka-storage format and
// KafkaFormatArgs.
func (q *MixedRaft) formatWithKafka(n *MixedNode) {
	q.t.Helper()
	path := filepath.Join(q.t.TempDir(), "format.properties")
	props := ControllerProps(ControllerConfig{NodeID: n.ID, Port: n.Port, Voters: q.Voters}, n.LogDir).Merge(q.cfg.Props)
	if err := props.WriteFile(path); err != nil {
		q.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := q.env.StorageFormat(ctx, path, q.ClusterID(n.ID), q.cfg.KafkaFormatArgs...); err != nil {
		q.t.Fatalf("kafkatest: kafka-storage format of kraftd node %d: %v\n%s", n.ID, err, out)
	}
}
