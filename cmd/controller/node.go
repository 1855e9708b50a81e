package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

// inboxSize bounds the run loop's inbound channel. Each inbound connection
// has at most one request in flight and each peer a handful of responses, so
// the channel only fills when the loop falls behind; then connection and
// peer goroutines wait (backpressure) instead of queueing without bound.
const inboxSize = 4096

// maxDrain is how many queued messages the loop steps before it polls the
// driver again, so timers stay punctual under load.
const maxDrain = 256

// nodeOptions is what a command hands to runNode.
type nodeOptions struct {
	cfg       *config.Config
	raft      raft.Config // identity filled by the command; endpoints filled here
	log       raft.Log
	store     raft.QuorumStateStore
	closeLog  func() error
	workload  *workload // nil under `start`
	lg        *zap.Logger
	signals   <-chan os.Signal
	exitNow   func(code int) // second signal; os.Exit in production
	shutdownT time.Duration  // bound on graceful shutdown
	// maintain runs on the loop every maintainEvery (log retention); nil =
	// none. An error is fatal like a log error in the driver.
	maintain      func(now time.Time) error
	maintainEvery time.Duration // 0 = defaultMaintainEvery
}

// defaultMaintainEvery is how often the loop runs log maintenance (Kafka's
// log cleaner period for the metadata log is 60 s).
const defaultMaintainEvery = 60 * time.Second

// statusSnapshot is what connection goroutines may read without the loop:
// published by the loop after each round (atomic pointer swap).
type statusSnapshot struct {
	status raft.Status
}

// node wires the network server, the peer client and the raft driver.
type node struct {
	o       nodeOptions
	lg      *zap.Logger
	cfg     *config.Config
	rcfg    raft.Config
	driver  *raft.Driver
	server  *network.Server
	peers   *network.Peers
	inbox   chan raft.Message
	stopped chan struct{} // closed when the loop exits: senders give up
	status  atomic.Pointer[statusSnapshot]
	// advertised endpoints by listener name (bound ports resolved).
	advertised map[string]raft.Endpoint

	warnMu sync.Mutex
	warned map[string]time.Time // rate limit of cluster id warnings
}

// reqRef routes a reply back to its connection. topicRename is set when the
// request's topic name was rewritten for the driver (DescribeQuorum for
// __cluster_metadata on a __raft_performance_test node) and the reply must
// carry the requested name again.
type reqRef struct {
	respond     func(kmsg.Response)
	topicRename string
	remote      string // for logs
	clusterID   string // the request's cluster id, for logs ("<null>" when absent)
}

// responseErrorCode is the top-level error code of a raft response (where
// INCONSISTENT_CLUSTER_ID is reported), 0 for other kinds.
func responseErrorCode(resp kmsg.Response) int16 {
	switch r := resp.(type) {
	case *kmsg.VoteResponse:
		return r.ErrorCode
	case *kmsg.BeginQuorumEpochResponse:
		return r.ErrorCode
	case *kmsg.EndQuorumEpochResponse:
		return r.ErrorCode
	case *kmsg.FetchResponse:
		return r.ErrorCode
	case *kmsg.FetchSnapshotResponse:
		return r.ErrorCode
	case *kmsg.AddRaftVoterResponse:
		return r.ErrorCode
	case *kmsg.RemoveRaftVoterResponse:
		return r.ErrorCode
	case *kmsg.UpdateRaftVoterResponse:
		return r.ErrorCode
	}
	return 0
}

// requestClusterID is a raft request's cluster id for logs.
func requestClusterID(req kmsg.Request) string {
	var p *string
	switch r := req.(type) {
	case *kmsg.VoteRequest:
		p = r.ClusterID
	case *kmsg.BeginQuorumEpochRequest:
		p = r.ClusterID
	case *kmsg.EndQuorumEpochRequest:
		p = r.ClusterID
	case *kmsg.FetchRequest:
		p = r.ClusterID
	case *kmsg.FetchSnapshotRequest:
		p = r.ClusterID
	}
	if p == nil {
		return "<null>"
	}
	return *p
}

// warnClusterID logs a cluster id refusal at most once per 10 s per key, so
// a misconfigured peer retrying every few ms does not flood the log.
func (n *node) warnClusterID(key, msg string, fields ...zap.Field) {
	now := time.Now()
	n.warnMu.Lock()
	last, ok := n.warned[key]
	if !ok || now.Sub(last) >= 10*time.Second {
		n.warned[key] = now
	} else {
		n.warnMu.Unlock()
		return
	}
	n.warnMu.Unlock()
	n.lg.Warn(msg, fields...)
}

