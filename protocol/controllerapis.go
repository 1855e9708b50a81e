package protocol

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ControllerApis are the registrations of the apis a Kafka 4.4.0 controller lists on its
// controller listener beyond the raft and listener apis, with its ranges (asked of a live
// 4.4.0 controller; the interop tests compare them), in key order. A node serves or
// refuses each (node/apis.go); one that is not the active controller answers most of them
// as a Kafka controller that is not active does (ErrorResponse with NOT_CONTROLLER): a
// broker's forwarding channel, a JVM controller or an admin client then looks for the
// active controller again instead of failing on an api missing from ApiVersions. Each
// registration's ErrorResponse is Kafka's getErrorResponse for its type. The list is
// built anew on each call.
func ControllerApis() []Api {
	return []Api{
		errorAnswer(2, 7, createTopicsError),
		errorAnswer(1, 6, deleteTopicsError),
		errorAnswer(1, 3, describeACLsError),
		errorAnswer(1, 3, createACLsError),
		errorAnswer(1, 3, deleteACLsError),
		errorAnswer(1, 4, describeConfigsError),
		errorAnswer(0, 2, alterConfigsError),
		errorAnswer(0, 3, createPartitionsError),
		errorAnswer(1, 3, createDelegationTokenError),
		topCode(1, 2, func(_ *kmsg.RenewDelegationTokenRequest, out *kmsg.RenewDelegationTokenResponse) *int16 {
			return &out.ErrorCode
		}),
		topCode(1, 2, func(_ *kmsg.ExpireDelegationTokenRequest, out *kmsg.ExpireDelegationTokenResponse) *int16 {
			return &out.ErrorCode
		}),
		topCode(1, 3, func(_ *kmsg.DescribeDelegationTokenRequest, out *kmsg.DescribeDelegationTokenResponse) *int16 {
			return &out.ErrorCode
		}),
		errorAnswer(0, 2, electLeadersError),
		errorAnswer(0, 1, incrementalAlterConfigsError),
		errorAnswer(0, 1, alterReassignmentsError),
		errorAnswer(0, 0, listReassignmentsError),
		errorAnswer(0, 1, alterClientQuotasError),
		errorAnswer(0, 0, describeSCRAMError),
		errorAnswer(0, 0, alterSCRAMError),
		// The apis brokers and controllers send over their channel to the active
		// controller: a top-level code. Envelope carries it on the envelope, which makes
		// a forwarding broker look for the controller again.
		topCode(2, 3, func(_ *kmsg.AlterPartitionRequest, out *kmsg.AlterPartitionResponse) *int16 { return &out.ErrorCode }),
		topCode(0, 0, func(_ *kmsg.EnvelopeRequest, out *kmsg.EnvelopeResponse) *int16 { return &out.ErrorCode }),
		topCode(0, 4, func(_ *kmsg.BrokerRegistrationRequest, out *kmsg.BrokerRegistrationResponse) *int16 {
			return &out.ErrorCode
		}),
		topCode(0, 2, func(_ *kmsg.BrokerHeartbeatRequest, out *kmsg.BrokerHeartbeatResponse) *int16 { return &out.ErrorCode }),
		errorAnswer(0, 0, unregisterBrokerError),
		topCode(0, 0, func(_ *kmsg.AllocateProducerIDsRequest, out *kmsg.AllocateProducerIDsResponse) *int16 {
			return &out.ErrorCode
		}),
		topCode(0, 0, func(_ *kmsg.AssignReplicasToDirsRequest, out *kmsg.AssignReplicasToDirsResponse) *int16 {
			return &out.ErrorCode
		}),
		errorAnswer(0, 0, unregisterControllerError),
	}
}

// errorAnswer registers an api answered by fill, which puts e where Kafka's
// getErrorResponse for the api does (top level, or on every topic, partition, resource,
// ACL or user entry echoed from the request). The answer is of the request's version.
func errorAnswer[Req kmsg.Request, Resp kmsg.Response](min, max int16, fill func(Req, Resp, apiError)) Api {
	a := Typed[Req, Resp]{Versions: VersionRange{min, max}}.Api()
	a.ErrorResponse = func(req kmsg.Request, code int16, msg string) kmsg.Response {
		r, ok := req.(Req)
		if !ok {
			return nil
		}
		resp := req.ResponseKind().(Resp)
		fill(r, resp, newApiError(code, msg))
		return resp
	}
	return a
}

