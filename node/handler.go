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
	taken       func() // the connection's Taken: the loop took the request off the inbox
	topicRename string
	remote      string // for logs
	corr        int32  // the request's correlation id, for logs
	clusterID   string // the request's cluster id, for logs ("<null>" when absent)
}

// requestClusterID is a request's cluster id for logs ("<null>" when
// absent), as its api's registration reads it.
func (n *Node) requestClusterID(req kmsg.Request) string {
	if p, _ := n.apis.ClusterID(req); p != nil {
		return *p
	}
	return "<null>"
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

// Handle serves a request by its api's route (apis.go): the raft apis go
// into the run loop, DescribeCluster and ControllerRegistration are
// answered from the published status, the other controller apis as a
// controller that is not active. It runs on the connection's reader
// goroutine.
func (n *Node) Handle(c *network.ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	if r := n.routes.of(hdr.APIKey); r != nil {
		r(n, c, hdr, req, respond)
		return
	}
	n.unrouted(c, hdr, respond)
}

// unrouted closes the connection of a request the node has no route for:
// the server decodes only the apis of the node's table, every one of which
// the server or a route serves, so the tables disagree.
func (n *Node) unrouted(c *network.ConnInfo, hdr protocol.RequestHeader, respond func(kmsg.Response)) {
	n.remote.Warn("request for an api the node does not route; closing the connection",
		zap.Int16("api_key", hdr.APIKey), zap.Int16("api_version", hdr.APIVersion),
		zap.Stringer("remote", c.Remote))
	respond(nil)
}

// toRaft hands a raft request to the run loop.
func (n *Node) toRaft(c *network.ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	ref := &reqRef{respond: respond, taken: c.Taken, remote: c.Remote.String(), corr: hdr.CorrelationID, clusterID: n.requestClusterID(req)}
	if !n.postRequest(c, hdr, raft.Message{Request: req, Ref: ref}) {
		respond(nil) // close the connection
	}
}

// describeQuorumToRaft hands DescribeQuorum to the run loop: kafka-metadata-quorum
// always asks for __cluster_metadata; a node running the performance-test
// partition describes that one, under the name asked for.
func (n *Node) describeQuorumToRaft(c *network.ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	r := req.(*kmsg.DescribeQuorumRequest)
	ref := &reqRef{respond: respond, taken: c.Taken, remote: c.Remote.String(), corr: hdr.CorrelationID, clusterID: n.requestClusterID(req)}
	if n.rcfg.TopicName != topics.ClusterMetadata && len(r.Topics) == 1 && r.Topics[0].Topic == topics.ClusterMetadata {
		r.Topics[0].Topic = n.rcfg.TopicName
		ref.topicRename = topics.ClusterMetadata
	}
	if !n.postRequest(c, hdr, raft.Message{Request: req, Ref: ref}) {
		respond(nil)
	}
}

var describeClusterAPI = nodeApi{
	Api: protocol.Typed[*kmsg.DescribeClusterRequest, *kmsg.DescribeClusterResponse]{
		Versions: protocol.VersionRange{Min: 0, Max: 2},
	}.Api(),
	serve: func(n *Node, c *network.ConnInfo, _ protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		// A request can arrive the moment the listeners are bound, a
		// moment before the answer's endpoints are known.
		select {
		case <-n.ready:
			respond(n.describeCluster(c, req.(*kmsg.DescribeClusterRequest)))
		case <-n.stopped:
			respond(nil)
		}
	},
}

// describeCluster answers as a Kafka controller does for
// kafka-metadata-quorum --bootstrap-controller (docs/design/README.md 4).
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
		// A version 0 client knows no endpoint type codes: Kafka's
		// AuthHelper answers it INVALID_REQUEST.
		resp.ErrorCode = kerr.MismatchedEndpointType.Code
		if req.Version < 1 {
			resp.ErrorCode = kerr.InvalidRequest.Code
		}
		msg := "The request was sent to an endpoint of type CONTROLLER, but we wanted an endpoint of type BROKER"
		resp.ErrorMessage = &msg
		return resp
	default:
		if req.Version < 1 {
			resp.ErrorCode = kerr.InvalidRequest.Code
		} else {
			resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		}
		msg := fmt.Sprintf("Unsupported endpoint type %d", endpointType)
		resp.ErrorMessage = &msg
		return resp
	}
	resp.ClusterID = n.rcfg.ClusterID
	resp.ControllerID = -1
	if n.ctrl != nil {
		return n.describeRegisteredControllers(c, resp)
	}
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

// describeRegisteredControllers answers DescribeCluster as a Kafka 4.4.0
// controller does (ControllerApis.handleDescribeCluster): UNSUPPORTED_VERSION
// without a finalized metadata.version or below controller registration,
// else the controllers registered in the committed image with their
// endpoint on the request's listener; the controller id is the raft leader
// when it is among them.
func (n *Node) describeRegisteredControllers(c *network.ConnInfo, resp *kmsg.DescribeClusterResponse) kmsg.Response {
	eps, refused := n.ctrl.RegisteredControllers(c.Listener)
	if refused != "" {
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		resp.ErrorMessage = &refused
		return resp
	}
	st, known := n.Status()
	for _, ep := range eps {
		b := kmsg.NewDescribeClusterResponseBroker()
		b.NodeID, b.Host, b.Port = ep.ID, ep.Host, ep.Port
		resp.Brokers = append(resp.Brokers, b)
		if known && st.LeaderID == ep.ID {
			resp.ControllerID = ep.ID
		}
	}
	return resp
}

// controllerRegistrationAPI goes to the controller application when the
// node runs one (controller/controllerregistration.go); otherwise it only
// turns a Kafka controller's registration away.
var controllerRegistrationAPI = nodeApi{
	Api: protocol.ControllerRegistrationApi(),
	serve: func(n *Node, c *network.ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		if n.ctrl != nil {
			n.toController(c, hdr, req, respond)
			return
		}
		respond(n.controllerRegistration(req.(*kmsg.ControllerRegistrationRequest)))
	},
}

// controllerRegistration answers a Kafka controller registering itself with
// the active controller, which it takes the raft leader to be. kraftd is no
// active controller yet, so it registers no one. A node that does not lead answers
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