// post hands a message to the loop; it waits while the inbox is full and
// gives up once the loop has stopped.
func (n *node) post(m raft.Message) bool {
	select {
	case n.inbox <- m:
		return true
	case <-n.stopped:
		return false
	}
}

// transport implements raft.Transport over network.Peers and the server's
// respond functions. Send and Reply never block: Peers.Send queues, respond
// queues on the connection's writer.
type transport struct{ n *node }

func (t transport) Send(o raft.Outbound) {
	t.n.peers.Send(o.To, o.Request, func(resp kmsg.Response, err error) {
		if err == nil && responseErrorCode(resp) == kerr.InconsistentClusterID.Code {
			t.n.warnClusterID(fmt.Sprintf("out:%d", o.To), "peer refused our request: INCONSISTENT_CLUSTER_ID (our cluster id differs from the quorum's; was this dir formatted for another cluster?)",
				zap.Int32("peer", o.To), zap.String("api", kmsg.NameForKey(o.Request.Key())), zap.String("our_cluster_id", t.n.rcfg.ClusterID))
		}
		t.n.post(raft.Message{From: o.To, Corr: o.Corr, Response: resp, Err: err})
	})
}

// LearnEndpoint implements raft.EndpointLearner: an address the driver
// learned from the wire (a leader's endpoints) becomes the node's address,
// so an observer configured only with bootstrap servers can reach the
// leader. A configured voter keeps its controller.quorum.voters address: the
// static configuration wins over what a peer advertises.
func (t transport) LearnEndpoint(id int32, host string, port int32) {
	if id < 0 || host == "" || port <= 0 || port > 65535 {
		return
	}
	for _, v := range t.n.rcfg.Voters {
		if v.ID == id && len(v.Endpoints) > 0 {
			return
		}
	}
	t.n.peers.SetAddress(id, net.JoinHostPort(host, strconv.Itoa(int(port))))
}

func (t transport) Reply(ref raft.RequestRef, resp kmsg.Response) {
	r, ok := ref.(*reqRef)
	if !ok {
		t.n.lg.Error("reply with a foreign request ref; dropped", zap.Any("ref", ref))
		return
	}
	if responseErrorCode(resp) == kerr.InconsistentClusterID.Code {
		t.n.warnClusterID("in:"+r.remote, "refused a request: INCONSISTENT_CLUSTER_ID (the sender's cluster id differs from ours)",
			zap.String("remote", r.remote), zap.String("api", kmsg.NameForKey(resp.Key())),
			zap.String("their_cluster_id", r.clusterID), zap.String("our_cluster_id", t.n.rcfg.ClusterID))
	}
	if r.topicRename != "" {
		if dq, ok := resp.(*kmsg.DescribeQuorumResponse); ok {
			for i := range dq.Topics {
				dq.Topics[i].Topic = r.topicRename
			}
		}
	}
	r.respond(resp)
}

// Handle routes raft requests into the run loop and answers DescribeCluster
// from the published status. It runs on the connection's reader goroutine.
func (n *node) Handle(c *network.ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	switch r := req.(type) {
	case *kmsg.DescribeClusterRequest:
		respond(n.describeCluster(c, r))
		return
	case *kmsg.VoteRequest, *kmsg.BeginQuorumEpochRequest, *kmsg.EndQuorumEpochRequest,
		*kmsg.FetchRequest, *kmsg.FetchSnapshotRequest,
		*kmsg.AddRaftVoterRequest, *kmsg.RemoveRaftVoterRequest, *kmsg.UpdateRaftVoterRequest:
		ref := &reqRef{respond: respond, remote: c.Remote.String(), clusterID: requestClusterID(req)}
		if !n.post(raft.Message{Request: req, Ref: ref}) {
			respond(nil) // shutting down: close the connection
		}
		return
	case *kmsg.DescribeQuorumRequest:
		ref := &reqRef{respond: respond}
		// kafka-metadata-quorum always asks for __cluster_metadata; a
		// node running the performance-test partition describes that one.
		if n.rcfg.TopicName != raft.MetadataTopicName && len(r.Topics) == 1 && r.Topics[0].Topic == raft.MetadataTopicName {
			r.Topics[0].Topic = n.rcfg.TopicName
			ref.topicRename = raft.MetadataTopicName
		}
		if !n.post(raft.Message{Request: req, Ref: ref}) {
			respond(nil)
		}
		return
	}
	// protocol.ParseRequest only yields the apis kraftd serves, all handled
	// above; anything else means the tables disagree: close the connection.
	n.lg.Warn("request for an api the node does not route; closing the connection",
		zap.Int16("api_key", hdr.APIKey), zap.Int16("api_version", hdr.APIVersion),
		zap.Stringer("remote", c.Remote))
	respond(nil)
}

