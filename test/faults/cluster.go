package faults

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kraftd/kraftd/internal/freeport"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// Options shape a Cluster.
type Options struct {
	Voters     int // default 3
	Throughput int // records/s the leader's workload appends; default 500
	// Props are extra properties lines for every node.
	Props []string
	// DataDir, when set, gives a node's data dir (a tmpfs the test
	// mounted); the default is a dir under the test's temp dir.
	DataDir func(id int32) string
	// Args are extra test-kraft-server-start flags for every kraftd node.
	Args []string
	// Kafka names the nodes that run Apache Kafka's TestRaftServer
	// (kafka.go); the test is skipped when Kafka is not available.
	Kafka []int32
	// Controllers runs metadata-quorum controllers instead of the
	// TestRaftServer pair (controllers.go).
	Controllers bool
}

// Timing of every node: short timeouts keep a round short; L1's bound
// (FT + 10·ET) is scaled by slack for a loaded 2-core machine.
const (
	fetchTimeout    = 1000 * time.Millisecond
	electionTimeout = 500 * time.Millisecond
	slack           = 5
)

// LivenessBound is L1's FT + 10·ET (docs/design/faults.md 1.2) at the
// suite's timeouts, times slack: a heal must be followed by a commit within
// it.
const LivenessBound = slack * (fetchTimeout + 10*electionTimeout)

var nodeProps = []string{
	fmt.Sprintf("controller.quorum.election.timeout.ms=%d", electionTimeout.Milliseconds()),
	fmt.Sprintf("controller.quorum.fetch.timeout.ms=%d", fetchTimeout.Milliseconds()),
	"controller.quorum.election.backoff.max.ms=500",
	"controller.quorum.request.timeout.ms=1000",
	"controller.quorum.append.linger.ms=5",
	// The checker reads every acknowledged batch back: keep all of them.
	"metadata.max.retention.bytes=-1",
	"metadata.max.retention.ms=-1",
}

// Cluster is N real test-kraft-server-start processes on 127.0.0.1, each
// peer link through the Mesh, each node with a commit journal and a fault
// control file (the binary is built with -tags faultfs). A sampler asks
// every running node DescribeQuorum every 100 ms for the checker.
type Cluster struct {
	t     testing.TB
	opts  Options
	dir   string
	bin   string
	Mesh  *Mesh
	nodes map[int32]*Node
	IDs   []int32

	java, classpath string // for Options.Kafka nodes

	mu      sync.Mutex
	samples []Sample
	rounds  []*Round
	round   int
	dropped int64 // bytes PowerLoss cut off
	// reported are the violations checkRound reported (loop goroutine).
	reported map[string]bool
	stop     chan struct{}
	sampled  sync.WaitGroup
}

// Node is one process slot: it may be killed and restarted on the same
// port and data dir; its outputs are appended across runs.
type Node struct {
	ID                                 int32
	Port                               int
	DataDir                            string
	cfg, out, errLog, journal, control string
	ledger                             string // durable sizes (faultfs.SyncLedger)
	hosts                              string // a Kafka node's own name resolution

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	exitErr error
	paused  bool
	Runs    int
	kafka   bool // runs Kafka's TestRaftServer
}

var dirIDs = []string{"b8tRS7h4TJ2Vt43Dp85v2A", "Nkij_D9XRiYKNb41SiJo7Q", "4-e97nI7eHPYKfEDtW8rtQ", "J8aAPcfLQt2bqs1JT_rMgQ", "MkU3OEVBNTcwNTJENDM2Qg"}

