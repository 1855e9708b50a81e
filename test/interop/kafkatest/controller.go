package kafkatest

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kraftd/kraftd/topics"
	"github.com/kraftd/kraftd/uuid"
)

// ControllerConfig describes a Kafka KRaft controller (kafka.Kafka, process.roles=controller)
// listening on 127.0.0.1.
type ControllerConfig struct {
	NodeID    int32  // node.id
	ClusterID string // formatted cluster id; NewUUID() when empty
	Port      int    // controller listener port; FreePort when 0
	// Voters are controller.quorum.voters entries (id@host:port). When both Voters and
	// BootstrapServers are empty the controller is the single static voter of its own quorum.
	Voters           []string
	BootstrapServers []string // controller.quorum.bootstrap.servers (host:port)
	FormatArgs       []string // extra `kafka-storage format` flags (--standalone, -I ...)
	NoFormat         bool     // the log dir is already formatted (e.g. by kraftd)
	Dir              string   // log dir; a fresh t.TempDir() when empty
	Props            Props    // extra or overriding server properties
	Log4jLevels      map[string]string
	JVMFlags         []string // replace the default JVM flags
}

// Controller is a running Kafka controller.
type Controller struct {
	Server
	DirectoryID  string // directory.id from meta.properties (after format)
	FormatOutput string
}

// ControllerListener is the listener name the helpers give controllers.
const ControllerListener = "CONTROLLER"

// ControllerProps returns the server properties StartController writes for cfg (after
// defaults are filled in), so a test can reuse them, e.g. for kraftd's own format.
func ControllerProps(cfg ControllerConfig, dir string) Props {
	voters := strings.Join(cfg.Voters, ",")
	if len(cfg.Voters) == 0 && len(cfg.BootstrapServers) == 0 {
		voters = Voter(cfg.NodeID, "127.0.0.1:"+strconv.Itoa(cfg.Port))
	}
	p := Props{
		"process.roles":                         "controller",
		"node.id":                               strconv.Itoa(int(cfg.NodeID)),
		"listeners":                             fmt.Sprintf("%s://127.0.0.1:%d", ControllerListener, cfg.Port),
		"controller.listener.names":             ControllerListener,
		"listener.security.protocol.map":        ControllerListener + ":PLAINTEXT",
		"log.dirs":                              dir,
		"num.network.threads":                   "1",
		"num.io.threads":                        "2",
		"background.threads":                    "2",
		"controller.quorum.election.timeout.ms": "1000",
	}
	if voters != "" {
		p["controller.quorum.voters"] = voters
	}
	if len(cfg.BootstrapServers) > 0 {
		p["controller.quorum.bootstrap.servers"] = strings.Join(cfg.BootstrapServers, ",")
	}
	return p.Merge(cfg.Props)
}

// StartController formats a log dir with Kafka's storage tool (unless NoFormat), starts
// kafka.Kafka as a controller and waits until its listener accepts connections. The
// controller is stopped (SIGTERM, then SIGKILL) when the test ends; its log is dumped if the
// test failed. Failures are fatal to the test.
func (e *Env) StartController(t testing.TB, cfg ControllerConfig) *Controller {
	t.Helper()
	return e.StartControllers(t, cfg)[0]
}

