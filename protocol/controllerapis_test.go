package protocol

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The controller apis are registered in key order, apart from the apis a node serves,
// each answered by its registration's ErrorResponse.
func TestControllerApisBesideServed(t *testing.T) {
	if !slices.IsSorted(controllerKeys()) {
		t.Errorf("controller keys not ascending: %v", controllerKeys())
	}
	for _, a := range ControllerApis() {
		if testServed.Lookup(int16(a.Key)) != nil || a.ErrorResponse == nil {
			t.Errorf("%s: served %v, answered as not controller %v", a.Name(), testServed.Lookup(int16(a.Key)) != nil, a.ErrorResponse != nil)
		}
	}
}

// sampleControllerRequest is a request of a controller api at version v naming two of
// each item the api has.
func sampleControllerRequest(key, v int16) kmsg.Request {
	req := kmsg.RequestForKey(key)
	req.SetVersion(v)
	two := func(slice any) {
		// Two default elements of the request's item list (kmsg's defaults are valid
		// values), then names set below where the api echoes them.
		s := reflect.ValueOf(slice).Elem()
		s.Set(reflect.Append(s, reflect.New(s.Type().Elem()).Elem(), reflect.New(s.Type().Elem()).Elem()))
	}
	name := func(i int) string { return fmt.Sprintf("item-%d", i) }
	switch r := req.(type) {
	case *kmsg.CreateTopicsRequest:
		two(&r.Topics)
		r.Topics[0].Topic, r.Topics[1].Topic = name(0), name(1)
	case *kmsg.DeleteTopicsRequest:
		r.TopicNames = []string{name(0), name(1)}
		two(&r.Topics)
		r.Topics[0].Topic, r.Topics[1].Topic = &r.TopicNames[0], &r.TopicNames[1]
		r.Topics[1].TopicID = [16]byte{1}
	case *kmsg.CreatePartitionsRequest:
		two(&r.Topics)
		r.Topics[0].Topic, r.Topics[1].Topic = name(0), name(1)
	case *kmsg.ElectLeadersRequest:
		two(&r.Topics)
		r.Topics[0].Topic, r.Topics[0].Partitions = name(0), []int32{0, 1}
	case *kmsg.AlterPartitionAssignmentsRequest:
		two(&r.Topics)
		r.Topics[0].Topic = name(0)
		two(&r.Topics[0].Partitions)
		r.Topics[0].Partitions[1].Partition = 1
	case *kmsg.ListPartitionReassignmentsRequest:
		two(&r.Topics)
		r.Topics[0].Topic, r.Topics[0].Partitions = name(0), []int32{0, 1}
	case *kmsg.DescribeConfigsRequest:
		two(&r.Resources)
		r.Resources[0].ResourceName, r.Resources[1].ResourceType = name(0), kmsg.ConfigResourceTypeBroker
	case *kmsg.AlterConfigsRequest:
		two(&r.Resources)
		r.Resources[0].ResourceName, r.Resources[1].ResourceType = name(0), kmsg.ConfigResourceTypeBroker
	case *kmsg.IncrementalAlterConfigsRequest:
		two(&r.Resources)
		r.Resources[0].ResourceName, r.Resources[1].ResourceType = name(0), kmsg.ConfigResourceTypeBroker
	case *kmsg.CreateACLsRequest:
		two(&r.Creations)
	case *kmsg.DeleteACLsRequest:
		two(&r.Filters)
	case *kmsg.AlterClientQuotasRequest:
		two(&r.Entries)
		two(&r.Entries[0].Entity)
		r.Entries[0].Entity[0].Type, r.Entries[0].Entity[1].Name = "user", &r.Entries[0].Entity[0].Type
	case *kmsg.DescribeUserSCRAMCredentialsRequest:
		two(&r.Users)
	case *kmsg.AlterUserSCRAMCredentialsRequest:
		two(&r.Deletions)
		two(&r.Upsertions)
		r.Deletions[0].Name, r.Deletions[1].Name = "zed", "alice"
		r.Upsertions[0].Name, r.Upsertions[1].Name = "alice", "bob"
	}
	return req
}

