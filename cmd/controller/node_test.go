package main

import (
	"time"

	"net"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

func testNode(t *testing.T) *node {
	t.Helper()
	p, err := ParseProperties(baseConfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := NewConfig(p, false)
	if err != nil {
		t.Fatal(err)
	}
	rc := raftConfig(cfg)
	rc.ClusterID = "MkU3OEVBNTcwNTJENDM2Qg"
	n := &node{lg: zap.NewNop(), cfg: cfg, rcfg: rc, advertised: map[string]raft.Endpoint{"CONTROLLER": {Name: "CONTROLLER", Host: "node1.example", Port: 9093}},
		inbox: make(chan raft.Message, 4), stopped: make(chan struct{}), warned: map[string]time.Time{}}
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
	n.status.Store(&statusSnapshot{status: raft.Status{LeaderID: 2, Epoch: 4}})
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
	req.Version = 0
	if resp := n.describeCluster(ci, req).(*kmsg.DescribeClusterResponse); resp.ErrorCode != kerr.MismatchedEndpointType.Code {
		t.Fatalf("v0: %d", resp.ErrorCode)
	}
}

// DescribeQuorum for __cluster_metadata reaches the driver renamed to the
// node's topic and the reply carries the requested name again.
func TestDescribeQuorumTopicRename(t *testing.T) {
	n := testNode(t)
	n.rcfg.TopicName = raft.PerformanceTestTopicName
	ci := &network.ConnInfo{Listener: "CONTROLLER", Remote: &net.TCPAddr{}}
	req := kmsg.NewPtrDescribeQuorumRequest()
	tp := kmsg.NewDescribeQuorumRequestTopic()
	tp.Topic = raft.MetadataTopicName
	tp.Partitions = append(tp.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, tp)
	var got kmsg.Response
	n.Handle(ci, protocolHeader(55), req, func(r kmsg.Response) { got = r })
	m := <-n.inbox
	if m.Request.(*kmsg.DescribeQuorumRequest).Topics[0].Topic != raft.PerformanceTestTopicName {
		t.Fatal("request not renamed for the driver")
	}
	resp := kmsg.NewPtrDescribeQuorumResponse()
	rt := kmsg.NewDescribeQuorumResponseTopic()
	rt.Topic = raft.PerformanceTestTopicName
	resp.Topics = append(resp.Topics, rt)
	transport{n}.Reply(m.Ref, resp)
	if got == nil || got.(*kmsg.DescribeQuorumResponse).Topics[0].Topic != raft.MetadataTopicName {
		t.Fatalf("reply %+v", got)
	}
}

func TestRaftConfigMapping(t *testing.T) {
	p, _ := ParseProperties(baseConfig + "controller.quorum.append.linger.ms=0\ncontroller.quorum.fetch.timeout.ms=700\n")
	cfg, err := NewConfig(p, false)
	if err != nil {
		t.Fatal(err)
	}
	rc := raftConfig(cfg)
	if rc.NodeID != 1 || rc.ListenerName != "CONTROLLER" || len(rc.Voters) != 3 || rc.AppendLinger != 0 || rc.FetchTimeout.Milliseconds() != 700 {
		t.Fatalf("%+v", rc)
	}
	if v := rc.Voters[2]; v.ID != 3 || v.Endpoints[0] != (raft.Endpoint{Name: "CONTROLLER", Host: "::1", Port: 9095}) {
		t.Fatalf("voter %+v", v)
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