// StartControllers starts several controllers as StartController does, formatting and
// starting them all at once (each JVM takes seconds to start) before waiting for each to
// listen. A config without a ClusterID gets the first config's.
func (e *Env) StartControllers(t testing.TB, cfgs ...ControllerConfig) []*Controller {
	t.Helper()
	specs := make([]serverSpec, len(cfgs))
	for i := range cfgs {
		if cfgs[i].NodeID < 0 {
			t.Fatalf("kafkatest: controller node id %d < 0", cfgs[i].NodeID)
		}
		if cfgs[i].ClusterID == "" {
			cfgs[i].ClusterID = cfgs[0].ClusterID
		}
		if cfgs[i].ClusterID == "" {
			cfgs[i].ClusterID = NewUUID()
			cfgs[0].ClusterID = cfgs[i].ClusterID
		}
		if cfgs[i].Port == 0 {
			cfgs[i].Port = FreePort(t)
		}
		specs[i] = controllerSpec(cfgs[i])
	}
	servers, outs, err := e.prepareServers(t, specs)
	if err != nil {
		t.Fatal(err)
	}
	cs := make([]*Controller, len(cfgs))
	for i, srv := range servers {
		cs[i] = &Controller{Server: *srv, FormatOutput: outs[i]}
		if meta, err := MetaProperties(srv.LogDir); err == nil {
			cs[i].DirectoryID = meta["directory.id"]
		}
		if err := e.launch(t, &cs[i].Server, specs[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cs {
		if err := c.waitListening(c.Addr, StartTimeout); err != nil {
			c.DumpLog(80)
			t.Fatal(err)
		}
	}
	return cs
}

// controllerSpec is how StartControllers formats and starts cfg.
func controllerSpec(cfg ControllerConfig) serverSpec {
	flags := cfg.JVMFlags
	if flags == nil {
		flags = serverJVMFlags
	}
	return serverSpec{role: "controller", nodeID: cfg.NodeID, clusterID: cfg.ClusterID, port: cfg.Port, dir: cfg.Dir,
		props: func(dir string) Props { return ControllerProps(cfg, dir) }, noFormat: cfg.NoFormat,
		formatArgs: cfg.FormatArgs, log4j: cfg.Log4jLevels, jvmFlags: flags}
}

// RaftServerConfig describes a kafka.tools.TestRaftServer node (topic
// __raft_performance_test, cluster id AAAAAAAAAAAAAAAAAAAAAA; no format needed).
type RaftServerConfig struct {
	NodeID           int32
	Port             int      // FreePort when 0
	Voters           []string // controller.quorum.voters; self only when empty (and no bootstrap)
	BootstrapServers []string
	DirectoryID      string // --replica-directory-id; NewUUID() when empty
	Throughput       int    // --throughput records/s (0: tool default); Kafka 4.4 may ignore it
	RecordSize       int    // --record-size bytes (0: tool default)
	Dir              string // log dir; fresh when empty
	Props            Props
	Log4jLevels      map[string]string
	JVMFlags         []string
}

// RaftServer is a running TestRaftServer.
type RaftServer struct {
	*Process
	NodeID       int32
	Port         int
	Addr         string
	LogDir       string
	PartitionDir string // LogDir/__raft_performance_test-0
	DirectoryID  string
	ConfigPath   string
}

// RaftTestClusterID is TestRaftServer's fixed cluster id (TestRaftServer.scala:
// Uuid.ZERO_UUID), which peers must use too; its partition is
// topics.RaftPerformanceTest.
var RaftTestClusterID = uuid.Zero.String()

// StartTestRaftServer starts kafka.tools.TestRaftServer and waits until it listens. It is
// stopped when the test ends.
func (e *Env) StartTestRaftServer(t testing.TB, cfg RaftServerConfig) *RaftServer {
	t.Helper()
	if cfg.Port == 0 {
		cfg.Port = FreePort(t)
	}
	if cfg.DirectoryID == "" {
		cfg.DirectoryID = NewUUID()
	}
	work := t.TempDir()
	dir := cfg.Dir
	if dir == "" {
		dir = filepath.Join(work, "data")
	}
	s := &RaftServer{
		NodeID: cfg.NodeID, Port: cfg.Port,
		Addr:   net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.Port)),
		LogDir: dir, PartitionDir: topics.PartitionDir(dir, topics.RaftPerformanceTest),
		DirectoryID: cfg.DirectoryID, ConfigPath: filepath.Join(work, "raft.properties"),
	}
	props := ControllerProps(ControllerConfig{NodeID: cfg.NodeID, Port: cfg.Port, Voters: cfg.Voters, BootstrapServers: cfg.BootstrapServers}, dir)
	props.Merge(cfg.Props)
	if err := props.WriteFile(s.ConfigPath); err != nil {
		t.Fatal(err)
	}
	args := []string{"--config", s.ConfigPath, "--replica-directory-id", cfg.DirectoryID}
	if cfg.Throughput > 0 {
		args = append(args, "--throughput", strconv.Itoa(cfg.Throughput))
	}
	if cfg.RecordSize > 0 {
		args = append(args, "--record-size", strconv.Itoa(cfg.RecordSize))
	}
	log4j, err := e.serverLog4jFile(work, cfg.Log4jLevels)
	if err != nil {
		t.Fatal(err)
	}
	flags := cfg.JVMFlags
	if flags == nil {
		flags = serverJVMFlags
	}
	p, err := e.startJVM(t, fmt.Sprintf("kafka-test-raft-server-%d", cfg.NodeID), work, flags, log4j, ClassTestRaftServer, args...)
	if err != nil {
		t.Fatal(err)
	}
	s.Process = p
	if err := p.waitListening(s.Addr, StartTimeout); err != nil {
		p.DumpLog(80)
		t.Fatal(err)
	}
	return s
}
