package node

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

// A node serves the apis its layers register, each once: the network
// server's own (ApiVersions, the SASL apis), the raft driver's, and the
// node's (ownApis, each beside its handler). The other apis of a Kafka
// controller's listener are answered NOT_CONTROLLER (notcontroller.go)
// until one of them gets a registration of its own. Serving a controller
// api is then a file with its registration and handler, and its line in
// ownApis.

// route serves one api's request on the connection's reader goroutine; it
// calls respond exactly once (network.Handler).
type route func(n *Node, c *network.ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response))

// nodeApi is an api the node answers itself: its registration and route.
type nodeApi struct {
	protocol.Api
	serve route
}

// ownApis are the apis the node answers, defined beside their handlers.
var ownApis = []nodeApi{describeClusterAPI, controllerRegistrationAPI,
	brokerRegistrationAPI, brokerHeartbeatAPI, unregisterBrokerAPI, envelopeAPI,
	createTopicsAPI, deleteTopicsAPI, createPartitionsAPI, alterPartitionAPI, electLeadersAPI,
	allocateProducerIDsAPI, assignReplicasToDirsAPI, incrementalAlterConfigsAPI, alterConfigsAPI, listReassignmentsAPI,
	unregisterControllerAPI, alterReassignmentsAPI, alterClientQuotasAPI, alterSCRAMAPI, describeConfigsAPI,
	describeACLsAPI, createACLsAPI, deleteACLsAPI, createTokenAPI, renewTokenAPI, expireTokenAPI,
	describeTokensAPI, describeSCRAMAPI}

// Apis returns the table of every api a node serves, as a node assembles
// it when it is built: what it decodes, lists in ApiVersions, sends at
// most at, and counts.
func Apis() *protocol.Table {
	served := servedApis()
	return protocol.MustTable(append(served, notControllerApis(served))...)
}

// servedApis are the registrations of each layer.
func servedApis() [][]protocol.Api {
	own := make([]protocol.Api, len(ownApis))
	for i, a := range ownApis {
		own[i] = a.Api
	}
	return [][]protocol.Api{network.Apis(), raft.Apis(), own}
}

// routes maps each api key of the node's table to its route; the apis the
// network server answers itself have none.
type routes [protocol.MaxKey]route

func newRoutes() *routes {
	r := &routes{}
	for _, a := range raft.Apis() {
		r[a.Key] = (*Node).toRaft
	}
	// kafka-metadata-quorum asks for __cluster_metadata; a node on the
	// performance-test partition describes that one.
	r[kmsg.DescribeQuorum] = (*Node).describeQuorumToRaft
	// UpdateFeatures is the controller's once an active-capable
	// application runs; raft serves kraft.version upgrades otherwise.
	r[kmsg.UpdateFeatures] = (*Node).updateFeatures
	for _, a := range ownApis {
		r[a.Key] = a.serve
	}
	for _, a := range notControllerApis(servedApis()) {
		r[a.Key] = (*Node).notController
	}
	return r
}

// of returns the route of key, nil when the node serves none.
func (r *routes) of(key int16) route {
	if key < 0 || key >= protocol.MaxKey {
		return nil
	}
	return r[key]
}
