package node

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/topics"
)

// baseConfig is a valid three-voter controller configuration.
const baseConfig = `node.id=1
process.roles=controller
listeners=CONTROLLER://127.0.0.1:9093
controller.listener.names=CONTROLLER
controller.quorum.voters=1@127.0.0.1:9093,2@127.0.0.1:9094,3@[::1]:9095
log.dirs=/tmp/a,/tmp/b
`

func testNode(t *testing.T) *Node {
	t.Helper()
	return testNodeWith(t, nil)
}

// testNodeWith is testNode logging to lg.
func testNodeWith(t *testing.T, lg *zap.Logger) *Node {
	t.Helper()
	p, err := config.ParseProperties(baseConfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.New(p, false)
	if err != nil {
		t.Fatal(err)
	}
	n, err := New(cfg, Options{ClusterID: "MkU3OEVBNTcwNTJENDM2Qg", TopicName: topics.ClusterMetadata, Logger: lg, ShutdownTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	n.advertised = map[string]raft.Endpoint{"CONTROLLER": {Name: "CONTROLLER", Host: "node1.example", Port: 9093}}
	close(n.ready)
	return n
}

func TestDescribeCluster(t *testing.T) {
	n := testNode(t)
	ci := &network.ConnInfo{Listener: "CONTROLLER", Remote: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5000}}
	req := kmsg.NewPtrDescribeClusterRequest()
	req.Version = 1
	req.EndpointType = 2

	// No status yet: leader unknown.
	resp := n.describeCluster(ci, req).(*kmsg.DescribeClusterResponse)
	if resp.ErrorCode != 0 || resp.ControllerID != -1 || resp.EndpointType != 2 || resp.ClusterID != "MkU3OEVBNTcwNTJENDM2Qg" {
		t.Fatalf("%+v", resp)
	}
	if len(resp.Brokers) != 3 || resp.Brokers[0].Host != "node1.example" || resp.Brokers[1].Port != 9094 || resp.Brokers[2].Host != "::1" {
		t.Fatalf("brokers %+v", resp.Brokers)
	}
	n.status.Store(&raft.Status{LeaderID: 2, Epoch: 4})
	resp = n.describeCluster(ci, req).(*kmsg.DescribeClusterResponse)
	if resp.ControllerID != 2 {
		t.Fatalf("controller id %d", resp.ControllerID)
	}
	req.EndpointType = 1
	if resp := n.describeCluster(ci, req).(*kmsg.DescribeClusterResponse); resp.ErrorCode != kerr.MismatchedEndpointType.Code {
		t.Fatalf("broker endpoint type: %d", resp.ErrorCode)
	}
	req.EndpointType = 7
	if resp := n.describeCluster(ci, req).(*kmsg.DescribeClusterResponse); resp.ErrorCode != kerr.UnsupportedEndpointType.Code {
		t.Fatalf("unknown endpoint type: %d", resp.ErrorCode)
	}
	// Version 0 asks for brokers; Kafka answers its clients INVALID_REQUEST.
	req.Version = 0
	if resp := n.describeCluster(ci, req).(*kmsg.DescribeClusterResponse); resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("v0: %d", resp.ErrorCode)
	}
}

// A Kafka controller's ControllerRegistration is turned away: NOT_CONTROLLER
// by a node that does not lead, so the JVM asks the raft leader next, and
// UNSUPPORTED_VERSION by the leader, which has no metadata.version.
func TestControllerRegistrationTurnedAway(t *testing.T) {
	n := testNode(t)
	ci := &network.ConnInfo{Listener: "CONTROLLER", Remote: &net.TCPAddr{}}
	req := kmsg.NewPtrControllerRegistrationRequest()
	req.ControllerID = 2
	for _, c := range []struct {
		status *raft.Status
		code   int16
		msg    string
	}{
		{nil, kerr.NotController.Code, "No controller appears to be active."},
		{&raft.Status{LeaderID: -1, Epoch: 3}, kerr.NotController.Code, "No controller appears to be active."},
		{&raft.Status{LeaderID: 2, Epoch: 4}, kerr.NotController.Code, "The active controller appears to be node 2."},
		{&raft.Status{LeaderID: 1, Epoch: 5}, kerr.UnsupportedVersion.Code, "There is no finalized MetadataVersion, so direct-to-controller communication is not supported."},
	} {
		if c.status != nil {
			n.status.Store(c.status)
		}
		var got kmsg.Response
		n.Handle(ci, protocolHeader(int16(kmsg.ControllerRegistration)), req, func(r kmsg.Response) { got = r })
		resp, ok := got.(*kmsg.ControllerRegistrationResponse)
		if !ok || resp.ErrorCode != c.code || resp.ErrorMessage == nil || *resp.ErrorMessage != c.msg {
			t.Errorf("status %+v: answer %+v, want error %d %q", c.status, got, c.code, c.msg)
		}
	}
	if _, ok := Apis().Versions(int16(kmsg.ControllerRegistration)); !ok {
		t.Error("ControllerRegistration not advertised: a JVM would fail it locally and stay on this node")
	}
}

// A node running the active side hands ControllerRegistration to the
// application; its refusals (NOT_CONTROLLER from a standby or a leader that
// has not claimed yet, the lifecycle's errors, a full queue) are answered in
// Kafka's shape, with the error's generic text, not by closing the
// connection.
func TestControllerRegistrationRefusedByTheApplication(t *testing.T) {
	n := testNode(t)
	n.ctrl, n.ctrlq = fakeController{}, make(chan ControllerRequest, 1)
	ci := &network.ConnInfo{Listener: "CONTROLLER", Remote: &net.TCPAddr{}}
	req := kmsg.NewPtrControllerRegistrationRequest()
	req.ControllerID = 2
	for _, c := range []struct {
		code      int16
		msg, want string
	}{
		{kerr.NotController.Code, "The active controller appears to be node 3.", "This is not the correct controller for this cluster."},
		{kerr.UnknownServerError.Code, "The server experienced an unexpected error when processing the request.", "The server experienced an unexpected error when processing the request."},
	} {
		var got kmsg.Response
		answered := false
		n.Handle(ci, protocolHeader(int16(kmsg.ControllerRegistration)), req, func(r kmsg.Response) { got, answered = r, true })
		r := <-n.ctrlq // the loop's part
		r.Fail(c.code, c.msg)
		resp, ok := got.(*kmsg.ControllerRegistrationResponse)
		if !answered || !ok || resp.ErrorCode != c.code || resp.ErrorMessage == nil || *resp.ErrorMessage != c.want {
			t.Errorf("refused with %d: answered %v (%+v), want error %d %q", c.code, answered, got, c.code, c.want)
		}
	}
}

// DescribeQuorum for __cluster_metadata reaches the driver renamed to the
// node's topic and the reply carries the requested name again.
func TestDescribeQuorumTopicRename(t *testing.T) {
	n := testNode(t)
	n.rcfg.TopicName = topics.RaftPerformanceTest
	ci := &network.ConnInfo{Listener: "CONTROLLER", Remote: &net.TCPAddr{}}
	req := kmsg.NewPtrDescribeQuorumRequest()
	tp := kmsg.NewDescribeQuorumRequestTopic()
	tp.Topic = topics.ClusterMetadata
	tp.Partitions = append(tp.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, tp)
	var got kmsg.Response
	n.Handle(ci, protocolHeader(55), req, func(r kmsg.Response) { got = r })
	m := <-n.inbox
	if m.Request.(*kmsg.DescribeQuorumRequest).Topics[0].Topic != topics.RaftPerformanceTest {
		t.Fatal("request not renamed for the driver")
	}
	resp := kmsg.NewPtrDescribeQuorumResponse()
	rt := kmsg.NewDescribeQuorumResponseTopic()
	rt.Topic = topics.RaftPerformanceTest
	resp.Topics = append(resp.Topics, rt)
	transport{n}.Reply(m.Ref, resp)
	if got == nil || got.(*kmsg.DescribeQuorumResponse).Topics[0].Topic != topics.ClusterMetadata {
		t.Fatalf("reply %+v", got)
	}
}

func TestRaftConfigMapping(t *testing.T) {
	p, _ := config.ParseProperties(baseConfig + "controller.quorum.append.linger.ms=0\ncontroller.quorum.fetch.timeout.ms=700\n")
	cfg, err := config.New(p, false)
	if err != nil {
		t.Fatal(err)
	}
	rc := raftConfig(cfg)
	if rc.NodeID != 1 || rc.ListenerName != "CONTROLLER" || len(rc.Voters) != 3 || rc.AppendLinger != 0 || rc.FetchTimeout.Milliseconds() != 700 {
		t.Fatalf("%+v", rc)
	}
	if rc.MaxBatchBytes != 8<<20 {
		t.Fatalf("max batch bytes %d with 1 GiB segments, want 8 MiB", rc.MaxBatchBytes)
	}
	p.Set("metadata.log.segment.min.bytes", "16384")
	p.Set("metadata.log.segment.bytes", "32768")
	small, err := config.New(p, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := raftConfig(small).MaxBatchBytes; got != 32768 {
		t.Fatalf("max batch bytes %d with 32 KiB segments, want 32768", got)
	}
	if v := rc.Voters[2]; v.ID != 3 || v.Endpoints[0] != (raft.Endpoint{Name: "CONTROLLER", Host: "::1", Port: 9095}) {
		t.Fatalf("voter %+v", v)
	}
	if rc.AutoJoin {
		t.Fatal("auto-join on by default")
	}
	p.Set("controller.quorum.auto.join.enable", "true")
	if joining, err := config.New(p, false); err != nil || !raftConfig(joining).AutoJoin {
		t.Fatalf("controller.quorum.auto.join.enable=true does not reach the raft config (%v)", err)
	}
	p.Set(config.FetchPaceKey, "2000")
	p.Set(config.FetchPaceRateKey, "4096")
	if paced, err := config.New(p, false); err != nil {
		t.Fatal(err)
	} else if prc := raftConfig(paced); prc.FetchPace != 2*time.Millisecond || prc.FetchPaceRate != 4096 {
		t.Fatalf("fetch pace %v from %d bytes/s, want 2ms from 4096", prc.FetchPace, prc.FetchPaceRate)
	}
	bound := map[string]net.Addr{"CONTROLLER": &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9093}}
	eps := advertisedEndpoints(cfg, bound)
	if len(eps) != 1 || eps[0] != (raft.Endpoint{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9093}) {
		t.Fatalf("advertised %+v", eps)
	}
}

func protocolHeader(key int16) protocol.RequestHeader {
	return protocol.RequestHeader{APIKey: key}
}

// describeClusterHandler answers DescribeCluster with a fixed cluster id.
type describeClusterHandler struct{}

func (describeClusterHandler) Handle(_ *network.ConnInfo, _ protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.ClusterID = "learned"
	respond(resp)
}

// An address learned from the wire makes an unconfigured node reachable;
// a configured voter keeps its controller.quorum.voters address.
func TestTransportLearnEndpoint(t *testing.T) {
	srv, err := network.NewServer(network.ServerConfig{
		Apis:      Apis(),
		Listeners: []network.ListenerConfig{{Name: "CONTROLLER", Addr: "127.0.0.1:0"}},
		Logger:    zap.NewNop(),
	}, describeClusterHandler{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	port := srv.Addrs()["CONTROLLER"].(*net.TCPAddr).Port

	n := testNode(t)
	n.peers = network.NewPeers(network.PeerConfig{ClientID: "t", Apis: n.apis, RequestTimeout: 5 * time.Second,
		ReconnectBackoff: 10 * time.Millisecond, ReconnectBackoffMax: 50 * time.Millisecond, Logger: zap.NewNop()})
	defer n.peers.Close()
	send := func(id int32) (kmsg.Response, error) {
		type result struct {
			resp kmsg.Response
			err  error
		}
		ch := make(chan result, 1)
		req := kmsg.NewPtrDescribeClusterRequest()
		req.EndpointType = 2
		n.peers.Send(id, req, func(r kmsg.Response, err error) { ch <- result{r, err} })
		select {
		case r := <-ch:
			return r.resp, r.err
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer from node %d", id)
			return nil, nil
		}
	}
	if _, err := send(9); err == nil {
		t.Fatalf("node 9 reachable before its address was learned")
	}
	transport{n}.LearnEndpoint(9, "127.0.0.1", int32(port))
	resp, err := send(9)
	if err != nil {
		t.Fatalf("send to the learned node: %v", err)
	}
	if r := resp.(*kmsg.DescribeClusterResponse); r.ClusterID != "learned" {
		t.Fatalf("answer %+v", r)
	}
	// Voter 2 is configured: a learned address does not replace it, so
	// nothing is dialed at the learned one.
	transport{n}.LearnEndpoint(2, "127.0.0.1", int32(port))
	if _, err := send(2); err == nil {
		t.Fatalf("configured voter 2 was redirected to a learned address")
	}
	var _ raft.EndpointLearner = transport{}
}