// topCode registers an api whose error answer is the code alone, at the top level.
func topCode[Req kmsg.Request, Resp kmsg.Response](min, max int16, code func(Req, Resp) *int16) Api {
	return errorAnswer(min, max, func(r Req, out Resp, e apiError) { *code(r, out) = e.code })
}

// apiError is Kafka's ApiError: a code and the message sent with it.
type apiError struct {
	code    int16
	msg     *string // nil when the message is the error's generic text (ApiError.fromThrowable)
	raw     *string // the exception's message unchanged (nil for none)
	generic *string // the error's generic text (Errors.message())
}

func newApiError(code int16, msg string) apiError {
	e := apiError{code: code}
	if ke, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		d := ke.Description
		e.generic = &d
	}
	if msg != "" {
		e.raw = &msg
		if e.generic == nil || msg != *e.generic {
			e.msg = &msg
		}
	}
	return e
}

func createTopicsError(r *kmsg.CreateTopicsRequest, out *kmsg.CreateTopicsResponse, e apiError) {
	for _, t := range r.Topics {
		res := kmsg.NewCreateTopicsResponseTopic()
		res.Topic, res.ErrorCode, res.ErrorMessage = t.Topic, e.code, e.msg
		res.Configs = []kmsg.CreateTopicsResponseTopicConfig{} // Kafka sends an empty list (v5+), not null
		out.Topics = append(out.Topics, res)
	}
}

func createPartitionsError(r *kmsg.CreatePartitionsRequest, out *kmsg.CreatePartitionsResponse, e apiError) {
	for _, t := range r.Topics {
		res := kmsg.NewCreatePartitionsResponseTopic()
		res.Topic, res.ErrorCode, res.ErrorMessage = t.Topic, e.code, e.msg
		out.Topics = append(out.Topics, res)
	}
}

// deleteTopicsError echoes names (v0-5) or names and ids (v6+); Kafka sets no message.
func deleteTopicsError(r *kmsg.DeleteTopicsRequest, out *kmsg.DeleteTopicsResponse, e apiError) {
	add := func(name *string, id [16]byte) {
		res := kmsg.NewDeleteTopicsResponseTopic()
		res.Topic, res.TopicID, res.ErrorCode = name, id, e.code
		out.Topics = append(out.Topics, res)
	}
	if r.Version >= 6 {
		for _, t := range r.Topics {
			add(t.Topic, t.TopicID)
		}
		return
	}
	for _, name := range r.TopicNames {
		add(&name, [16]byte{})
	}
}

// electLeadersError has a top-level code (v1+) and one entry per named partition; a
// request for all partitions (null topics) gets none.
func electLeadersError(r *kmsg.ElectLeadersRequest, out *kmsg.ElectLeadersResponse, e apiError) {
	out.ErrorCode = e.code
	for _, t := range r.Topics {
		res := kmsg.NewElectLeadersResponseTopic()
		res.Topic = t.Topic
		for _, p := range t.Partitions {
			pr := kmsg.NewElectLeadersResponseTopicPartition()
			pr.Partition, pr.ErrorCode, pr.ErrorMessage = p, e.code, e.msg
			res.Partitions = append(res.Partitions, pr)
		}
		out.Topics = append(out.Topics, res)
	}
}

func alterReassignmentsError(r *kmsg.AlterPartitionAssignmentsRequest, out *kmsg.AlterPartitionAssignmentsResponse, e apiError) {
	out.ErrorCode, out.ErrorMessage = e.code, e.msg
	for _, t := range r.Topics {
		res := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		res.Topic = t.Topic
		for _, p := range t.Partitions {
			pr := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			pr.Partition, pr.ErrorCode, pr.ErrorMessage = p.Partition, e.code, e.msg
			res.Partitions = append(res.Partitions, pr)
		}
		out.Topics = append(out.Topics, res)
	}
}

// listReassignmentsError echoes the partitions asked for, without replicas or codes.
func listReassignmentsError(r *kmsg.ListPartitionReassignmentsRequest, out *kmsg.ListPartitionReassignmentsResponse, e apiError) {
	out.ErrorCode, out.ErrorMessage = e.code, e.msg
	for _, t := range r.Topics {
		res := kmsg.NewListPartitionReassignmentsResponseTopic()
		res.Topic = t.Topic
		for _, p := range t.Partitions {
			pr := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
			pr.Partition = p
			res.Partitions = append(res.Partitions, pr)
		}
		out.Topics = append(out.Topics, res)
	}
}