// Every controller api at every advertised version: the request encodes and decodes
// through ParseRequest, and its NOT_CONTROLLER answer is of the same version, carries
// the code in every error field, and survives a kmsg round trip unchanged.
func TestErrorResponseEveryControllerApiVersion(t *testing.T) {
	id := "admin-1"
	for _, key := range controllerKeys() {
		rng, _ := testApis.Versions(key)
		for v := rng.Min; v <= rng.Max; v++ {
			name := fmt.Sprintf("%s v%d", kmsg.NameForKey(key), v)
			frame := AppendRequest(nil, 5, &id, sampleControllerRequest(key, v))
			hdr, req, err := testApis.ParseRequest(frame[4:])
			if err != nil || hdr.APIKey != key || req.GetVersion() != v {
				t.Fatalf("%s: parse %+v %v", name, hdr, err)
			}
			resp, ok := errorResponse(req, kerr.NotController.Code, "The active controller appears to be node 2.")
			if !ok || resp.Key() != key || resp.GetVersion() != v {
				t.Fatalf("%s: ErrorResponse %T %v", name, resp, ok)
			}
			codes := 0
			visitErrorCodes(resp, func(c int16) {
				codes++
				if c != kerr.NotController.Code {
					t.Errorf("%s: error code %d in %+v", name, c, resp)
				}
			})
			if codes == 0 {
				t.Errorf("%s: no error code in %+v", name, resp)
			}
			out := AppendResponse(nil, 5, resp)
			back, err := ParseResponse(out[4:], key, v)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if again := AppendResponse(nil, 5, back); !bytes.Equal(again, out) {
				t.Errorf("%s: round trip differs:\n%x\n%x", name, out, again)
			}
		}
	}
	for _, req := range []kmsg.Request{kmsg.NewPtrFetchRequest(), kmsg.NewPtrProduceRequest(), kmsg.NewPtrVoteRequest()} {
		if resp, ok := errorResponse(req, kerr.NotController.Code, ""); ok {
			t.Errorf("%T answered: %+v", req, resp)
		}
	}
}

// visitErrorCodes calls visit with every ErrorCode field of resp that its version
// encodes, top level and per item (ElectLeaders v0 has no top-level code).
func visitErrorCodes(resp kmsg.Response, visit func(int16)) {
	var walk func(v reflect.Value, top bool)
	walk = func(v reflect.Value, top bool) {
		switch v.Kind() {
		case reflect.Pointer:
			walk(v.Elem(), top)
		case reflect.Slice:
			for i := 0; v.Type().Elem().Kind() == reflect.Struct && i < v.Len(); i++ {
				walk(v.Index(i), false)
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				f := v.Type().Field(i)
				switch {
				case f.Name == "ErrorCode" && !(top && resp.Key() == int16(kmsg.ElectLeaders) && resp.GetVersion() == 0):
					visit(int16(v.Field(i).Int()))
				case f.Name != "ErrorCode":
					walk(v.Field(i), top)
				}
			}
		}
	}
	walk(reflect.ValueOf(resp), true)
}