// describeCluster answers as a Kafka controller does for
// kafka-metadata-quorum --bootstrap-controller (kraft-protocol.md 11).
func (n *node) describeCluster(c *network.ConnInfo, req *kmsg.DescribeClusterRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.EndpointType = 2
	endpointType := req.EndpointType
	if req.Version < 1 {
		endpointType = 1 // v0 asks for brokers
	}
	switch endpointType {
	case 2:
	case 1:
		resp.ErrorCode = kerr.MismatchedEndpointType.Code
		msg := "The request was sent to an endpoint of type CONTROLLER, but we wanted an endpoint of type BROKER"
		resp.ErrorMessage = &msg
		return resp
	default:
		if req.Version < 1 {
			resp.ErrorCode = kerr.InvalidRequest.Code
		} else {
			resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		}
		msg := fmt.Sprintf("unsupported endpoint type %d", endpointType)
		resp.ErrorMessage = &msg
		return resp
	}
	resp.ClusterID = n.rcfg.ClusterID
	st := n.status.Load()
	resp.ControllerID = -1
	for _, v := range n.rcfg.Voters {
		b := kmsg.NewDescribeClusterResponseBroker()
		b.NodeID = v.ID
		found := false
		if v.ID == n.rcfg.NodeID {
			if ep, ok := n.advertised[c.Listener]; ok {
				b.Host, b.Port, found = ep.Host, ep.Port, true
			}
		}
		if !found {
			for _, ep := range v.Endpoints {
				if ep.Name == c.Listener {
					b.Host, b.Port, found = ep.Host, ep.Port, true
				}
			}
		}
		if !found {
			continue
		}
		resp.Brokers = append(resp.Brokers, b)
		if st != nil && st.status.LeaderID == v.ID {
			resp.ControllerID = v.ID
		}
	}
	return resp
}

// raftConfig maps the validated properties onto raft.Config.
func raftConfig(cfg *config.Config) raft.Config {
	rc := raft.DefaultConfig()
	rc.NodeID = cfg.NodeID
	rc.ListenerName = cfg.RaftListener()
	for _, v := range cfg.Voters {
		rc.Voters = append(rc.Voters, raft.Voter{ID: v.ID, Endpoints: []raft.Endpoint{{Name: rc.ListenerName, Host: v.Host, Port: int32(v.Port)}}})
	}
	for _, b := range cfg.BootstrapServers {
		rc.Bootstrap = append(rc.Bootstrap, raft.Endpoint{Host: b.Host, Port: int32(b.Port)})
	}
	rc.ElectionTimeout = cfg.ElectionTimeout
	rc.ElectionBackoffMax = cfg.ElectionBackoffMax
	rc.FetchTimeout = cfg.FetchTimeout
	rc.RequestTimeout = cfg.RequestTimeout
	rc.AppendLinger = cfg.AppendLinger
	rc.RetryBackoff = cfg.RetryBackoff
	// A batch must fit in one segment (the log refuses larger ones, as Kafka's does). Kafka's
	// 8 MiB segment minimum guarantees it; with metadata.log.segment.min.bytes lowered, the
	// leader's batches are capped at the segment size instead.
	if cfg.SegmentBytes < int64(rc.MaxBatchBytes) {
		rc.MaxBatchBytes = int(cfg.SegmentBytes)
	}
	return rc
}

// advertisedEndpoints resolves this node's controller endpoints: advertised
// host (or the bind host, or the machine's name when binding all addresses)
// and the bound port when the configured one is 0.
func advertisedEndpoints(cfg *config.Config, bound map[string]net.Addr) []raft.Endpoint {
	var out []raft.Endpoint
	for _, ep := range cfg.AdvertisedControllerListeners() {
		host, port := ep.Host, ep.Port
		if port == 0 {
			if a, ok := bound[ep.Name].(*net.TCPAddr); ok {
				port = a.Port
			}
		}
		if host == "" || host == "0.0.0.0" || host == "::" {
			if h, err := os.Hostname(); err == nil {
				host = h
			} else {
				host = "localhost"
			}
		}
		out = append(out, raft.Endpoint{Name: ep.Name, Host: host, Port: int32(port)})
	}
	return out
}

