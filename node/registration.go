package node

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/security"
	"github.com/kraftd/kraftd/topics"
	"github.com/kraftd/kraftd/uuid"
)

// Controller registration (KIP-919). A Kafka 4.4 controller sends
// ControllerRegistration to the active controller, and the active controller
// writes a RegisterControllerRecord. Kafka's UpdateFeatures checks every
// finalized level against each voter's registered ranges and refuses a voter
// with no registration ("controller N has not registered, and may not support
// this feature"): without a registration a JVM leader never upgrades
// kraft.version, and its DescribeCluster never lists the kraftd controllers.
//
// What Kafka 4.4 does (kafka-server-4.4.0.jar,
// org.apache.kafka.server.controller.ControllerRegistrationManager; kafka_2.13
// kafka.server.ControllerApis; kafka-metadata ClusterControlManager): the
// request carries the node id, an incarnation id drawn at each start, the
// advertised controller listeners with their security protocols,
// ZkMigrationReady false and QuorumFeatures.defaultSupportedFeatureMap; it is
// sent to the raft leader's endpoint on the first controller listener over a
// connection of its own, once the metadata image has a metadata.version that
// supports registration, and again after each failure, backing off
// exponentially from 100 ms to 120 s (x2, 2 % jitter), until the node finds
// its registration (its incarnation) in the metadata log. The active
// controller checks only CLUSTER_ACTION and that its metadata.version supports
// registration (UNSUPPORTED_VERSION otherwise; NOT_CONTROLLER from a
// controller that is not active); the feature ranges are checked later, by
// UpdateFeatures.
//
// kraftd does not read the metadata log, so it cannot see its registration
// there: it registers once per leader epoch instead (a new leader replays
// the earlier registration; registering again costs one record), while
// another node leads. It cannot see metadata.version either, so it sends at
// once and treats UNSUPPORTED_VERSION (a leader without a finalized
// metadata.version) as a reason to retry.

// Kafka 4.4's registration backoff (ExponentialBackoff(100, 2, 120000, 0.02)).
const (
	registrationBackoff    = 100 * time.Millisecond
	registrationBackoffMax = 120 * time.Second
	registrationJitter     = 0.02
)

// registrationTimeout bounds one registration, as Kafka's registration channel
// does (ControllerServer: NodeToControllerChannelManagerImpl(..., 5000)). It
// must cover the leader's commit of the record, which it awaits before
// answering.
const registrationTimeout = 5 * time.Second

// registrar registers this controller with the active controller while
// another node leads. It runs on a goroutine of its own and reads the
// status the loop publishes.
type registrar struct {
	n           *Node
	lg          *zap.Logger // rate-limited: what the leader answers is remote input
	peers       *network.Peers
	incarnation [16]byte
	wake        chan struct{} // the leader or the epoch changed
	// waiting, when set (tests), is called with the status run acted on each time it
	// is about to wait: every attempt for that status has been answered by then.
	waiting func(raft.Status)
}

// registrationEnabled: every controller on __cluster_metadata registers, as
// every Kafka controller does (Kafka has no setting to turn it off); the raft
// test server's partition has no controllers to register with.
func (n *Node) registrationEnabled() bool {
	return n.cfg.IsController() && n.rcfg.TopicName == topics.ClusterMetadata
}

// newRegistrar prepares the registrar; it draws this process's incarnation id.
// The registration connection is separate from the raft client's because
// Kafka's server answers one request per connection at a time and holds a
// registration until its record commits: on the raft connection it would
// hold back this node's Fetch, which that commit may need.
func (n *Node) newRegistrar() *registrar {
	return &registrar{
		n:           n,
		lg:          n.remote.Named("registration"),
		incarnation: [16]byte(uuid.Random()),
		wake:        make(chan struct{}, 1),
		peers: network.NewPeers(network.PeerConfig{
			ClientID:            "controller-" + strconv.Itoa(int(n.cfg.NodeID)) + "-to-controller-registration-channel-manager",
			Apis:                n.apis,
			RequestTimeout:      registrationTimeout,
			ReconnectBackoff:    peerReconnectBackoff,
			ReconnectBackoffMax: peerReconnectBackoffMax,
			Security:            n.outbound, // the raft client's: the active controller's listener
			Logger:              n.lg.Named("registration"),
		}),
	}
}