// Per api: the items Kafka echoes, and which message it sends.
func TestErrorResponsePerApi(t *testing.T) {
	const code = 41 // NOT_CONTROLLER
	msg := "No controller appears to be active."
	generic := kerr.NotController.Description
	str := func(p *string) string {
		if p == nil {
			return "<null>"
		}
		return *p
	}
	for _, tc := range []struct {
		key, version int16
		want         func(resp kmsg.Response) string // "" when as expected
	}{
		{int16(kmsg.CreateTopics), 7, func(r kmsg.Response) string {
			ts := r.(*kmsg.CreateTopicsResponse).Topics
			if len(ts) != 2 || ts[1].Topic != "item-1" || ts[0].ErrorCode != code || str(ts[0].ErrorMessage) != msg ||
				ts[0].NumPartitions != -1 || ts[0].ReplicationFactor != -1 {
				return fmt.Sprintf("%+v", ts)
			}
			return ""
		}},
		{int16(kmsg.DeleteTopics), 5, func(r kmsg.Response) string {
			ts := r.(*kmsg.DeleteTopicsResponse).Topics
			if len(ts) != 2 || str(ts[1].Topic) != "item-1" || ts[1].TopicID != [16]byte{} || ts[0].ErrorMessage != nil {
				return fmt.Sprintf("%+v", ts)
			}
			return ""
		}},
		{int16(kmsg.DeleteTopics), 6, func(r kmsg.Response) string {
			ts := r.(*kmsg.DeleteTopicsResponse).Topics
			if len(ts) != 2 || str(ts[1].Topic) != "item-1" || ts[1].TopicID != [16]byte{1} {
				return fmt.Sprintf("%+v", ts)
			}
			return ""
		}},
		{int16(kmsg.ElectLeaders), 2, func(r kmsg.Response) string {
			e := r.(*kmsg.ElectLeadersResponse)
			if e.ErrorCode != code || len(e.Topics) != 2 || len(e.Topics[0].Partitions) != 2 || len(e.Topics[1].Partitions) != 0 ||
				e.Topics[0].Partitions[1].Partition != 1 || str(e.Topics[0].Partitions[1].ErrorMessage) != msg {
				return fmt.Sprintf("%+v", e)
			}
			return ""
		}},
		{int16(kmsg.ListPartitionReassignments), 0, func(r kmsg.Response) string {
			l := r.(*kmsg.ListPartitionReassignmentsResponse)
			if l.ErrorCode != code || len(l.Topics) != 2 || len(l.Topics[0].Partitions) != 2 || l.Topics[0].Partitions[1].Partition != 1 {
				return fmt.Sprintf("%+v", l)
			}
			return ""
		}},
		{int16(kmsg.DescribeConfigs), 4, func(r kmsg.Response) string {
			rs := r.(*kmsg.DescribeConfigsResponse).Resources
			if len(rs) != 2 || rs[0].ResourceName != "item-0" || rs[1].ResourceType != kmsg.ConfigResourceTypeBroker ||
				str(rs[0].ErrorMessage) != generic {
				return fmt.Sprintf("%+v", rs)
			}
			return ""
		}},
		{int16(kmsg.IncrementalAlterConfigs), 1, func(r kmsg.Response) string {
			rs := r.(*kmsg.IncrementalAlterConfigsResponse).Resources
			if len(rs) != 2 || rs[0].ResourceName != "item-0" || rs[1].ResourceType != kmsg.ConfigResourceTypeBroker || str(rs[0].ErrorMessage) != msg {
				return fmt.Sprintf("%+v", rs)
			}
			return ""
		}},
		{int16(kmsg.CreateACLs), 3, func(r kmsg.Response) string {
			if rs := r.(*kmsg.CreateACLsResponse).Results; len(rs) != 2 || str(rs[1].ErrorMessage) != msg {
				return fmt.Sprintf("%+v", rs)
			}
			return ""
		}},
		{int16(kmsg.DescribeACLs), 3, func(r kmsg.Response) string {
			if d := r.(*kmsg.DescribeACLsResponse); d.ErrorCode != code || str(d.ErrorMessage) != msg || len(d.Resources) != 0 {
				return fmt.Sprintf("%+v", d)
			}
			return ""
		}},
		{int16(kmsg.AlterClientQuotas), 1, func(r kmsg.Response) string {
			es := r.(*kmsg.AlterClientQuotasResponse).Entries
			if len(es) != 2 || len(es[0].Entity) != 2 || es[0].Entity[0].Type != "user" || str(es[0].Entity[1].Name) != "user" ||
				str(es[0].ErrorMessage) != generic {
				return fmt.Sprintf("%+v", es)
			}
			return ""
		}},
		{int16(kmsg.DescribeUserSCRAMCredentials), 0, func(r kmsg.Response) string {
			d := r.(*kmsg.DescribeUserSCRAMCredentialsResponse)
			if d.ErrorCode != code || len(d.Results) != 2 || d.Results[0].User != "" || str(d.Results[1].ErrorMessage) != msg {
				return fmt.Sprintf("%+v", d)
			}
			return ""
		}},
		{int16(kmsg.AlterUserSCRAMCredentials), 0, func(r kmsg.Response) string {
			var users []string
			for _, u := range r.(*kmsg.AlterUserSCRAMCredentialsResponse).Results {
				users = append(users, u.User)
			}
			if !slices.Equal(users, []string{"alice", "bob", "zed"}) {
				return fmt.Sprint(users)
			}
			return ""
		}},
		{int16(kmsg.CreateDelegationToken), 3, func(r kmsg.Response) string {
			c := r.(*kmsg.CreateDelegationTokenResponse)
			if c.ErrorCode != code || c.PrincipalName != "ANONYMOUS" || c.TokenRequesterPrincipalType != "User" || c.MaxTimestamp != -1 || c.HMAC == nil {
				return fmt.Sprintf("%+v", c)
			}
			return ""
		}},
		{int16(kmsg.Envelope), 0, func(r kmsg.Response) string {
			if e := r.(*kmsg.EnvelopeResponse); e.ErrorCode != code || e.ResponseData != nil {
				return fmt.Sprintf("%+v", e)
			}
			return ""
		}},
		{int16(kmsg.BrokerHeartbeat), 2, func(r kmsg.Response) string {
			if h := r.(*kmsg.BrokerHeartbeatResponse); h.ErrorCode != code || !h.IsFenced || h.IsCaughtUp {
				return fmt.Sprintf("%+v", h)
			}
			return ""
		}},
		{int16(kmsg.UnregisterBroker), 0, func(r kmsg.Response) string {
			if u := r.(*kmsg.UnregisterBrokerResponse); u.ErrorCode != code || str(u.ErrorMessage) != msg {
				return fmt.Sprintf("%+v", u)
			}
			return ""
		}},
		{int16(kmsg.UnregisterController), 0, func(r kmsg.Response) string {
			if u := r.(*kmsg.UnregisterControllerResponse); u.ErrorCode != code || str(u.ErrorMessage) != msg {
				return fmt.Sprintf("%+v", u)
			}
			return ""
		}},
	} {
		resp, ok := errorResponse(sampleControllerRequest(tc.key, tc.version), code, msg)
		if !ok {
			t.Fatalf("%s v%d: not answered", kmsg.NameForKey(tc.key), tc.version)
		}
		if bad := tc.want(resp); bad != "" {
			t.Errorf("%s v%d: %s", kmsg.NameForKey(tc.key), tc.version, bad)
		}
	}
}

// Kafka sends no message where it is the error's generic text (ApiError.fromThrowable),
// except where the response always carries one.
func TestErrorResponseGenericMessage(t *testing.T) {
	generic := kerr.NotController.Description
	for _, msg := range []string{"", generic} {
		resp, _ := errorResponse(sampleControllerRequest(int16(kmsg.CreateTopics), 7), kerr.NotController.Code, msg)
		if m := resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorMessage; m != nil {
			t.Errorf("message %q sent as %q", msg, *m)
		}
		resp, _ = errorResponse(sampleControllerRequest(int16(kmsg.UnregisterController), 0), kerr.NotController.Code, msg)
		if m := resp.(*kmsg.UnregisterControllerResponse).ErrorMessage; (m == nil) != (msg == "") || m != nil && *m != msg {
			t.Errorf("UnregisterController message %v for %q", m, msg)
		}
	}
}
