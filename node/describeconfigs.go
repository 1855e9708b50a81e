package node

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/protocol"
)

// ConfigDescriber is an application that answers DescribeConfigs itself,
// as every Kafka controller does, active or not, from its committed image
// and its own configuration (ControllerApis.handleDescribeConfigsRequest).
// Safe from any goroutine: the node calls it on the connection's goroutine,
// never on the loop.
type ConfigDescriber interface {
	// DescribeConfigs answers req, or returns a non-zero code with which
	// the whole request fails (every resource answered with it).
	DescribeConfigs(req *kmsg.DescribeConfigsRequest) (resp *kmsg.DescribeConfigsResponse, code int16, msg string)
}

// describeConfigsAPI is DescribeConfigs (api 32), Kafka 4.4.0's version
// range and error answer, served by the application on any node; a node
// whose application does not describe answers as a controller that is not
// active.
var describeConfigsAPI = nodeApi{Api: controllerApi(kmsg.DescribeConfigs).Api, serve: (*Node).describeConfigs}

func (n *Node) describeConfigs(c *network.ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	d, ok := n.o.App.(ConfigDescriber)
	if !ok {
		n.notController(c, hdr, req, respond)
		return
	}
	resp, code, msg := d.DescribeConfigs(req.(*kmsg.DescribeConfigsRequest))
	if code != 0 {
		n.answerError(c, hdr, req, respond, code, msg)
		return
	}
	respond(resp)
}
