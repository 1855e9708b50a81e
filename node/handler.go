package node

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/topics"
)

// reqRef routes a reply back to its connection. topicRename is set when the
// request's topic name was rewritten for the driver (DescribeQuorum for
// __cluster_metadata on a __raft_performance_test node) and the reply must
// carry the requested name again.
type reqRef struct {
	respond     func(kmsg.Response)
	topicRename string
	remote      string // for logs
	corr        int32  // the request's correlation id, for logs
	clusterID   string // the request's cluster id, for logs ("<null>" when absent)
}

// responseErrorCode is the top-level error code of a raft response (where
// INCONSISTENT_CLUSTER_ID is reported), 0 for other kinds.
func responseErrorCode(resp kmsg.Response) int16 {
	code, _ := protocol.TopLevelErrorCode(resp)
	return code
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

// postRequest hands a request to the loop without waiting: when the inbox
// is full it returns false and the caller closes the connection, so neither
// a flood of connections nor a stalled loop pins connection goroutines.
func (n *Node) postRequest(c *network.ConnInfo, hdr protocol.RequestHeader, m raft.Message) bool {
	select {
	case n.inbox <- m:
		return true
	case <-n.stopped:
		return false
	default:
		n.remote.Warn("run loop inbox full: closing the connection of a request it has no room for",
			zap.Stringer("remote", c.Remote), zap.Int16("api_key", hdr.APIKey), zap.Int("inbox", cap(n.inbox)))
		return false
	}
}

// postResponse hands the response to one of the driver's requests to the
// loop; it waits while the inbox is full (there are at most as many as the
// driver sent) and gives up once the loop has stopped.
func (n *Node) postResponse(m raft.Message) {
	select {
	case n.inbox <- m:
	case <-n.stopped:
	}
}

// Handle routes raft requests into the run loop, answers DescribeCluster
// from the published status and the other controller apis as a controller
// that is not active. It runs on the connection's reader goroutine.
func (n *Node) Handle(c *network.ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	switch r := req.(type) {
	case *kmsg.DescribeClusterRequest:
		// A request can arrive the moment the listeners are bound, a
		// moment before the answer's endpoints are known.
		select {
		case <-n.ready:
			respond(n.describeCluster(c, r))
		case <-n.stopped:
			respond(nil)
		}
		return
	case *kmsg.ControllerRegistrationRequest:
		respond(n.controllerRegistration(r))
		return
	case *kmsg.VoteRequest, *kmsg.BeginQuorumEpochRequest, *kmsg.EndQuorumEpochRequest,
		*kmsg.FetchRequest, *kmsg.FetchSnapshotRequest,
		*kmsg.AddRaftVoterRequest, *kmsg.RemoveRaftVoterRequest, *kmsg.UpdateRaftVoterRequest,
		*kmsg.UpdateFeaturesRequest:
		ref := &reqRef{respond: respond, remote: c.Remote.String(), corr: hdr.CorrelationID, clusterID: requestClusterID(req)}
		if !n.postRequest(c, hdr, raft.Message{Request: req, Ref: ref}) {
			respond(nil) // close the connection
		}
		return
	case *kmsg.DescribeQuorumRequest:
		ref := &reqRef{respond: respond, remote: c.Remote.String(), corr: hdr.CorrelationID}
		// kafka-metadata-quorum always asks for __cluster_metadata; a
		// node running the performance-test partition describes that one.
		if n.rcfg.TopicName != topics.ClusterMetadata && len(r.Topics) == 1 && r.Topics[0].Topic == topics.ClusterMetadata {
			r.Topics[0].Topic = n.rcfg.TopicName
			ref.topicRename = topics.ClusterMetadata
		}
		if !n.postRequest(c, hdr, raft.Message{Request: req, Ref: ref}) {
			respond(nil)
		}
		return
	}
	if protocol.AnswersNotController(hdr.APIKey) {
		if resp, ok := n.notController(req); ok {
			respond(resp)
			return
		}
	}
	// protocol.ParseRequest only yields the apis kraftd advertises, all
	// handled above; anything else means the tables disagree: close the
	// connection.
	n.remote.Warn("request for an api the node does not route; closing the connection",
		zap.Int16("api_key", hdr.APIKey), zap.Int16("api_version", hdr.APIVersion),
		zap.Stringer("remote", c.Remote))
	respond(nil)
}

// describeCluster answers as a Kafka controller does for
// kafka-metadata-quorum --bootstrap-controller (kraft-protocol.md 11).
func (n *Node) describeCluster(c *network.ConnInfo, req *kmsg.DescribeClusterRequest) kmsg.Response {
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
	resp.ControllerID = -1
	// The voters in force (a dynamic quorum's come from its log), as a
	// Kafka controller lists them; the configured ones while none is known.
	st, known := n.Status()
	voters := st.Voters.Nodes()
	if len(voters) == 0 {
		if vs, err := raft.NewVoterSet(staticVoterNodes(n.rcfg.Voters)); err == nil {
			voters = vs.Nodes()
		}
	}
	for _, v := range voters {
		b := kmsg.NewDescribeClusterResponseBroker()
		b.NodeID = int32(v.Key.ID)
		found := false
		if b.NodeID == n.rcfg.NodeID {
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
		if known && st.LeaderID == b.NodeID {
			resp.ControllerID = b.NodeID
		}
	}
	return resp
}

// controllerRegistration answers a Kafka controller registering itself with
// the active controller, which it takes the raft leader to be. kraftd keeps
// no metadata, so it registers no one. A node that does not lead answers
// NOT_CONTROLLER, as a Kafka controller that is not active does: the JVM
// then looks up the raft leader again. (Not serving the api would leave the
// JVM's controller channel on this node for good: an api missing from
// ApiVersions fails locally, which does not move the channel, so after a
// kraftd leader a JVM never registers and cannot answer DescribeCluster.) A
// leader answers as a Kafka controller without a finalized
// metadata.version; the JVM retries after a backoff.
func (n *Node) controllerRegistration(req *kmsg.ControllerRegistrationRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ControllerRegistrationResponse)
	st, known := n.Status()
	var msg string
	switch {
	case known && st.LeaderID == n.rcfg.NodeID:
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		msg = "There is no finalized MetadataVersion, so direct-to-controller communication is not supported."
	default:
		resp.ErrorCode = kerr.NotController.Code
		msg = n.notControllerMessage()
	}
	resp.ErrorMessage = &msg
	return resp
}

// staticVoterNodes is controller.quorum.voters as voter nodes.
func staticVoterNodes(voters []raft.Voter) []raft.VoterNode {
	out := make([]raft.VoterNode, len(voters))
	for i, v := range voters {
		out[i] = raft.VoterNode{Key: raft.ReplicaKey{ID: raft.NodeID(v.ID), DirectoryID: v.DirectoryID}, Endpoints: v.Endpoints}
	}
	return out
}