// describeConfigsError answers per resource with the generic text, as Kafka's
// DescribeConfigsRequest does.
func describeConfigsError(r *kmsg.DescribeConfigsRequest, out *kmsg.DescribeConfigsResponse, e apiError) {
	for _, res := range r.Resources {
		o := kmsg.NewDescribeConfigsResponseResource()
		o.ResourceType, o.ResourceName, o.ErrorCode, o.ErrorMessage = res.ResourceType, res.ResourceName, e.code, e.generic
		out.Resources = append(out.Resources, o)
	}
}

func alterConfigsError(r *kmsg.AlterConfigsRequest, out *kmsg.AlterConfigsResponse, e apiError) {
	for _, res := range r.Resources {
		o := kmsg.NewAlterConfigsResponseResource()
		o.ResourceType, o.ResourceName, o.ErrorCode, o.ErrorMessage = res.ResourceType, res.ResourceName, e.code, e.msg
		out.Resources = append(out.Resources, o)
	}
}

func incrementalAlterConfigsError(r *kmsg.IncrementalAlterConfigsRequest, out *kmsg.IncrementalAlterConfigsResponse, e apiError) {
	for _, res := range r.Resources {
		o := kmsg.NewIncrementalAlterConfigsResponseResource()
		o.ResourceType, o.ResourceName, o.ErrorCode, o.ErrorMessage = res.ResourceType, res.ResourceName, e.code, e.msg
		out.Resources = append(out.Resources, o)
	}
}

// describeACLsError: DescribeAcls has a top-level code; CreateAcls and DeleteAcls one
// result per creation or filter.
func describeACLsError(_ *kmsg.DescribeACLsRequest, out *kmsg.DescribeACLsResponse, e apiError) {
	out.ErrorCode, out.ErrorMessage = e.code, e.msg
}

func createACLsError(r *kmsg.CreateACLsRequest, out *kmsg.CreateACLsResponse, e apiError) {
	for range r.Creations {
		o := kmsg.NewCreateACLsResponseResult()
		o.ErrorCode, o.ErrorMessage = e.code, e.msg
		out.Results = append(out.Results, o)
	}
}

func deleteACLsError(r *kmsg.DeleteACLsRequest, out *kmsg.DeleteACLsResponse, e apiError) {
	for range r.Filters {
		o := kmsg.NewDeleteACLsResponseResult()
		o.ErrorCode, o.ErrorMessage = e.code, e.msg
		out.Results = append(out.Results, o)
	}
}

// alterClientQuotasError echoes every entry's entity with the generic text.
func alterClientQuotasError(r *kmsg.AlterClientQuotasRequest, out *kmsg.AlterClientQuotasResponse, e apiError) {
	for _, entry := range r.Entries {
		o := kmsg.NewAlterClientQuotasResponseEntry()
		o.ErrorCode, o.ErrorMessage = e.code, e.generic
		for _, ent := range entry.Entity {
			oe := kmsg.NewAlterClientQuotasResponseEntryEntity()
			oe.Type, oe.Name = ent.Type, ent.Name
			o.Entity = append(o.Entity, oe)
		}
		out.Entries = append(out.Entries, o)
	}
}

// describeSCRAMError: a top-level code and one result per user asked for, without the
// user's name (as Kafka).
func describeSCRAMError(r *kmsg.DescribeUserSCRAMCredentialsRequest, out *kmsg.DescribeUserSCRAMCredentialsResponse, e apiError) {
	out.ErrorCode, out.ErrorMessage = e.code, e.msg
	for range r.Users {
		o := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		o.ErrorCode, o.ErrorMessage = e.code, e.msg
		out.Results = append(out.Results, o)
	}
}

// alterSCRAMError: one result per distinct user named by a deletion or upsertion, sorted.
func alterSCRAMError(r *kmsg.AlterUserSCRAMCredentialsRequest, out *kmsg.AlterUserSCRAMCredentialsResponse, e apiError) {
	var users []string
	for _, d := range r.Deletions {
		users = append(users, d.Name)
	}
	for _, u := range r.Upsertions {
		users = append(users, u.Name)
	}
	slices.Sort(users)
	for _, u := range slices.Compact(users) {
		o := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		o.User, o.ErrorCode, o.ErrorMessage = u, e.code, e.msg
		out.Results = append(out.Results, o)
	}
}

