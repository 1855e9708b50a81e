package protocol

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// controllerApis are the apis a Kafka 4.4.0 controller lists on its controller listener
// beyond servedApis, with its ranges (asked of a live 4.4.0 controller; the interop tests
// compare them). kraftd keeps no metadata, so it answers each of them as a Kafka controller
// that is not active does (ErrorResponse with NOT_CONTROLLER): a broker's forwarding
// channel, a JVM controller or an admin client then looks for the active controller again
// instead of failing on an api missing from ApiVersions. kmsg encodes every version
// listed (checked by the tests).
var controllerApis = [...]struct {
	key int16
	VersionRange
}{
	{int16(kmsg.CreateTopics), VersionRange{2, 7}},
	{int16(kmsg.DeleteTopics), VersionRange{1, 6}},
	{int16(kmsg.DescribeACLs), VersionRange{1, 3}},
	{int16(kmsg.CreateACLs), VersionRange{1, 3}},
	{int16(kmsg.DeleteACLs), VersionRange{1, 3}},
	{int16(kmsg.DescribeConfigs), VersionRange{1, 4}},
	{int16(kmsg.AlterConfigs), VersionRange{0, 2}},
	{int16(kmsg.CreatePartitions), VersionRange{0, 3}},
	{int16(kmsg.CreateDelegationToken), VersionRange{1, 3}},
	{int16(kmsg.RenewDelegationToken), VersionRange{1, 2}},
	{int16(kmsg.ExpireDelegationToken), VersionRange{1, 2}},
	{int16(kmsg.DescribeDelegationToken), VersionRange{1, 3}},
	{int16(kmsg.ElectLeaders), VersionRange{0, 2}},
	{int16(kmsg.IncrementalAlterConfigs), VersionRange{0, 1}},
	{int16(kmsg.AlterPartitionAssignments), VersionRange{0, 1}},
	{int16(kmsg.ListPartitionReassignments), VersionRange{0, 0}},
	{int16(kmsg.AlterClientQuotas), VersionRange{0, 1}},
	{int16(kmsg.DescribeUserSCRAMCredentials), VersionRange{0, 0}},
	{int16(kmsg.AlterUserSCRAMCredentials), VersionRange{0, 0}},
	{int16(kmsg.AlterPartition), VersionRange{2, 3}},
	{int16(kmsg.Envelope), VersionRange{0, 0}},
	{int16(kmsg.BrokerRegistration), VersionRange{0, 4}},
	{int16(kmsg.BrokerHeartbeat), VersionRange{0, 2}},
	{int16(kmsg.UnregisterBroker), VersionRange{0, 0}},
	{int16(kmsg.AllocateProducerIDs), VersionRange{0, 0}},
	{int16(kmsg.AssignReplicasToDirs), VersionRange{0, 0}},
	{int16(kmsg.UnregisterController), VersionRange{0, 0}},
}

// ControllerKeys returns the api keys kraftd answers as a non-active controller, ascending.
func ControllerKeys() []int16 {
	keys := make([]int16, len(controllerApis))
	for i, a := range controllerApis {
		keys[i] = a.key
	}
	return keys
}

