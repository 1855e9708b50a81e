package node

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/raft"
)

// transport implements raft.Transport over network.Peers and the server's
// respond functions. Send and Reply never block: Peers.Send queues, respond
// queues on the connection's writer.
type transport struct{ n *Node }

func (t transport) Send(o raft.Outbound) {
	t.n.peers.Send(o.To, o.Request, func(resp kmsg.Response, err error) {
		if err == nil && t.n.apis.TopError(resp) == kerr.InconsistentClusterID.Code {
			t.n.remote.Warn("peer refused our request: INCONSISTENT_CLUSTER_ID (our cluster id differs from the quorum's; was this dir formatted for another cluster?)",
				zap.Int32("peer", o.To), zap.String("api", kmsg.NameForKey(o.Request.Key())), zap.String("our_cluster_id", t.n.rcfg.ClusterID))
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			err = fmt.Errorf("%w: %w", raft.ErrConnectionRefused, err)
		}
		t.n.postResponse(raft.Message{From: o.To, Corr: o.Corr, Response: resp, Err: err})
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
	if t.configured(id) {
		return
	}
	t.n.peers.SetAddress(id, net.JoinHostPort(host, strconv.Itoa(int(port))))
}

// ForgetEndpoint implements raft.EndpointLearner: the driver dropped a learned
// address, so the peer client drops it too (a configured voter is kept).
func (t transport) ForgetEndpoint(id int32) {
	if !t.configured(id) {
		t.n.peers.Forget(id)
	}
}

func (t transport) Reply(ref raft.RequestRef, resp kmsg.Response) {
	r, ok := ref.(*reqRef)
	if !ok {
		t.n.lg.Error("reply with a foreign request ref; dropped", zap.Any("ref", ref))
		return
	}
	if t.n.apis.TopError(resp) == kerr.InconsistentClusterID.Code {
		t.n.remote.Warn("refused a request: INCONSISTENT_CLUSTER_ID (the sender's cluster id differs from ours)",
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

// configured: id is a voter with a configured address, which wins over what
// peers advertise.
func (t transport) configured(id int32) bool {
	for _, v := range t.n.rcfg.Voters {
		if v.ID == id && len(v.Endpoints) > 0 {
			return true
		}
	}
	return false
}