// anonymous is KafkaPrincipal.ANONYMOUS, the owner Kafka names in a failed
// CreateDelegationToken answer.
const anonymousType, anonymousName = "User", "ANONYMOUS"

// createDelegationTokenError: a failed creation names the anonymous principal and -1
// timestamps.
func createDelegationTokenError(_ *kmsg.CreateDelegationTokenRequest, out *kmsg.CreateDelegationTokenResponse, e apiError) {
	out.ErrorCode = e.code
	out.PrincipalType, out.PrincipalName = anonymousType, anonymousName
	out.TokenRequesterPrincipalType, out.TokenRequesterPrincipalName = anonymousType, anonymousName
	out.IssueTimestamp, out.ExpiryTimestamp, out.MaxTimestamp = -1, -1, -1
	out.HMAC = []byte{}
}

// unregisterBrokerError and unregisterControllerError carry the exception's text
// unchanged, as Kafka 4.4 sets it.
func unregisterBrokerError(_ *kmsg.UnregisterBrokerRequest, out *kmsg.UnregisterBrokerResponse, e apiError) {
	out.ErrorCode, out.ErrorMessage = e.code, e.raw
}

// ControllerRegistrationApi is ControllerRegistration (api 70, v0) with Kafka 4.4.0's
// error answer. A node serves the api itself (to the active controller, or turning a JVM
// away), so it is not among ControllerApis; the active side's refusals still need Kafka's
// answer, where a registration without one would close the connection.
func ControllerRegistrationApi() Api { return errorAnswer(0, 0, controllerRegistrationError) }

// controllerRegistrationError carries the error's generic text, whatever the exception
// said: 4.4.0's ControllerRegistrationRequest.getErrorResponse sets Errors.message().
func controllerRegistrationError(_ *kmsg.ControllerRegistrationRequest, out *kmsg.ControllerRegistrationResponse, e apiError) {
	out.ErrorCode, out.ErrorMessage = e.code, e.generic
}

func unregisterControllerError(_ *kmsg.UnregisterControllerRequest, out *kmsg.UnregisterControllerResponse, e apiError) {
	out.ErrorCode, out.ErrorMessage = e.code, e.raw
}

// DelegationTokenAnswer is a delegation token request's refusal with code for
// principal (User:name, the requester), as Kafka's ControllerApis builds it:
// CreateDelegationToken names the owner the request asks for, or the
// requester, and the requester (v3+), with timestamps ts, an empty token id
// and hmac (CreateDelegationTokenResponse.prepareResponse); Renew and Expire
// carry ts as the expiry. Nil for an owner name without a type, which Kafka's
// KafkaPrincipal refuses (UNKNOWN_SERVER_ERROR), and for other requests.
func DelegationTokenAnswer(req kmsg.Request, code int16, principal string, ts int64) kmsg.Response {
	typ, name, _ := strings.Cut(principal, ":")
	switch r := req.(type) {
	case *kmsg.CreateDelegationTokenRequest:
		resp := r.ResponseKind().(*kmsg.CreateDelegationTokenResponse)
		resp.ErrorCode = code
		resp.PrincipalType, resp.PrincipalName = typ, name
		if r.OwnerPrincipalName != nil && *r.OwnerPrincipalName != "" {
			if r.OwnerPrincipalType == nil {
				return nil
			}
			resp.PrincipalType, resp.PrincipalName = *r.OwnerPrincipalType, *r.OwnerPrincipalName
		}
		if r.Version >= 3 {
			resp.TokenRequesterPrincipalType, resp.TokenRequesterPrincipalName = typ, name
		}
		resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp = ts, ts, ts
		resp.HMAC = []byte{}
		return resp
	case *kmsg.RenewDelegationTokenRequest:
		resp := r.ResponseKind().(*kmsg.RenewDelegationTokenResponse)
		resp.ErrorCode, resp.ExpiryTimestamp = code, ts
		return resp
	case *kmsg.ExpireDelegationTokenRequest:
		resp := r.ResponseKind().(*kmsg.ExpireDelegationTokenResponse)
		resp.ErrorCode, resp.ExpiryTimestamp = code, ts
		return resp
	}
	return nil
}