// ErrorResponse builds the answer Kafka's AbstractRequest.getErrorResponse gives req when
// its handling fails with the given error: the same version as req, the error where the
// request type carries it (top level, or on every topic, partition, resource, ACL or user
// entry echoed from req, as Kafka fills them). msg is the exception's message; Kafka sends
// none where it equals the error's generic text, and some types carry the generic text
// instead (DescribeConfigs, AlterClientQuotas). ok is false for a request type outside
// controllerApis.
func ErrorResponse(req kmsg.Request, code int16, msg string) (resp kmsg.Response, ok bool) {
	e := newApiError(code, msg)
	resp = req.ResponseKind()
	switch r := req.(type) {
	case *kmsg.CreateTopicsRequest:
		createTopicsError(r, resp.(*kmsg.CreateTopicsResponse), e)
	case *kmsg.DeleteTopicsRequest:
		deleteTopicsError(r, resp.(*kmsg.DeleteTopicsResponse), e)
	case *kmsg.CreatePartitionsRequest:
		out := resp.(*kmsg.CreatePartitionsResponse)
		for _, t := range r.Topics {
			res := kmsg.NewCreatePartitionsResponseTopic()
			res.Topic, res.ErrorCode, res.ErrorMessage = t.Topic, e.code, e.msg
			out.Topics = append(out.Topics, res)
		}
	case *kmsg.ElectLeadersRequest:
		electLeadersError(r, resp.(*kmsg.ElectLeadersResponse), e)
	case *kmsg.AlterPartitionAssignmentsRequest:
		alterReassignmentsError(r, resp.(*kmsg.AlterPartitionAssignmentsResponse), e)
	case *kmsg.ListPartitionReassignmentsRequest:
		listReassignmentsError(r, resp.(*kmsg.ListPartitionReassignmentsResponse), e)
	case *kmsg.DescribeConfigsRequest, *kmsg.AlterConfigsRequest, *kmsg.IncrementalAlterConfigsRequest:
		configsError(req, resp, e)
	case *kmsg.DescribeACLsRequest, *kmsg.CreateACLsRequest, *kmsg.DeleteACLsRequest:
		aclsError(req, resp, e)
	case *kmsg.AlterClientQuotasRequest:
		alterClientQuotasError(r, resp.(*kmsg.AlterClientQuotasResponse), e)
	case *kmsg.DescribeUserSCRAMCredentialsRequest, *kmsg.AlterUserSCRAMCredentialsRequest:
		scramError(req, resp, e)
	case *kmsg.CreateDelegationTokenRequest, *kmsg.RenewDelegationTokenRequest,
		*kmsg.ExpireDelegationTokenRequest, *kmsg.DescribeDelegationTokenRequest:
		delegationTokenError(resp, e)
	default:
		return brokerChannelError(resp, e)
	}
	return resp, true
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

// configsError answers the three config apis per resource. DescribeConfigs carries the
// generic text, as Kafka's DescribeConfigsRequest does.
func configsError(req kmsg.Request, resp kmsg.Response, e apiError) {
	switch r := req.(type) {
	case *kmsg.DescribeConfigsRequest:
		out := resp.(*kmsg.DescribeConfigsResponse)
		for _, res := range r.Resources {
			o := kmsg.NewDescribeConfigsResponseResource()
			o.ResourceType, o.ResourceName, o.ErrorCode, o.ErrorMessage = res.ResourceType, res.ResourceName, e.code, e.generic
			out.Resources = append(out.Resources, o)
		}
	case *kmsg.AlterConfigsRequest:
		out := resp.(*kmsg.AlterConfigsResponse)
		for _, res := range r.Resources {
			o := kmsg.NewAlterConfigsResponseResource()
			o.ResourceType, o.ResourceName, o.ErrorCode, o.ErrorMessage = res.ResourceType, res.ResourceName, e.code, e.msg
			out.Resources = append(out.Resources, o)
		}
	case *kmsg.IncrementalAlterConfigsRequest:
		out := resp.(*kmsg.IncrementalAlterConfigsResponse)
		for _, res := range r.Resources {
			o := kmsg.NewIncrementalAlterConfigsResponseResource()
			o.ResourceType, o.ResourceName, o.ErrorCode, o.ErrorMessage = res.ResourceType, res.ResourceName, e.code, e.msg
			out.Resources = append(out.Resources, o)
		}
	}
}

// aclsError: DescribeAcls has a top-level code; CreateAcls and DeleteAcls one result per
// creation or filter.
func aclsError(req kmsg.Request, resp kmsg.Response, e apiError) {
	switch r := req.(type) {
	case *kmsg.DescribeACLsRequest:
		out := resp.(*kmsg.DescribeACLsResponse)
		out.ErrorCode, out.ErrorMessage = e.code, e.msg
	case *kmsg.CreateACLsRequest:
		out := resp.(*kmsg.CreateACLsResponse)
		for range r.Creations {
			o := kmsg.NewCreateACLsResponseResult()
			o.ErrorCode, o.ErrorMessage = e.code, e.msg
			out.Results = append(out.Results, o)
		}
	case *kmsg.DeleteACLsRequest:
		out := resp.(*kmsg.DeleteACLsResponse)
		for range r.Filters {
			o := kmsg.NewDeleteACLsResponseResult()
			o.ErrorCode, o.ErrorMessage = e.code, e.msg
			out.Results = append(out.Results, o)
		}
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

// scramError: DescribeUserScramCredentials has a top-level code and one result per user
// asked for, without the user's name (as Kafka); AlterUserScramCredentials one result per
// distinct user named by a deletion or upsertion, sorted.
func scramError(req kmsg.Request, resp kmsg.Response, e apiError) {
	switch r := req.(type) {
	case *kmsg.DescribeUserSCRAMCredentialsRequest:
		out := resp.(*kmsg.DescribeUserSCRAMCredentialsResponse)
		out.ErrorCode, out.ErrorMessage = e.code, e.msg
		for range r.Users {
			o := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
			o.ErrorCode, o.ErrorMessage = e.code, e.msg
			out.Results = append(out.Results, o)
		}
	case *kmsg.AlterUserSCRAMCredentialsRequest:
		out := resp.(*kmsg.AlterUserSCRAMCredentialsResponse)
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
}

// anonymous is KafkaPrincipal.ANONYMOUS, the owner Kafka names in a failed
// CreateDelegationToken answer.
const anonymousType, anonymousName = "User", "ANONYMOUS"

// delegationTokenError: a top-level code; a failed creation names the anonymous principal
// and -1 timestamps.
func delegationTokenError(resp kmsg.Response, e apiError) {
	switch out := resp.(type) {
	case *kmsg.CreateDelegationTokenResponse:
		out.ErrorCode = e.code
		out.PrincipalType, out.PrincipalName = anonymousType, anonymousName
		out.TokenRequesterPrincipalType, out.TokenRequesterPrincipalName = anonymousType, anonymousName
		out.IssueTimestamp, out.ExpiryTimestamp, out.MaxTimestamp = -1, -1, -1
		out.HMAC = []byte{}
	case *kmsg.RenewDelegationTokenResponse:
		out.ErrorCode = e.code
	case *kmsg.ExpireDelegationTokenResponse:
		out.ErrorCode = e.code
	case *kmsg.DescribeDelegationTokenResponse:
		out.ErrorCode = e.code
	}
}

// brokerChannelError answers the apis brokers and controllers send over their channel to
// the active controller: a top-level code (and, for UnregisterBroker and
// UnregisterController, the exception's text unchanged, as Kafka 4.4 sets it). Envelope
// carries the code on the envelope, which makes a forwarding broker look for the
// controller again.
func brokerChannelError(resp kmsg.Response, e apiError) (kmsg.Response, bool) {
	switch out := resp.(type) {
	case *kmsg.AlterPartitionResponse:
		out.ErrorCode = e.code
	case *kmsg.EnvelopeResponse:
		out.ErrorCode = e.code
	case *kmsg.BrokerRegistrationResponse:
		out.ErrorCode = e.code
	case *kmsg.BrokerHeartbeatResponse:
		out.ErrorCode = e.code
	case *kmsg.UnregisterBrokerResponse:
		out.ErrorCode, out.ErrorMessage = e.code, e.raw
	case *kmsg.AllocateProducerIDsResponse:
		out.ErrorCode = e.code
	case *kmsg.AssignReplicasToDirsResponse:
		out.ErrorCode = e.code
	case *kmsg.UnregisterControllerResponse:
		out.ErrorCode, out.ErrorMessage = e.code, e.raw
	default:
		return nil, false
	}
	return resp, true
}
