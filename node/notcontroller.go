package node

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/protocol"
)

// notControllerApis are the apis of a Kafka controller's listener
// (protocol.ControllerApis) that none of served registers.
func notControllerApis(served [][]protocol.Api) []protocol.Api {
	var out []protocol.Api
	for _, a := range protocol.ControllerApis() {
		if !slices.ContainsFunc(served, func(l []protocol.Api) bool {
			return slices.ContainsFunc(l, func(s protocol.Api) bool { return s.Key == a.Key })
		}) {
			out = append(out, a)
		}
	}
	return out
}

// notController answers a controller api kraftd lists but does not serve
// as a Kafka controller that is not active does (its registration's
// ErrorResponse): NOT_CONTROLLER, naming the raft leader when it is another
// node. A broker's forwarding channel, a JVM controller or an admin client
// then looks for the active controller again at once, where an api missing
// from ApiVersions would fail on the client. The apis answered here are not
// served even by an active kraftd controller yet (the others go to the
// application, controller.go); nothing here reaches the raft core.
func (n *Node) notController(c *network.ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	if a := n.apis.Lookup(hdr.APIKey); a != nil && a.ErrorResponse != nil {
		if resp := a.ErrorResponse(req, kerr.NotController.Code, n.notControllerMessage()); resp != nil {
			respond(resp)
			return
		}
	}
	n.unrouted(c, hdr, respond)
}

// notControllerMessage is the text of Kafka's NotControllerException
// (ControllerExceptions.newWrongControllerException) for the raft leader
// this node knows of; kraftd itself never counts as the active controller.
func (n *Node) notControllerMessage() string {
	if st, known := n.Status(); known && st.LeaderID >= 0 && st.LeaderID != n.rcfg.NodeID {
		return fmt.Sprintf("The active controller appears to be node %d.", st.LeaderID)
	}
	return "No controller appears to be active."
}
