package controller

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

// The active controller's answers to the controller apis kraftd does not
// implement (docs/design/controller.md 5, "Refused apis"): a clear error a
// client surfaces and does not retry, never NOT_CONTROLLER, which brokers
// and admin clients retry forever. A standby still answers them
// NOT_CONTROLLER (Serve), as a Kafka controller that is not active does.
// Each waits, as any answer without records, for what was appended before
// it to commit.

// Messages of the refusals.
const (
	noReassignment = "kraftd does not implement partition reassignment."
)

// refuse answers r with resp once what was appended before commits.
func (a *App) refuse(now time.Time, w node.Writer, r node.ControllerRequest, resp kmsg.Response) {
	a.apply(now, w, r, nil, func(err error) {
		if err != nil {
			a.notController(r)
			return
		}
		r.Respond(resp)
	})
}

// alterPartitionAssignments refuses AlterPartitionReassignments (api 45):
// UNSUPPORTED_VERSION at the top and on every partition.
func (a *App) alterPartitionAssignments(now time.Time, _ raft.Status, w node.Writer, r node.ControllerRequest, req *kmsg.AlterPartitionAssignmentsRequest) {
	resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	msg := noReassignment
	resp.ErrorCode, resp.ErrorMessage = kerr.UnsupportedVersion.Code, &msg
	for _, t := range req.Topics {
		rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, kerr.UnsupportedVersion.Code, &msg
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	a.refuse(now, w, r, resp)
}

// delegationToken answers CreateDelegationToken, RenewDelegationToken and
// ExpireDelegationToken that reached the controller (the listener allows
// token requests, node/refusals.go) as Kafka's DelegationTokenControlManager
// does without delegation.token.secret.key: DELEGATION_TOKEN_AUTH_DISABLED,
// naming the owner and the requester, timestamps and expiry 0.
func (a *App) delegationToken(now time.Time, _ raft.Status, w node.Writer, r node.ControllerRequest) {
	resp := protocol.DelegationTokenAnswer(r.Req, kerr.DelegationTokenAuthDisabled.Code, r.Principal, 0)
	if resp == nil {
		r.Fail(kerr.UnknownServerError.Code, "")
		return
	}
	a.refuse(now, w, r, resp)
}