// notify tells the registrar that the leader or the epoch changed; it never
// blocks the loop.
func (r *registrar) notify() {
	if r == nil {
		return
	}
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// registrationKey is what one registration is good for.
type registrationKey struct {
	epoch  int32
	leader int32
}

// run registers until ctx is done, then closes the registration connection.
func (r *registrar) run(ctx context.Context) {
	defer r.peers.Close()
	var (
		done     = registrationKey{-1, -1} // registered for this epoch and leader
		trying   = registrationKey{-1, -1} // the target of the current attempts
		failures int
		retryAt  time.Time
		warned   bool // a non-retriable answer was logged for trying
	)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		st, ok := r.n.Status()
		key := registrationKey{st.Epoch, st.LeaderID}
		wait := time.Duration(-1) // until woken
		if ok && st.LeaderID >= 0 && st.LeaderID != r.n.rcfg.NodeID && key != done {
			if key != trying {
				trying, failures, retryAt, warned = key, 0, time.Time{}, false
			}
			if now := time.Now(); now.Before(retryAt) {
				wait = retryAt.Sub(now)
			} else if r.attempt(ctx, st, &warned) {
				done, failures = key, 0
				continue
			} else {
				wait = jittered(registrationBackoff, failures)
				failures++
				retryAt = time.Now().Add(wait)
			}
		}
		if wait >= 0 {
			timer.Reset(wait)
		}
		if r.waiting != nil {
			r.waiting(st)
		}
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// attempt sends one registration to the leader of st and reports whether it
// was acknowledged.
func (r *registrar) attempt(ctx context.Context, st raft.Status, warned *bool) bool {
	addr, ok := r.leaderAddress(st)
	if !ok {
		r.lg.Debug("no address for the leader yet; registration waits", zap.Int32("leader_id", st.LeaderID))
		return false
	}
	r.peers.SetAddress(st.LeaderID, addr)
	type answer struct {
		resp kmsg.Response
		err  error
	}
	ch := make(chan answer, 1)
	r.peers.Send(st.LeaderID, r.request(), func(resp kmsg.Response, err error) { ch <- answer{resp, err} })
	var a answer
	select {
	case a = <-ch:
	case <-ctx.Done():
		return false
	}
	fields := []zap.Field{zap.Int32("leader_id", st.LeaderID), zap.Int32("epoch", st.Epoch), zap.String("address", addr)}
	if a.err != nil {
		r.lg.Debug("registration not delivered; retrying", append(fields, zap.Error(a.err))...)
		return false
	}
	resp, ok := a.resp.(*kmsg.ControllerRegistrationResponse)
	if !ok {
		r.lg.Warn("registration answered with a foreign response; retrying", fields...)
		return false
	}
	if resp.ErrorCode == 0 {
		r.n.lg.Info("registered with the active controller", append(fields, zap.String("incarnation_id", uuidString(r.incarnation)))...)
		return true
	}
	err := kerr.ErrorForCode(resp.ErrorCode)
	msg := ""
	if resp.ErrorMessage != nil {
		msg = *resp.ErrorMessage
	}
	fields = append(fields, zap.Error(err), zap.String("message", clipMessage(msg)))
	if registrationRetriable(err) {
		r.lg.Debug("registration refused for now; retrying", fields...)
	} else if !*warned {
		// Kafka retries any refusal; so does kraftd (an operator may fix an
		// ACL), but says so once per leader epoch.
		*warned = true
		r.lg.Warn("the active controller refused this controller's registration; retrying with backoff", fields...)
	}
	return false
}

// registrationRetriable: answers that clear up on their own. A leader that is
// not yet active says NOT_CONTROLLER; one with no finalized metadata.version
// (a kraftd leader, or a JVM still bootstrapping) UNSUPPORTED_VERSION.
func registrationRetriable(err error) bool {
	return errors.Is(err, kerr.UnsupportedVersion) || errors.Is(err, kerr.NotController) || kerr.IsRetriable(err)
}

// leaderAddress is the leader's endpoint on this node's first controller
// listener (Kafka's RaftControllerNodeProvider), from the voter set in
// force, else from controller.quorum.voters.
func (r *registrar) leaderAddress(st raft.Status) (string, bool) {
	name := r.n.cfg.RaftListener()
	pick := func(eps []raft.Endpoint) (string, bool) {
		for _, ep := range eps {
			if ep.Name == name && ep.Host != "" && ep.Port > 0 && ep.Port <= 65535 {
				return net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))), true
			}
		}
		return "", false
	}
	if v, ok := st.Voters.Voter(raft.NodeID(st.LeaderID)); ok {
		if addr, ok := pick(v.Endpoints); ok {
			return addr, true
		}
	}
	for _, v := range r.n.rcfg.Voters {
		if v.ID == st.LeaderID && len(v.Endpoints) > 0 {
			// controller.quorum.voters names no listener: it is the first
			// controller listener's address.
			ep := v.Endpoints[0]
			if ep.Host != "" && ep.Port > 0 && ep.Port <= 65535 {
				return net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))), true
			}
		}
	}
	return "", false
}

