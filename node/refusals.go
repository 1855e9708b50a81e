package node

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/security"
)

// The controller apis a Kafka 4.4.0 controller answers itself, active or
// not, the way kraftd is configured: no authorizer (authorizer.class.name)
// and no delegation token secret. Every kraftd node answers them so, as a
// JVM controller would; nothing reaches the loop but a token request the
// listener allows, which only the active controller answers
// (DELEGATION_TOKEN_AUTH_DISABLED, controller/refusals.go).
var (
	describeACLsAPI = nodeApi{Api: controllerApi(kmsg.DescribeACLs).Api, serve: (*Node).describeACLs}
	createACLsAPI   = nodeApi{Api: controllerApi(kmsg.CreateACLs).Api, serve: (*Node).createACLs}
	deleteACLsAPI   = nodeApi{Api: controllerApi(kmsg.DeleteACLs).Api, serve: (*Node).deleteACLs}

	createTokenAPI = nodeApi{Api: controllerApi(kmsg.CreateDelegationToken).Api, serve: (*Node).delegationToken}
	renewTokenAPI  = nodeApi{Api: controllerApi(kmsg.RenewDelegationToken).Api, serve: (*Node).delegationToken}
	expireTokenAPI = nodeApi{Api: controllerApi(kmsg.ExpireDelegationToken).Api, serve: (*Node).delegationToken}

	// Listed by a Kafka 4.4 controller but handled by none: its
	// ControllerApis throws "Unsupported ApiKey", answered
	// UNKNOWN_SERVER_ERROR without a message.
	describeTokensAPI = nodeApi{Api: controllerApi(kmsg.DescribeDelegationToken).Api, serve: (*Node).unknownServerError}
	describeSCRAMAPI  = nodeApi{Api: controllerApi(kmsg.DescribeUserSCRAMCredentials).Api, serve: (*Node).unknownServerError}
)

// Kafka's AclApis texts without an authorizer.
const (
	noAuthorizer         = "No Authorizer is configured."
	noAuthorizerDescribe = "No Authorizer is configured on the broker"
)

// ACL enum codes that Kafka's ACL requests check while they are parsed.
const (
	aclUnknown        int8 = 0 // UNKNOWN of every ACL enum
	aclPatternAny     int8 = 1
	aclPatternLiteral int8 = 3
)

// describeACLs answers SECURITY_DISABLED with AclApis' text, once the
// request passes the checks DescribeAclsRequest makes as it is parsed
// (Kafka closes the connection of a request that fails them).
func (n *Node) describeACLs(c *network.ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	r := req.(*kmsg.DescribeACLsRequest)
	pattern := int8(r.ResourcePatternType)
	if r.Version == 0 && pattern != aclPatternAny && pattern != aclPatternLiteral {
		n.refuseParsed(c, hdr, respond, "version 0 only supports literal resource pattern types")
		return
	}
	if anyUnknown(pattern, int8(r.ResourceType), int8(r.PermissionType), int8(r.Operation)) {
		n.refuseParsed(c, hdr, respond, "the filter contains UNKNOWN elements")
		return
	}
	n.answerError(c, hdr, req, respond, kerr.SecurityDisabled.Code, noAuthorizerDescribe)
}

// createACLs: CreateAclsRequest's checks, then SECURITY_DISABLED on
// every creation.
func (n *Node) createACLs(c *network.ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	r := req.(*kmsg.CreateACLsRequest)
	for _, a := range r.Creations {
		if r.Version == 0 && int8(a.ResourcePatternType) != aclPatternLiteral {
			n.refuseParsed(c, hdr, respond, "version 0 only supports literal resource pattern types")
			return
		}
	}
	for _, a := range r.Creations {
		if anyUnknown(int8(a.ResourcePatternType), int8(a.ResourceType), int8(a.PermissionType), int8(a.Operation)) {
			n.refuseParsed(c, hdr, respond, "a creation contains unknown elements")
			return
		}
	}
	n.answerError(c, hdr, req, respond, kerr.SecurityDisabled.Code, noAuthorizer)
}

// deleteACLs: DeleteAclsRequest's checks, then SECURITY_DISABLED on every
// filter.
func (n *Node) deleteACLs(c *network.ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	r := req.(*kmsg.DeleteACLsRequest)
	for _, f := range r.Filters {
		if p := int8(f.ResourcePatternType); r.Version == 0 && p != aclPatternAny && p != aclPatternLiteral {
			n.refuseParsed(c, hdr, respond, "version 0 supports only the LITERAL and ANY pattern types")
			return
		}
	}
	for _, f := range r.Filters {
		if anyUnknown(int8(f.ResourcePatternType), int8(f.ResourceType), int8(f.PermissionType), int8(f.Operation)) {
			n.refuseParsed(c, hdr, respond, "a filter contains UNKNOWN elements")
			return
		}
	}
	n.answerError(c, hdr, req, respond, kerr.SecurityDisabled.Code, noAuthorizer)
}

// anyUnknown is the UNKNOWN check of Kafka's ACL requests, which compares
// the codes as sent with UNKNOWN's (0): an unassigned code passes it.
func anyUnknown(codes ...int8) bool {
	for _, c := range codes {
		if c == aclUnknown {
			return true
		}
	}
	return false
}

// refuseParsed closes the connection of a request Kafka would have failed
// to parse (its request class's own checks), as Kafka's socket server does.
func (n *Node) refuseParsed(c *network.ConnInfo, hdr protocol.RequestHeader, respond func(kmsg.Response), why string) {
	n.remote.Info("closing the connection of a request Kafka refuses as it parses it: "+why,
		zap.Int16("api_key", hdr.APIKey), zap.Int16("api_version", hdr.APIVersion), zap.Stringer("remote", c.Remote))
	respond(nil)
}

// unknownServerError answers as Kafka's ControllerApis answers an api it
// lists but does not handle.
func (n *Node) unknownServerError(c *network.ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	n.answerError(c, hdr, req, respond, kerr.UnknownServerError.Code, "")
}

// delegationToken serves CreateDelegationToken, RenewDelegationToken and
// ExpireDelegationToken as Kafka's ControllerApis does before it asks the
// controller: a token-authenticated principal, a PLAINTEXT connection or
// an SSL one without a client certificate (unless forwarded) gets
// DELEGATION_TOKEN_REQUEST_NOT_ALLOWED on any node; the others go to the
// controller, which has no token secret (DELEGATION_TOKEN_AUTH_DISABLED
// while active, NOT_CONTROLLER otherwise).
func (n *Node) delegationToken(c *network.ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	if tokenRequestsAllowed(c) {
		n.toController(c, hdr, req, respond)
		return
	}
	if resp := protocol.DelegationTokenAnswer(req, kerr.DelegationTokenRequestNotAllowed.Code, c.Principal, -1); resp != nil {
		respond(resp)
		return
	}
	// An owner name without a type: Kafka's KafkaPrincipal refuses it
	// before anything else.
	n.answerError(c, hdr, req, respond, kerr.UnknownServerError.Code, "")
}

// tokenRequestsAllowed is ControllerApis.allowTokenRequests.
func tokenRequestsAllowed(c *network.ConnInfo) bool {
	switch {
	case c.TokenAuthenticated:
		return false
	case c.Forwarded:
		return true
	case c.Protocol == security.Plaintext || c.Protocol == "":
		return false
	case c.Protocol == security.SSL && c.Principal == network.AnonymousPrincipal:
		return false
	}
	return true
}
