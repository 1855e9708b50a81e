package node

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/logging"
	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/osched"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/security"
	"github.com/kraftd/kraftd/topics"
)

// inboxSize bounds the run loop's inbound channel. Each inbound connection
// has at most one request in flight and each peer a handful of responses, so
// the channel only fills when the loop falls behind or a flood of
// connections outruns it. Then a request closes its connection rather than
// wait (any host can open connections), while a response to one of our own
// requests, bounded by what the driver sent, waits for room.
const inboxSize = 4096

// Connections to other controllers (the raft client's and the
// registration channel's) reconnect as KafkaRaftManager's: after 50 ms,
// doubling up to 500 ms (Kafka's clients default to 1 s).
const (
	peerReconnectBackoff    = 50 * time.Millisecond
	peerReconnectBackoffMax = 500 * time.Millisecond
)

// DefaultMaintainEvery is how often the loop applies log retention (Kafka's
// log cleaner period for the metadata log is 60 s).
const DefaultMaintainEvery = 60 * time.Second

// Options are a node's identity and what runs beside the raft driver.
type Options struct {
	ClusterID   string
	DirectoryID [16]byte // this replica's directory id
	TopicName   string   // topics.ClusterMetadata or topics.RaftPerformanceTest
	TopicID     [16]byte

	// App interprets committed records and may append; nil runs a node that
	// appends nothing and ignores what it commits.
	App Application

	Logger *zap.Logger
	// ShutdownTimeout bounds the graceful shutdown (resign, hand over,
	// flush) once Run's context is done; must be positive.
	ShutdownTimeout time.Duration
	// MaintainEvery is how often log retention runs; 0 = DefaultMaintainEvery.
	MaintainEvery time.Duration
}

// Node is a running quorum member: the network server, the peer client, the
// raft driver over the metadata log, and the run loop that owns the driver.
type Node struct {
	cfg *config.Config
	o   Options
	lg  *zap.Logger
	// remote logs what a peer's input causes, rate-limited (package logging).
	remote *zap.Logger
	rcfg   raft.Config // endpoints filled in by Run once the listeners are bound

	driver   *raft.Driver
	scram    *security.ScramStore // SCRAM credentials of the SASL listeners; nil without SCRAM
	outbound *security.ClientSide // TLS and SASL of connections to other controllers; nil: PLAINTEXT
	log      *metadatalog.Log
	server   *network.Server
	peers    *network.Peers
	inbox    chan raft.Message
	flushed  chan flushDone // leader fsyncs that ran off the loop (flush.go)
	stopped  chan struct{}  // closed when the loop exits: senders give up
	// status is what connection goroutines may read without the loop:
	// published by the loop after each round that changed it.
	status atomic.Pointer[raft.Status]
	// doing is what the loop goroutine is doing, for the fatal line of a
	// panic; only that goroutine touches it.
	doing activity
	// advertised holds the endpoints by listener name (bound ports
	// resolved). The listeners accept as soon as they are bound, before
	// it is known: Run sets it once and then closes ready, and connection
	// goroutines read it only after ready is closed.
	advertised map[string]raft.Endpoint
	ready      chan struct{}
	// reg registers this controller with a Kafka active controller
	// (registration.go); nil when the node does not register.
	reg *registrar
	// ctrls are the peers that can act as the active controller
	// (deferral.go); nil without leadership deferral.
	ctrls *controllers
	// snap is the snapshot being written off the loop (snapshot.go); loop
	// only.
	snap *snapshotting
	// obs holds the metrics and health endpoints (metrics.go).
	obs observed
	// apis is every api the node serves (apis.go), routes how the node
	// serves each one the server hands it; both fixed by New.
	apis   *protocol.Table
	routes *routes
	// ctrl is the application when it can be the active controller, and
	// ctrlq the controller requests waiting for the loop (controller.go);
	// nil otherwise.
	ctrl  Controller
	ctrlq chan ControllerRequest
}

