package admin

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/topics"
)

// quorumHandler answers DescribeCluster naming itself the leader, and
// DescribeQuorum as a leader (or with partitionErr).
type quorumHandler struct {
	port          int32
	partitionErr  int16
	endpointTypes chan int8 // of the DescribeCluster requests, when not nil
}

func (h quorumHandler) Handle(_ *network.ConnInfo, _ protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	switch r := req.(type) {
	case *kmsg.DescribeClusterRequest:
		resp := r.ResponseKind().(*kmsg.DescribeClusterResponse)
		resp.ClusterID, resp.ControllerID, resp.EndpointType = "MkU3OEVBNTcwNTJENDM2Qg", 1, r.EndpointType
		if h.endpointTypes != nil {
			h.endpointTypes <- r.EndpointType
		}
		b := kmsg.NewDescribeClusterResponseBroker()
		b.NodeID, b.Host, b.Port = 1, "127.0.0.1", h.port
		resp.Brokers = append(resp.Brokers, b)
		respond(resp)
	case *kmsg.DescribeQuorumRequest:
		resp := r.ResponseKind().(*kmsg.DescribeQuorumResponse)
		t := kmsg.NewDescribeQuorumResponseTopic()
		t.Topic = r.Topics[0].Topic
		p := kmsg.NewDescribeQuorumResponseTopicPartition()
		p.ErrorCode, p.LeaderID, p.LeaderEpoch = h.partitionErr, 1, 7
		t.Partitions = append(t.Partitions, p)
		resp.Topics = append(resp.Topics, t)
		respond(resp)
	default:
		respond(nil)
	}
}

func startServer(t *testing.T, h func(port int32) network.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	srv, err := network.NewServer(network.ServerConfig{
		Apis:      node.Apis(),
		Listeners: []network.ListenerConfig{{Name: "CONTROLLER", Addr: l.Addr().String()}},
		Logger:    zap.NewNop(),
	}, h(int32(port)))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return l.Addr().String()
}

func TestDescribeQuorum(t *testing.T) {
	addr := startServer(t, func(port int32) network.Handler { return quorumHandler{port: port} })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	q, err := DescribeQuorum(ctx, Bootstrap{Addrs: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	if q.ClusterID != "MkU3OEVBNTcwNTJENDM2Qg" || q.Partition.LeaderID != 1 || q.Partition.LeaderEpoch != 7 {
		t.Fatalf("quorum %+v", q)
	}
}

// A follower's NOT_LEADER_OR_FOLLOWER comes back as the kerr error.
func TestDescribeQuorumAtNotLeader(t *testing.T) {
	addr := startServer(t, func(port int32) network.Handler {
		return quorumHandler{port: port, partitionErr: kerr.NotLeaderForPartition.Code}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := DescribeQuorumAt(ctx, addr, topics.ClusterMetadata); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("error %v, want NOT_LEADER_OR_FOLLOWER", err)
	}
}

// Through a broker, DescribeCluster asks for brokers and DescribeQuorum goes
// to the broker itself.
func TestDescribeQuorumThroughBroker(t *testing.T) {
	types := make(chan int8, 4)
	addr := startServer(t, func(port int32) network.Handler {
		return quorumHandler{port: port, endpointTypes: types}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	q, err := DescribeQuorum(ctx, Bootstrap{Addrs: []string{addr}, Brokers: true})
	if err != nil {
		t.Fatal(err)
	}
	if q.ClusterID != "MkU3OEVBNTcwNTJENDM2Qg" || q.Partition.LeaderEpoch != 7 || len(types) != 1 || <-types != 1 {
		t.Fatalf("quorum %+v, DescribeCluster endpoint types %d", q, len(types))
	}
}