func newRNG() *mrand.Rand {
	var seed [16]byte
	_, _ = rand.Read(seed[:])
	return mrand.New(mrand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:])))
}

// errSecondSignal reports a forced exit.
var errSecondSignal = errors.New("second signal: exiting without finishing shutdown")

// runNode starts the server and the peers and runs the loop until shutdown
// or a fatal error.
func runNode(o nodeOptions) (err error) {
	n := &node{
		o: o, lg: o.lg, cfg: o.cfg, rcfg: o.raft,
		inbox:      make(chan raft.Message, inboxSize),
		stopped:    make(chan struct{}),
		advertised: map[string]raft.Endpoint{},
		warned:     map[string]time.Time{},
	}
	var listeners []network.ListenerConfig
	for _, l := range o.cfg.Listeners {
		listeners = append(listeners, network.ListenerConfig{Name: l.Name, Addr: l.HostPort()})
	}
	n.server, err = network.NewServer(network.ServerConfig{
		Listeners:    listeners,
		MaxFrameSize: o.cfg.SocketRequestMaxBytes,
		IdleTimeout:  o.cfg.ConnectionsMaxIdle,
		Logger:       o.lg.Named("network"),
	}, n)
	if err != nil {
		return err
	}
	if err := n.server.Start(); err != nil {
		return fmt.Errorf("start listeners: %w", err)
	}
	bound := n.server.Addrs()
	n.rcfg.Endpoints = advertisedEndpoints(o.cfg, bound)
	for _, ep := range n.rcfg.Endpoints {
		n.advertised[ep.Name] = ep
	}

	n.peers = network.NewPeers(network.PeerConfig{
		ClientID:            "raft-client-" + strconv.Itoa(int(o.cfg.NodeID)),
		RequestTimeout:      o.cfg.RequestTimeout,
		ReconnectBackoff:    50 * time.Millisecond,
		ReconnectBackoffMax: 500 * time.Millisecond,
		Logger:              o.lg.Named("peers"),
	})
	for _, v := range n.rcfg.Voters {
		if v.ID == n.rcfg.NodeID {
			continue
		}
		n.peers.SetAddress(v.ID, net.JoinHostPort(v.Endpoints[0].Host, strconv.Itoa(int(v.Endpoints[0].Port))))
	}
	for i, b := range n.rcfg.Bootstrap {
		n.peers.SetAddress(int32(-2-i), net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))))
	}

	defer func() {
		close(n.stopped)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		if serr := n.server.Shutdown(ctx); serr != nil {
			o.lg.Warn("network shutdown", zap.Error(serr))
		}
		cancel()
		n.peers.Close()
		if cerr := o.closeLog(); cerr != nil {
			o.lg.Error("close log", zap.Error(cerr))
			if err == nil {
				err = cerr
			}
		}
	}()

	n.driver, err = raft.NewDriver(n.rcfg, o.log, o.store, transport{n}, newRNG(), o.lg.Named("raft"), time.Now())
	if err != nil {
		return fmt.Errorf("start raft: %w", err)
	}
	if o.workload != nil {
		o.workload.driver = n.driver
		n.driver.Register(o.workload)
	} else {
		n.driver.Register(&leaderLogger{})
	}
	return n.loop()
}