// NewCluster prepares the nodes and their proxies (nothing runs yet); every
// process, proxy and the sampler are stopped in t.Cleanup, also on failure.
func NewCluster(t testing.TB, o Options) *Cluster {
	t.Helper()
	if o.Voters == 0 {
		o.Voters = 3
	}
	if o.Voters > len(dirIDs) {
		t.Fatalf("at most %d voters", len(dirIDs))
	}
	if o.Throughput == 0 {
		o.Throughput = 500
	}
	c := &Cluster{t: t, opts: o, dir: t.TempDir(), bin: Binary(t), Mesh: newMesh(), nodes: map[int32]*Node{}, stop: make(chan struct{}),
		reported: map[string]bool{}}
	if len(o.Kafka) > 0 || o.Controllers {
		env := kafkatest.Require(t)
		c.java, c.classpath = env.Java, env.Classpath()
	}
	n := o.Voters
	ports, err := freeport.Take(n)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		id := int32(i + 1)
		c.IDs = append(c.IDs, id)
		base := filepath.Join(c.dir, fmt.Sprintf("node%d", id))
		nd := &Node{ID: id, Port: ports[i], DataDir: base + "-data", cfg: base + ".properties", out: base + ".out",
			errLog: base + ".log", journal: base + ".journal", control: base + ".faultfs",
			ledger: base + ".synced", hosts: base + ".hosts"}
		if o.DataDir != nil {
			nd.DataDir = o.DataDir(id)
		}
		for _, k := range o.Kafka {
			nd.kafka = nd.kafka || k == id
		}
		c.nodes[id] = nd
	}
	t.Cleanup(c.shutdown)
	for _, a := range c.IDs {
		for _, b := range c.IDs {
			if a == b {
				continue
			}
			if err := c.Mesh.add(a, b, c.linkAddr(a, b), fmt.Sprintf("127.0.0.1:%d", c.nodes[b].Port)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, nd := range c.nodes {
		c.writeConfig(nd)
	}
	if o.Controllers {
		c.formatControllers()
	}
	for _, id := range c.IDs {
		c.sampled.Add(1)
		go c.sample(id)
	}
	return c
}

// Addressing: node j listens on 127.0.0.1 and advertises the name
// hostName(j). Node i reaches j only at linkAddr(i, j), where the proxy of
// link i->j listens: a kraftd node has that address in its
// controller.quorum.voters; a Kafka node names its peers by hostName and
// resolves each name to its own link's address (jdk.net.hosts.file), so
// the endpoint a Kafka leader advertises in BeginQuorumEpoch, which Kafka
// followers dial instead of their configured voter address, leads through
// the mesh too.

// linkAddr is where the proxy of link from->to listens: its own loopback
// address (all of 127/8 is local on Linux) at the port of node to.
func (c *Cluster) linkAddr(from, to int32) string {
	return fmt.Sprintf("127.1.%d.%d:%d", from, to, c.nodes[to].Port)
}

func hostName(id int32) string { return fmt.Sprintf("node%d.faults.test", id) }

// writeConfig writes node nd's properties (and a Kafka node's hosts file).
func (c *Cluster) writeConfig(nd *Node) {
	var voters []string
	for _, id := range c.IDs {
		addr := c.linkAddr(nd.ID, id)
		switch {
		case nd.kafka:
			addr = fmt.Sprintf("%s:%d", hostName(id), c.nodes[id].Port)
		case id == nd.ID:
			addr = fmt.Sprintf("127.0.0.1:%d", nd.Port)
		}
		voters = append(voters, fmt.Sprintf("%d@%s", id, addr))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "node.id=%d\nprocess.roles=controller\nlisteners=CONTROLLER://127.0.0.1:%d\n", nd.ID, nd.Port)
	fmt.Fprintf(&b, "advertised.listeners=CONTROLLER://%s:%d\n", hostName(nd.ID), nd.Port)
	fmt.Fprintf(&b, "controller.listener.names=CONTROLLER\ncontroller.quorum.voters=%s\nlog.dirs=%s\n", strings.Join(voters, ","), nd.DataDir)
	if nd.kafka {
		b.WriteString("listener.security.protocol.map=CONTROLLER:PLAINTEXT\n")
		c.writeHosts(nd)
	}
	props := append([]string(nil), nodeProps...)
	if c.opts.Controllers {
		props = append(props, controllerProps...)
		if !nd.kafka {
			// The suite judges kraftd as a raft voter beside Kafka's controllers:
			// no active side, leadership deferred to them, as it was written for.
			props = append(props, "kraftd.controller.leadership.deferral.enable=true")
		}
	}
	for _, p := range append(props, c.opts.Props...) {
		b.WriteString(p + "\n")
	}
	if err := os.WriteFile(nd.cfg, []byte(b.String()), 0o644); err != nil {
		c.t.Fatal(err)
	}
}

// writeHosts maps, for Kafka node nd, its own name to its listener and
// each peer's name to the address of nd's link to that peer.
func (c *Cluster) writeHosts(nd *Node) {
	local, _ := os.Hostname()
	b := fmt.Sprintf("127.0.0.1 localhost %s %s\n", local, hostName(nd.ID))
	for _, id := range c.IDs {
		if id != nd.ID {
			host, _, _ := strings.Cut(c.linkAddr(nd.ID, id), ":")
			b += fmt.Sprintf("%s %s\n", host, hostName(id))
		}
	}
	if err := os.WriteFile(nd.hosts, []byte(b), 0o644); err != nil {
		c.t.Fatal(err)
	}
}

// Node returns node id.
func (c *Cluster) Node(id int32) *Node { return c.nodes[id] }

// StartAll starts every node.
func (c *Cluster) StartAll() {
	for _, id := range c.IDs {
		c.Start(id)
	}
}

// Start starts node id (again), appending to its outputs.
func (c *Cluster) Start(id int32) {
	c.t.Helper()
	nd := c.nodes[id]
	out, err := os.OpenFile(nd.out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	errf, err := os.OpenFile(nd.errLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		out.Close()
		c.t.Fatal(err)
	}
	nd.mu.Lock()
	defer nd.mu.Unlock()
	nd.Runs++
	fmt.Fprintf(errf, "=== run %d\n", nd.Runs)
	var cmd *exec.Cmd
	switch {
	case nd.kafka && c.opts.Controllers:
		cmd = c.kafkaServerCommand(nd)
	case nd.kafka:
		cmd = c.kafkaCommand(nd)
	default:
		cmd = c.kraftdCommand(nd)
	}
	cmd.Stdout, cmd.Stderr = out, errf
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		out.Close()
		errf.Close()
		c.t.Fatal(err)
	}
	done := make(chan struct{})
	nd.cmd, nd.done, nd.paused, nd.exitErr = cmd, done, false, nil
	go func() {
		err := cmd.Wait()
		out.Close()
		errf.Close()
		nd.mu.Lock()
		nd.exitErr = err
		nd.mu.Unlock()
		close(done)
	}()
}

// kraftdCommand is node nd's test-kraft-server-start command line, its
// file layer following nd's control file.
func (c *Cluster) kraftdCommand(nd *Node) *exec.Cmd {
	cmd := exec.Command(c.bin, "test-kraft-server-start", "--config", nd.cfg, "--replica-directory-id", dirIDs[nd.ID-1],
		"--throughput", fmt.Sprint(c.opts.Throughput), "--record-size", "64", "--stats-json", "--stats-interval", "200ms",
		"--commit-journal", nd.journal, "--log-level", "info")
	if c.opts.Controllers {
		cmd = exec.Command(c.bin, "start", "--config", nd.cfg)
	}
	cmd.Args = append(cmd.Args, c.opts.Args...)
	cmd.Env = append(os.Environ(), "KRAFTD_FAULTFS="+nd.control, "KRAFTD_SYNC_LEDGER="+nd.ledger)
	return cmd
}

// Running reports whether node id's process is alive (paused counts).
func (c *Cluster) Running(id int32) bool {
	nd := c.nodes[id]
	nd.mu.Lock()
	done := nd.done
	nd.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// signal sends sig to node id's own pid (never a group or a name).
func (c *Cluster) signal(id int32, sig syscall.Signal) bool {
	nd := c.nodes[id]
	if !c.Running(id) {
		return false
	}
	nd.mu.Lock()
	pid := nd.cmd.Process.Pid
	nd.mu.Unlock()
	return syscall.Kill(pid, sig) == nil
}

// Kill sends SIGKILL to node id and waits for the exit.
func (c *Cluster) Kill(id int32) {
	c.t.Helper()
	if c.signal(id, syscall.SIGKILL) && !c.WaitExit(id, 10*time.Second) {
		c.t.Fatalf("node %d did not die of SIGKILL within 10s", id)
	}
}

// Pause stops node id with SIGSTOP; Resume continues it.
func (c *Cluster) Pause(id int32) {
	if c.signal(id, syscall.SIGSTOP) {
		c.setPaused(id, true)
	}
}

// Resume sends SIGCONT to node id.
func (c *Cluster) Resume(id int32) {
	if c.signal(id, syscall.SIGCONT) {
		c.setPaused(id, false)
	}
}

func (c *Cluster) setPaused(id int32, p bool) {
	nd := c.nodes[id]
	nd.mu.Lock()
	nd.paused = p
	nd.mu.Unlock()
}

// Term sends SIGTERM (graceful shutdown: a leader resigns and hands over).
func (c *Cluster) Term(id int32) { c.signal(id, syscall.SIGTERM) }

// WaitExit waits up to d for node id's process to exit.
func (c *Cluster) WaitExit(id int32, d time.Duration) bool {
	nd := c.nodes[id]
	nd.mu.Lock()
	done := nd.done
	nd.mu.Unlock()
	if done == nil {
		return true
	}
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// ExitErr is how node id's last run ended (nil: exit 0, or still running).
func (c *Cluster) ExitErr(id int32) error {
	nd := c.nodes[id]
	nd.mu.Lock()
	defer nd.mu.Unlock()
	return nd.exitErr
}

// SetDiskFaults replaces node id's fault control file (faultfs.ParseControl
// rules; "" clears them). The node picks it up within 20 ms; the file is
// replaced by a rename so it never reads half of it.
func (c *Cluster) SetDiskFaults(id int32, rules string) {
	c.t.Helper()
	nd := c.nodes[id]
	tmp := nd.control + ".tmp"
	if err := os.WriteFile(tmp, []byte(rules), 0o644); err != nil {
		c.t.Fatal(err)
	}
	if err := os.Rename(tmp, nd.control); err != nil {
		c.t.Fatal(err)
	}
}

// shutdown stops the sampler, kills every process still running (resuming
// paused ones is unneeded: SIGKILL ends a stopped process), the proxies,
// and on failure prints the tail of each node's log.
func (c *Cluster) shutdown() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	c.sampled.Wait()
	for _, id := range c.IDs {
		if c.signal(id, syscall.SIGKILL) {
			c.WaitExit(id, 10*time.Second)
		}
	}
	c.Mesh.close()
	if c.t.Failed() {
		for _, id := range c.IDs {
			b, _ := os.ReadFile(c.nodes[id].errLog)
			if len(b) > 8000 {
				b = b[len(b)-8000:]
			}
			c.t.Logf("==== node %d (%s) log (tail); last stats %+v\n%s", id, c.kind(id), c.lastStats(id), b)
		}
	}
}