// request is this controller's registration. kraftd replicates the metadata
// log byte for byte without interpreting it, so it supports every
// metadata.version and feature level a Kafka 4.4 controller supports; it
// advertises what such a controller does (features.Supported), which
// includes kraft.version 0-1.
func (r *registrar) request() *kmsg.ControllerRegistrationRequest {
	req := kmsg.NewPtrControllerRegistrationRequest()
	req.ControllerID = r.n.cfg.NodeID
	req.IncarnationID = r.incarnation
	req.ZkMigrationReady = false
	for _, ep := range r.n.rcfg.Endpoints {
		l := kmsg.NewControllerRegistrationRequestListener()
		l.Name, l.Host, l.Port = ep.Name, ep.Host, uint16(ep.Port)
		l.SecurityProtocol = securityProtocolID(r.n.listenerProtocol(ep.Name))
		req.Listeners = append(req.Listeners, l)
	}
	for _, f := range features.Supported() {
		kf := kmsg.NewControllerRegistrationRequestFeature()
		kf.Name, kf.MinSupportedVersion, kf.MaxSupportedVersion = f.Name, f.Min, f.Max
		req.Features = append(req.Features, kf)
	}
	return req
}

// listenerProtocol is the security protocol of listener name.
func (n *Node) listenerProtocol(name string) security.Protocol {
	if l := n.cfg.ListenerSecurity[name]; l != nil {
		return l.Protocol
	}
	return security.Plaintext
}

// securityProtocolID is Kafka's SecurityProtocol id.
func securityProtocolID(p security.Protocol) int16 {
	switch p {
	case security.SSL:
		return 1
	case security.SASLPlaintext:
		return 2
	case security.SASLSSL:
		return 3
	}
	return 0
}

// jittered is Kafka's ExponentialBackoff.backoff(failures) for the
// registration: base x 2^failures, at most registrationBackoffMax, +-2 %.
func jittered(base time.Duration, failures int) time.Duration {
	d := registrationBackoffMax
	if failures < 30 {
		d = min(base<<failures, registrationBackoffMax)
	}
	f := 1 + registrationJitter*(2*rand.Float64()-1)
	return time.Duration(float64(d) * f)
}

// clipMessage bounds a remote message in logs.
func clipMessage(s string) string {
	const max = 256
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}

func uuidString(u [16]byte) string { return uuid.UUID(u).String() }
