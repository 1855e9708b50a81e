package node

import (
	"net"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/security"
)

// A node without an active-capable controller answers every controller api
// on the spot: those a Kafka controller answers itself whatever its state
// as it does (ACLs without an authorizer, token requests on PLAINTEXT, the
// apis it lists but handles nowhere), the others NOT_CONTROLLER, naming the
// raft leader when it is another node; as leader kraftd is no active
// controller either. Nothing reaches the run loop.
func TestControllerApisAnsweredNotController(t *testing.T) {
	n := testNode(t) // node 1
	ci := &network.ConnInfo{Listener: "CONTROLLER", Remote: &net.TCPAddr{}, Protocol: security.Plaintext, Principal: network.AnonymousPrincipal}
	for _, c := range []struct {
		status *raft.Status
		msg    string
	}{
		{nil, "No controller appears to be active."},
		{&raft.Status{LeaderID: -1, Epoch: 3}, "No controller appears to be active."},
		{&raft.Status{LeaderID: 2, Epoch: 4}, "The active controller appears to be node 2."},
		{&raft.Status{LeaderID: 1, Epoch: 5}, "No controller appears to be active."},
	} {
		if c.status != nil {
			n.status.Store(c.status)
		}
		for _, a := range protocol.ControllerApis() {
			key := int16(a.Key)
			req := validRequest(key)
			req.SetVersion(a.Versions.Max)
			var got kmsg.Response
			n.Handle(ci, protocolHeader(key), req, func(r kmsg.Response) { got = r })
			want := a.ErrorResponse(req, kerr.NotController.Code, c.msg)
			switch a.Key {
			case kmsg.DescribeACLs:
				want = a.ErrorResponse(req, kerr.SecurityDisabled.Code, "No Authorizer is configured on the broker")
			case kmsg.CreateACLs, kmsg.DeleteACLs:
				want = a.ErrorResponse(req, kerr.SecurityDisabled.Code, "No Authorizer is configured.")
			case kmsg.CreateDelegationToken, kmsg.RenewDelegationToken, kmsg.ExpireDelegationToken:
				want = protocol.DelegationTokenAnswer(req, kerr.DelegationTokenRequestNotAllowed.Code, "User:ANONYMOUS", -1)
			case kmsg.DescribeDelegationToken, kmsg.DescribeUserSCRAMCredentials:
				want = a.ErrorResponse(req, kerr.UnknownServerError.Code, "")
			}
			if got == nil || string(protocol.AppendResponse(nil, 1, got)) != string(protocol.AppendResponse(nil, 1, want)) {
				t.Errorf("status %+v, %s: answer %+v, want %+v", c.status, kmsg.NameForKey(key), got, want)
			}
		}
	}
	select {
	case m := <-n.inbox:
		t.Fatalf("a controller api reached the loop: %+v", m)
	default:
	}
}

// validRequest is a request of key that passes the checks Kafka makes as it
// parses one (the ACL requests' enum codes).
func validRequest(key int16) kmsg.Request {
	switch key {
	case int16(kmsg.DescribeACLs):
		r := kmsg.NewPtrDescribeACLsRequest()
		r.ResourceType, r.Operation, r.PermissionType = kmsg.ACLResourceTypeAny, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		return r
	case int16(kmsg.CreateACLs):
		r := kmsg.NewPtrCreateACLsRequest()
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.Operation, c.PermissionType = kmsg.ACLResourceTypeTopic, kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
		r.Creations = append(r.Creations, c)
		return r
	case int16(kmsg.DeleteACLs):
		r := kmsg.NewPtrDeleteACLsRequest()
		f := kmsg.NewDeleteACLsRequestFilter()
		f.ResourceType, f.Operation, f.PermissionType = kmsg.ACLResourceTypeAny, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		r.Filters = append(r.Filters, f)
		return r
	}
	return kmsg.RequestForKey(key)
}

// ACL requests Kafka fails to parse close the connection: an UNKNOWN (0)
// code, a version 0 pattern type other than LITERAL (or ANY for filters).
func TestACLRequestsRefusedAsKafkaParses(t *testing.T) {
	n := testNode(t)
	ci := &network.ConnInfo{Listener: "CONTROLLER", Remote: &net.TCPAddr{}}
	bad := []kmsg.Request{}
	d := validRequest(int16(kmsg.DescribeACLs)).(*kmsg.DescribeACLsRequest)
	d.Operation = 0
	bad = append(bad, d)
	d0 := validRequest(int16(kmsg.DescribeACLs)).(*kmsg.DescribeACLsRequest)
	d0.Version, d0.ResourcePatternType = 0, kmsg.ACLResourcePatternTypePrefixed
	bad = append(bad, d0)
	c := validRequest(int16(kmsg.CreateACLs)).(*kmsg.CreateACLsRequest)
	c.Version, c.Creations[0].ResourcePatternType = 0, kmsg.ACLResourcePatternTypeAny
	bad = append(bad, c)
	del := validRequest(int16(kmsg.DeleteACLs)).(*kmsg.DeleteACLsRequest)
	del.Version = 2
	del.Filters[0].ResourceType = 0
	bad = append(bad, del)
	for _, req := range bad {
		answered := false
		var got kmsg.Response
		n.Handle(ci, protocolHeader(req.Key()), req, func(r kmsg.Response) { got, answered = r, true })
		if !answered || got != nil {
			t.Errorf("%s v%d: answered %+v, want the connection closed", kmsg.NameForKey(req.Key()), req.GetVersion(), got)
		}
	}
	// An unassigned code is no UNKNOWN to Kafka's check: answered.
	ok := validRequest(int16(kmsg.DescribeACLs)).(*kmsg.DescribeACLsRequest)
	ok.Operation = 99
	var got kmsg.Response
	n.Handle(ci, protocolHeader(ok.Key()), ok, func(r kmsg.Response) { got = r })
	if r, isACL := got.(*kmsg.DescribeACLsResponse); !isACL || r.ErrorCode != kerr.SecurityDisabled.Code {
		t.Errorf("operation 99: %+v", got)
	}
}
