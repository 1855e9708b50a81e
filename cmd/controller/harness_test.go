package main

// Harness for the real-process tests: the controller binary is built once
// into a temp dir; each node is a child process on 127.0.0.1 with its own
// properties file, data dir, stdout (stats JSON) and stderr (logs) files.
// Processes are stopped by pid only; every wait has a deadline and dumps
// the node logs when it fails.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/admin"
	"github.com/kraftd/kraftd/internal/freeport"
	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/topics"
	"github.com/kraftd/kraftd/workload"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// controllerBinary builds cmd/controller once per test binary.
func controllerBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "kraftd-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "controller")
		cmd := exec.Command(goTool(), "build", "-o", binPath, ".")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// goTool is the go command that runs the tests.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// freePorts reserves n distinct free ports (internal/freeport: outside the ephemeral
// range, never handed to another test process).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports, err := freeport.Take(n)
	if err != nil {
		t.Fatal(err)
	}
	return ports
}

// cluster is a set of node processes sharing a voter set.
type cluster struct {
	t      *testing.T
	dir    string
	bin    string
	voters string
	nodes  map[int32]*proc
	extra  []string // properties lines added to every node
	args   []string // extra workload flags
	// command is "test-kraft-server-start" (default) or "start".
	command string
}

// proc is one node process (it may be restarted: outputs are appended).
type proc struct {
	id      int32
	port    int
	dirID   string
	cfgPath string
	dataDir string
	outPath string
	errPath string
	cmd     *exec.Cmd
	done    chan struct{}
	exitErr error
	runs    int
	// env, when set, is the node's whole environment, and it runs "start"
	// configured by it alone (no --config).
	env []string
}

var testDirIDs = []string{"b8tRS7h4TJ2Vt43Dp85v2A", "Nkij_D9XRiYKNb41SiJo7Q", "4-e97nI7eHPYKfEDtW8rtQ", "J8aAPcfLQt2bqs1JT_rMgQ", "MkU3OEVBNTcwNTJENDM2Qg"}

// Test timing: short election and fetch timeouts keep failover in the
// sub-second range so the suite stays short.
var fastQuorum = []string{
	"controller.quorum.election.timeout.ms=400",
	"controller.quorum.fetch.timeout.ms=800",
	"controller.quorum.election.backoff.max.ms=400",
	"controller.quorum.request.timeout.ms=1000",
	"controller.quorum.append.linger.ms=5",
}

func newCluster(t *testing.T, voters int) *cluster {
	t.Helper()
	c := &cluster{t: t, dir: t.TempDir(), bin: controllerBinary(t), nodes: map[int32]*proc{}, extra: fastQuorum,
		args: []string{"--throughput", "2000", "--record-size", "64", "--stats-json", "--stats-interval", "200ms"}}
	ports := freePorts(t, voters)
	var vs []string
	for i := 0; i < voters; i++ {
		id := int32(i + 1)
		vs = append(vs, fmt.Sprintf("%d@127.0.0.1:%d", id, ports[i]))
		c.nodes[id] = c.newProc(id, ports[i])
	}
	c.voters = strings.Join(vs, ",")
	for _, p := range c.nodes {
		c.writeConfig(p, "controller")
	}
	t.Cleanup(c.stopAll)
	t.Cleanup(func() {
		if t.Failed() {
			c.dumpLogs()
		}
	})
	return c
}

func (c *cluster) newProc(id int32, port int) *proc {
	base := filepath.Join(c.dir, fmt.Sprintf("node%d", id))
	return &proc{
		id: id, port: port, dirID: testDirIDs[(int(id)-1)%len(testDirIDs)],
		cfgPath: base + ".properties", dataDir: base + "-data",
		outPath: base + ".out", errPath: base + ".log",
	}
}

// addObserver adds a node outside the voter set (process.roles=broker).
func (c *cluster) addObserver(id int32) *proc {
	p := c.newProc(id, freePorts(c.t, 1)[0])
	c.nodes[id] = p
	c.writeConfig(p, "broker")
	return p
}