// loop is the only goroutine that calls the driver, the log and the
// workload. Each round: poll due timers, let the workload append, publish
// the status, then wait for the earliest of: an inbound message, the
// driver's next deadline, the workload's next append or stats tick, a
// signal.
func (n *node) loop() error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var (
		prev          raft.Status
		first         = true
		shuttingDown  bool
		shutdownUntil time.Time
	)
	w := n.o.workload
	maintainEvery := n.o.maintainEvery
	if maintainEvery <= 0 {
		maintainEvery = defaultMaintainEvery
	}
	nextMaintain := time.Now().Add(maintainEvery)
	for {
		now := time.Now()
		if n.o.maintain != nil && !now.Before(nextMaintain) {
			if err := n.o.maintain(now); err != nil {
				return n.fatal("log maintenance", err)
			}
			nextMaintain = now.Add(maintainEvery)
		}
		next, err := n.driver.Poll(now)
		if err != nil {
			return n.fatal("poll", err)
		}
		st := n.driver.Status()
		if first || st.Role != prev.Role || st.Epoch != prev.Epoch || st.LeaderID != prev.LeaderID {
			n.logTransition(prev, st, first)
			n.status.Store(&statusSnapshot{status: st})
			first = false
			prev = st
		} else if st.HighWatermark != prev.HighWatermark || st.LogEndOffset != prev.LogEndOffset {
			n.status.Store(&statusSnapshot{status: st})
			prev = st
		}
		if w != nil && !shuttingDown {
			wn := w.tick(now, st)
			// Appends may have moved the driver's deadline (linger).
			next = n.driver.Next()
			if wn.Before(next) {
				next = wn
			}
		}
		if shuttingDown {
			if n.driver.Done() {
				n.lg.Info("graceful shutdown complete", zap.Int32("epoch", st.Epoch))
				return nil
			}
			if !now.Before(shutdownUntil) {
				n.lg.Warn("graceful shutdown did not finish in time; closing", zap.Duration("bound", n.o.shutdownT))
				return nil
			}
			if shutdownUntil.Before(next) {
				next = shutdownUntil
			}
		}
		if n.o.maintain != nil && nextMaintain.Before(next) {
			next = nextMaintain
		}
		d := next.Sub(now)
		if d < 0 {
			d = 0
		}
		timer.Reset(d)
		select {
		case m := <-n.inbox:
			if err := n.driver.Step(time.Now(), m); err != nil {
				return n.fatal("step", err)
			}
			// Drain what else is queued before polling again.
		drain:
			for i := 0; i < maxDrain; i++ {
				select {
				case m := <-n.inbox:
					if err := n.driver.Step(time.Now(), m); err != nil {
						return n.fatal("step", err)
					}
				default:
					break drain
				}
			}
		case <-timer.C:
		case sig := <-n.o.signals:
			if shuttingDown {
				n.lg.Warn("second signal: exiting at once", zap.Stringer("signal", sig))
				n.o.exitNow(1)
				return errSecondSignal
			}
			shuttingDown = true
			shutdownUntil = time.Now().Add(n.o.shutdownT)
			n.lg.Info("signal received: shutting down gracefully (a second signal exits at once)",
				zap.Stringer("signal", sig), zap.Int32("epoch", st.Epoch),
				zap.Stringer("role", st.Role))
			n.driver.Shutdown(time.Now())
		}
		// Stop the timer without racing a fired value into the next round.
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

func (n *node) fatal(op string, err error) error {
	st := n.driver.Status()
	n.lg.Error("fatal raft error: stopping the node", zap.String("op", op), zap.Error(err),
		zap.Int32("epoch", st.Epoch), zap.Stringer("role", st.Role))
	return fmt.Errorf("raft %s: %w", op, err)
}

// logTransition writes one line per state transition, epoch change or
// leader change.
func (n *node) logTransition(prev, st raft.Status, first bool) {
	fields := []zap.Field{zap.Int32("epoch", st.Epoch),
		zap.Int32("leader_id", st.LeaderID), zap.Stringer("role", st.Role),
		zap.Int64("high_watermark", st.HighWatermark), zap.Int64("log_end_offset", st.LogEndOffset)}
	if first {
		n.lg.Info("initial quorum state", fields...)
		return
	}
	what := "state transition"
	level := zap.InfoLevel
	switch {
	case st.Role != prev.Role:
		fields = append(fields, zap.String("transition", prev.Role.String()+" -> "+st.Role.String()))
		if st.Epoch == prev.Epoch && st.LeaderID == prev.LeaderID {
			// The raft core logs every role transition itself.
			level = zap.DebugLevel
		}
	case st.Epoch != prev.Epoch:
		what = "epoch change"
	default:
		what = "leader change"
	}
	if st.Epoch != prev.Epoch {
		fields = append(fields, zap.Int32("previous_epoch", prev.Epoch))
	}
	if st.LeaderID != prev.LeaderID {
		fields = append(fields, zap.Int32("previous_leader_id", prev.LeaderID))
	}
	if ce := n.lg.Check(level, what); ce != nil {
		ce.Write(fields...)
	}
}

// leaderLogger is the listener of a `start` node: the metadata records are
// not interpreted (kraftd is not a Kafka controller state machine).
type leaderLogger struct{}

func (leaderLogger) HandleCommit([]raft.CommittedBatch)                          {}
func (leaderLogger) HandleLoadSnapshot(raft.OffsetAndEpoch, raft.SnapshotReader) {}
func (leaderLogger) HandleLeaderChange(raft.LeaderAndEpoch)                      {}
func (leaderLogger) BeginShutdown()                                              {}
