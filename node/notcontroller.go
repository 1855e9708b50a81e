package node

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
)

// notController answers a controller api kraftd lists but does not serve
// (protocol.AnswersNotController) as a Kafka controller that is not active
// does: NOT_CONTROLLER, naming the raft leader when it is another node. A
// broker's forwarding channel, a JVM controller or an admin client then
// looks for the active controller again at once, where an api missing from
// ApiVersions would fail on the client. kraftd keeps no metadata, so even
// as raft leader it is no active controller; nothing here reaches the raft
// core.
func (n *Node) notController(req kmsg.Request) (kmsg.Response, bool) {
	return protocol.ErrorResponse(req, kerr.NotController.Code, n.notControllerMessage())
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