func (c *cluster) writeConfig(p *proc, role string) {
	var b strings.Builder
	fmt.Fprintf(&b, "node.id=%d\nprocess.roles=%s\n", p.id, role)
	if role == "broker" {
		fmt.Fprintf(&b, "listeners=PLAINTEXT://127.0.0.1:%d\n", p.port)
	} else {
		fmt.Fprintf(&b, "listeners=CONTROLLER://127.0.0.1:%d\n", p.port)
	}
	fmt.Fprintf(&b, "controller.listener.names=CONTROLLER\ncontroller.quorum.voters=%s\nlog.dirs=%s\n", c.voters, p.dataDir)
	for _, e := range c.extra {
		b.WriteString(e + "\n")
	}
	if err := os.WriteFile(p.cfgPath, []byte(b.String()), 0o644); err != nil {
		c.t.Fatal(err)
	}
}

func (c *cluster) start(id int32) {
	c.t.Helper()
	p := c.nodes[id]
	out, err := os.OpenFile(p.outPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	errf, err := os.OpenFile(p.errPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	p.runs++
	fmt.Fprintf(errf, "=== run %d\n", p.runs)
	args := append([]string{"test-kraft-server-start", "--config", p.cfgPath, "--replica-directory-id", p.dirID, "--log-level", "debug"}, c.args...)
	if c.command == "start" {
		args = []string{"start", "--config", p.cfgPath, "--log-level", "debug"}
	}
	if p.env != nil {
		args = []string{"start", "--log-level", "debug"}
	}
	p.cmd = exec.Command(c.bin, args...)
	p.cmd.Env = p.env
	dieWithTest(p.cmd)
	p.cmd.Stdout, p.cmd.Stderr = out, errf
	if err := p.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	p.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		p.exitErr = cmd.Wait()
		out.Close()
		errf.Close()
		close(done)
	}(p.cmd, p.done)
}

func (p *proc) running() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// signal sends sig to the node's pid and, for SIGKILL, waits for the exit.
func (c *cluster) signal(id int32, sig syscall.Signal) {
	p := c.nodes[id]
	if !p.running() {
		return
	}
	if err := syscall.Kill(p.cmd.Process.Pid, sig); err != nil {
		c.t.Logf("kill %d %v: %v", p.cmd.Process.Pid, sig, err)
	}
}

// waitExit waits for node id to exit; false on timeout.
func (c *cluster) waitExit(id int32, d time.Duration) bool {
	p := c.nodes[id]
	if p.cmd == nil {
		return true
	}
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

func (c *cluster) stopAll() {
	for id, p := range c.nodes {
		if p.running() {
			c.signal(id, syscall.SIGTERM)
		}
	}
	for id, p := range c.nodes {
		if p.cmd != nil && !c.waitExit(id, 10*time.Second) {
			c.t.Errorf("node %d did not exit within 10s of SIGTERM; killing", id)
			c.signal(id, syscall.SIGKILL)
			c.waitExit(id, 5*time.Second)
		}
	}
}

func (c *cluster) dumpLogs() {
	ids := make([]int, 0, len(c.nodes))
	for id := range c.nodes {
		ids = append(ids, int(id))
	}
	sort.Ints(ids)
	for _, id := range ids {
		p := c.nodes[int32(id)]
		for _, f := range []string{p.errPath, p.outPath} {
			b, _ := os.ReadFile(f)
			if len(b) > 12000 {
				b = append([]byte("...\n"), b[len(b)-12000:]...)
			}
			c.t.Logf("==== node %d %s\n%s", id, filepath.Base(f), b)
		}
	}
}

// waitFor polls cond every 50ms until it returns true or d passes.
func (c *cluster) waitFor(d time.Duration, what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// request sends one request to node id with franz-go (ApiVersions first).
func (c *cluster) request(id int32, req kmsg.Request) (kmsg.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return admin.Request(ctx, fmt.Sprintf("127.0.0.1:%d", c.nodes[id].port), req)
}

// describeQuorum asks node id (which answers only when it leads).
func (c *cluster) describeQuorum(id int32) (*kmsg.DescribeQuorumResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return admin.DescribeQuorumAt(ctx, fmt.Sprintf("127.0.0.1:%d", c.nodes[id].port), topics.ClusterMetadata)
}

// leaders returns the running nodes whose latest stats line says Leader,
// with their epochs.
func (c *cluster) lastStats(id int32) (workload.Stats, bool) {
	b, err := os.ReadFile(c.nodes[id].outPath)
	if err != nil {
		return workload.Stats{}, false
	}
	var last workload.Stats
	found := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var s workload.Stats
		if json.Unmarshal(sc.Bytes(), &s) == nil && !s.Final {
			last, found = s, true
		}
	}
	return last, found
}

// statsLines returns every stats line of node id.
func (c *cluster) statsLines(id int32) []workload.Stats {
	b, _ := os.ReadFile(c.nodes[id].outPath)
	var out []workload.Stats
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var s workload.Stats
		if json.Unmarshal(sc.Bytes(), &s) == nil {
			out = append(out, s)
		}
	}
	return out
}

// leader finds the node that answers DescribeQuorum (only a leader does).
func (c *cluster) leader() (int32, *kmsg.DescribeQuorumResponseTopicPartition) {
	for id, p := range c.nodes {
		if !p.running() {
			continue
		}
		dq, err := c.describeQuorum(id)
		if err == nil {
			part := dq.Topics[0].Partitions[0]
			if part.LeaderID == id {
				return id, &part
			}
		}
	}
	return -1, nil
}

// waitLeader waits until exactly one running node leads at an epoch > minEpoch.
func (c *cluster) waitLeader(d time.Duration, minEpoch int32) (int32, int32) {
	c.t.Helper()
	var id, epoch int32 = -1, -1
	c.waitFor(d, fmt.Sprintf("a leader with epoch > %d", minEpoch), func() bool {
		l, part := c.leader()
		if l < 0 || part.LeaderEpoch <= minEpoch {
			return false
		}
		id, epoch = l, part.LeaderEpoch
		return true
	})
	return id, epoch
}

// logBatch is one batch read back from a node's segment files.
type logBatch struct {
	base, last int64
	epoch      int32
	control    bool
	raw        []byte
}

// readLog reads the batches of a node's __raft_performance_test-0 log with
// metadatalog (read-only: a running node's torn tail is ignored).
func readLog(t *testing.T, dataDir string) []logBatch {
	t.Helper()
	return readTopicLog(t, dataDir, "__raft_performance_test")
}

func readTopicLog(t *testing.T, dataDir, topic string) []logBatch {
	t.Helper()
	out, err := loadTopicLog(dataDir, topic)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readRunningLog reads the log of a running node, trying again for up to 5 s
// while reads fail (see readLiveLog); a read that still fails then fails the
// test.
func readRunningLog(t *testing.T, dataDir string) []logBatch {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if bs, ok := readLiveLog(dataDir); ok {
			return bs
		}
	}
	return readLog(t, dataDir)
}

// readLiveLog reads the log of a running node: retention may delete a
// segment while it is read, and a follower may truncate its tail (after a
// leader change) under a read, so a failed read is reported as ok=false for
// the caller's poll to try again.
func readLiveLog(dataDir string) ([]logBatch, bool) {
	out, err := loadTopicLog(dataDir, "__raft_performance_test")
	return out, err == nil
}

func loadTopicLog(dataDir, topic string) ([]logBatch, error) {
	dir := topics.PartitionDir(dataDir, topic)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	l, err := metadatalog.OpenReadOnly(dir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	defer l.Close()
	var out []logBatch
	err = l.Batches(l.StartOffset(), func(b []byte) error {
		h, err := protocol.CheckBatch(b)
		if err != nil {
			return err
		}
		out = append(out, logBatch{base: h.BaseOffset, last: h.LastOffset(), epoch: h.PartitionLeaderEpoch, control: h.IsControl(), raw: append([]byte(nil), b[:h.Size()]...)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	return out, nil
}

// endOffset is the offset after the last batch read.
func endOffset(bs []logBatch) int64 {
	if len(bs) == 0 {
		return 0
	}
	return bs[len(bs)-1].last + 1
}

// checkSamePrefix asserts that the logs hold byte-identical batches for
// every offset below upTo, and that each log reaches upTo.
func checkSamePrefix(t *testing.T, upTo int64, logs map[int32][]logBatch) {
	t.Helper()
	var ref []logBatch
	var refID int32 = -1
	for id, l := range logs {
		if endOffset(l) < upTo {
			t.Fatalf("node %d log ends at %d, below the committed offset %d", id, endOffset(l), upTo)
		}
		// Contiguous offsets from 0.
		next := int64(0)
		for _, b := range l {
			if b.base != next {
				t.Fatalf("node %d: batch at %d, expected %d (gap or overlap)", id, b.base, next)
			}
			next = b.last + 1
		}
		if ref == nil {
			ref, refID = l, id
			continue
		}
		for i := 0; i < len(l) && i < len(ref) && l[i].base < upTo; i++ {
			if !bytes.Equal(l[i].raw, ref[i].raw) {
				t.Fatalf("nodes %d and %d differ in the committed batch at offset %d", id, refID, l[i].base)
			}
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