// New checks the options and prepares a node; it touches no file or socket.
func New(cfg *config.Config, o Options) (*Node, error) {
	if o.ShutdownTimeout <= 0 {
		return nil, fmt.Errorf("node: shutdown timeout %v: must be positive", o.ShutdownTimeout)
	}
	if o.TopicName == "" {
		return nil, errors.New("node: no topic name")
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.MaintainEvery <= 0 {
		o.MaintainEvery = DefaultMaintainEvery
	}
	rc := raftConfig(cfg)
	rc.ClusterID, rc.DirectoryID = o.ClusterID, o.DirectoryID
	rc.TopicName, rc.TopicID = o.TopicName, o.TopicID
	rc.ShutdownTimeout = o.ShutdownTimeout
	// Only the metadata log has Kafka controllers to defer to;
	// test-kraft-server-start's partition keeps normal leadership.
	rc.DeferLeadership = cfg.DeferLeadership && o.TopicName == topics.ClusterMetadata
	n := &Node{
		cfg: cfg, o: o, lg: o.Logger, remote: logging.Remote(o.Logger), rcfg: rc,
		inbox:   make(chan raft.Message, inboxSize),
		flushed: make(chan flushDone, 1),
		stopped: make(chan struct{}),
		ready:   make(chan struct{}),
		apis:    Apis(),
		routes:  newRoutes(),
	}
	if rc.DeferLeadership {
		n.ctrls = newControllers()
	}
	if c, ok := o.App.(Controller); ok && c.CanBeActive() {
		n.ctrl, n.ctrlq = c, make(chan ControllerRequest, controllerQueue)
	}
	return n, nil
}

// Status is the raft status as of the loop's latest round; false before the
// first round.
func (n *Node) Status() (raft.Status, bool) {
	if st := n.status.Load(); st != nil {
		return *st, true
	}
	return raft.Status{}, false
}

// Run locks and opens the metadata log, binds the listeners and runs the
// loop. When ctx is done the node shuts down gracefully (a leader resigns
// and hands over), bounded by ShutdownTimeout; Run returns then, or at once
// on a fatal log or raft error or a panic on the loop (see panicked). Run
// is called once.
func (n *Node) Run(ctx context.Context) (err error) {
	partDir := topics.PartitionDir(n.cfg.MetadataLogDir, n.rcfg.TopicName)
	unlock, err := lockDir(n.cfg.MetadataLogDir)
	if err != nil {
		return err
	}
	defer unlock()
	l, store, err := openStorage(partDir, n.cfg, n.rcfg.TopicID, n.lg.Named("log"))
	if err != nil {
		return err
	}
	n.log = l
	defer func() {
		if cerr := l.Close(); cerr != nil {
			n.lg.Error("close log", zap.Error(cerr))
			if err == nil {
				err = cerr
			}
		}
	}()
	n.lg.Info("starting", zap.String("cluster_id", n.rcfg.ClusterID), zap.String("topic", n.rcfg.TopicName),
		zap.String("log_dir", partDir), zap.Bool("voter", n.cfg.IsVoter()),
		zap.Duration("election_timeout", n.rcfg.ElectionTimeout), zap.Duration("append_linger", n.rcfg.AppendLinger),
		zap.Bool("leadership_deferral", n.rcfg.DeferLeadership))
	if d := n.cfg.SchedulerSlice; d > 0 {
		// Before the network and the loop start their threads, which inherit it.
		if err := osched.SetSlice(d); err != nil {
			n.lg.Info("the CPU scheduler slice is the kernel's", zap.Duration("asked", d), zap.Error(err))
		}
	}
	n.newMetrics()
	if err := n.startNetwork(); err != nil {
		return err
	}
	defer n.stopNetwork()
	if err := n.startMetrics(); err != nil {
		return err
	}
	defer n.stopMetrics()
	// Registered last, so it runs first: the network and the log then
	// close as after any fatal error.
	defer func() {
		if r := recover(); r != nil {
			err = n.panicked(r)
		}
	}()
	n.doing = activity{op: "start"}
	var rl raft.Log = l
	if m := n.obs.m; m != nil {
		rl = timedLog{Log: l, r: m.Raft()}
		n.rcfg.Observer = m.Raft()
	}
	if n.cfg.DeferLeaderFsync {
		n.rcfg.Flusher = n.flushOffLoop
	}
	n.driver, err = raft.NewDriver(n.rcfg, rl, store, transport{n}, newRNG(), n.lg.Named("raft"), time.Now())
	if err != nil {
		return fmt.Errorf("start raft: %w", err)
	}
	if n.o.App != nil {
		n.driver.Register(n.o.App)
	} else {
		n.driver.Register(ignoreCommits{})
	}
	if n.registrationEnabled() {
		n.reg = n.newRegistrar()
		if n.ctrl != nil {
			// The active controller registers itself as Kafka's do (their
			// registration manager sends to the active controller, itself
			// included); the loop has not started, so this is safe.
			n.ctrl.SetRegistration(n.reg.request())
		}
		regCtx, stopReg := context.WithCancel(context.Background())
		regDone := make(chan struct{})
		go func() {
			defer close(regDone)
			n.reg.run(regCtx)
		}()
		defer func() { stopReg(); <-regDone }()
	}
	if n.scram != nil {
		n.driver.Register(scramListener{store: n.scram, lg: n.remote})
	}
	return n.loop(ctx)
}

// startNetwork binds the listeners, learns the advertised endpoints from the
// bound ports and publishes them to the handler, and points the peer client at the voters and bootstrap
// servers.
func (n *Node) startNetwork() (err error) {
	sides, client, scram, err := n.buildSecurity()
	if err != nil {
		return err
	}
	n.scram, n.outbound = scram, client
	var listeners []network.ListenerConfig
	for _, l := range n.cfg.Listeners {
		listeners = append(listeners, network.ListenerConfig{Name: l.Name, Addr: l.HostPort(), Security: sides[l.Name]})
	}
	sc := serverConfig(n.cfg, listeners)
	sc.Apis = n.apis
	sc.FinalizedKRaftVersion = func() int16 {
		st, _ := n.Status()
		return st.KRaftVersion
	}
	if n.ctrl != nil {
		sc.ControllerFeatures = n.ctrl.FinalizedFeatures
	}
	sc.Logger = n.lg.Named("network")
	if n.obs.m != nil {
		sc.OnRequest = n.obs.m.OnRequest
	}
	n.server, err = network.NewServer(sc, n)
	if err != nil {
		return err
	}
	if err := n.server.Start(); err != nil {
		return fmt.Errorf("start listeners: %w", err)
	}
	n.rcfg.Endpoints = advertisedEndpoints(n.cfg, n.server.Addrs())
	advertised := make(map[string]raft.Endpoint, len(n.rcfg.Endpoints))
	for _, ep := range n.rcfg.Endpoints {
		advertised[ep.Name] = ep
	}
	n.advertised = advertised
	close(n.ready)
	pc := network.PeerConfig{
		ClientID:            "raft-client-" + strconv.Itoa(int(n.cfg.NodeID)),
		Apis:                n.apis,
		RequestTimeout:      n.cfg.RequestTimeout,
		ReconnectBackoff:    peerReconnectBackoff,
		ReconnectBackoffMax: peerReconnectBackoffMax,
		Security:            client,
		Logger:              n.lg.Named("peers"),
	}
	if n.ctrls != nil {
		pc.OnConnect = n.ctrls.connected
	}
	n.peers = network.NewPeers(pc)
	for _, v := range n.rcfg.Voters {
		if v.ID != n.rcfg.NodeID {
			n.peers.SetAddress(v.ID, net.JoinHostPort(v.Endpoints[0].Host, strconv.Itoa(int(v.Endpoints[0].Port))))
		}
	}
	// Bootstrap servers have no node id yet: they get ids below -1.
	for i, b := range n.rcfg.Bootstrap {
		n.peers.SetAddress(int32(-2-i), net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))))
	}
	return nil
}

func (n *Node) stopNetwork() {
	close(n.stopped)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := n.server.Shutdown(ctx); err != nil {
		n.lg.Warn("network shutdown", zap.Error(err))
	}
	n.peers.Close()
}

func newRNG() *mrand.Rand {
	var seed [16]byte
	_, _ = rand.Read(seed[:])
	return mrand.New(mrand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:])))
}

// ignoreCommits is the listener of a node without an application: the
// metadata records are not interpreted (kraftd is not a Kafka controller
// state machine).
type ignoreCommits struct{}

func (ignoreCommits) HandleCommit([]raft.CommittedBatch)                          {}
func (ignoreCommits) HandleLoadSnapshot(raft.OffsetAndEpoch, raft.SnapshotReader) {}
func (ignoreCommits) HandleLeaderChange(raft.LeaderAndEpoch)                      {}
func (ignoreCommits) BeginShutdown()                                              {}
