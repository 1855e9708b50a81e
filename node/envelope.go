package node

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/protocol"
)

// envelopeAPI serves Envelope (api 58): a broker forwards its clients'
// controller requests in it (KIP-590). A node without an active-capable
// controller answers it NOT_CONTROLLER as the other controller apis.
var envelopeAPI = nodeApi{Api: controllerApi(kmsg.Envelope).Api, serve: (*Node).envelope}

// forwardable are the apis Kafka 4.4.0 lets a broker forward to the
// controller (ApiKeys with forwardable=true that a controller listens for).
var forwardable = map[kmsg.Key]bool{
	kmsg.CreateTopics: true, kmsg.DeleteTopics: true, kmsg.CreatePartitions: true,
	kmsg.CreateACLs: true, kmsg.DeleteACLs: true, kmsg.AlterConfigs: true,
	kmsg.IncrementalAlterConfigs: true, kmsg.CreateDelegationToken: true,
	kmsg.RenewDelegationToken: true, kmsg.ExpireDelegationToken: true,
	kmsg.ElectLeaders: true, kmsg.AlterPartitionAssignments: true,
	kmsg.ListPartitionReassignments: true, kmsg.AlterClientQuotas: true,
	kmsg.AlterUserSCRAMCredentials: true, kmsg.UpdateFeatures: true,
	kmsg.UnregisterBroker: true, kmsg.DescribeQuorum: true,
	kmsg.AddRaftVoter: true, kmsg.RemoveRaftVoter: true,
}

// envelope unwraps a forwarded request as Kafka's EnvelopeUtils does, in
// its order: the principal must decode (PRINCIPAL_DESERIALIZATION_FAILURE),
// the client address be 4 or 16 bytes (INVALID_REQUEST), the inner header
// and body parse (UNSUPPORTED_VERSION), the inner api be forwardable
// (INVALID_REQUEST). The inner request then takes its own route; an answer
// holding NOT_CONTROLLER (NOT_LEADER_OR_FOLLOWER for DescribeQuorum)
// becomes the envelope's NOT_CONTROLLER with no data, so the broker looks
// for the controller again; any other answer goes back with its header.
// kraftd has no authorizer, so the CLUSTER_ACTION check is not made.
func (n *Node) envelope(c *network.ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	if n.ctrl == nil {
		n.notController(c, hdr, req, respond)
		return
	}
	env := req.(*kmsg.EnvelopeRequest)
	fail := func(code int16) {
		resp := env.ResponseKind().(*kmsg.EnvelopeResponse)
		resp.ErrorCode = code
		respond(resp)
	}
	var principal kmsg.DefaultPrincipalData
	if env.RequestPrincipal == nil || principal.ReadFrom(env.RequestPrincipal) != nil {
		fail(kerr.PrincipalDeserializationFailure.Code)
		return
	}
	if l := len(env.ClientHostAddress); l != 4 && l != 16 {
		fail(kerr.InvalidRequest.Code)
		return
	}
	ihdr, inner, err := n.apis.ParseRequest(env.RequestData)
	if err != nil {
		fail(kerr.UnsupportedVersion.Code)
		return
	}
	if !forwardable[kmsg.Key(ihdr.APIKey)] {
		fail(kerr.InvalidRequest.Code)
		return
	}
	route := n.routes.of(ihdr.APIKey)
	if route == nil {
		fail(kerr.InvalidRequest.Code)
		return
	}
	// The inner request is the broker's client's: its principal, and
	// forwarded (ControllerApis.allowTokenRequests reads both).
	fwd := *c
	fwd.Forwarded, fwd.Principal, fwd.TokenAuthenticated = true, principal.Type+":"+principal.Name, principal.TokenAuthenticated
	route(n, &fwd, ihdr, inner, func(resp kmsg.Response) {
		if resp == nil {
			respond(nil)
			return
		}
		code := n.apis.ErrorCode(resp)
		if top := n.apis.TopError(resp); top != 0 {
			code = top
		}
		if code == kerr.NotController.Code ||
			(ihdr.APIKey == int16(kmsg.DescribeQuorum) && code == kerr.NotLeaderForPartition.Code) {
			fail(kerr.NotController.Code)
			return
		}
		out := env.ResponseKind().(*kmsg.EnvelopeResponse)
		data := protocol.AppendResponseHeader(nil, ihdr.APIKey, ihdr.APIVersion, ihdr.CorrelationID)
		out.ResponseData = resp.AppendTo(data)
		respond(out)
	})
}
