package protocol

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// voteApi is a registration as a layer writes one.
func voteApi() Api {
	return Typed[*kmsg.VoteRequest, *kmsg.VoteResponse]{
		Versions:  VersionRange{0, 2},
		ClusterID: func(r *kmsg.VoteRequest) *string { return r.ClusterID },
		TopError:  func(r *kmsg.VoteResponse) *int16 { return &r.ErrorCode },
		PartitionError: func(r *kmsg.VoteResponse) int16 {
			return FirstNonZero(r.Topics, func(t *kmsg.VoteResponseTopic) []kmsg.VoteResponseTopicPartition { return t.Partitions },
				func(p *kmsg.VoteResponseTopicPartition) int16 { return p.ErrorCode })
		},
	}.Api()
}

func TestNewTableRefusesBadRegistrations(t *testing.T) {
	for _, c := range []struct {
		name string
		apis []Api
		want string
	}{
		{"twice", []Api{voteApi(), voteApi()}, "Vote (key 52) registered twice"},
		{"unknown key", []Api{{Key: 120}}, "api key 120 is unknown to kmsg"},
		{"negative key", []Api{{Key: -1}}, "api key -1 is unknown to kmsg"},
		{"past kmsg", []Api{{Key: kmsg.Vote, Versions: VersionRange{0, 99}}}, "Vote versions v0-v99 outside kmsg's v0-v2"},
		{"negative", []Api{{Key: kmsg.Vote, Versions: VersionRange{-1, 1}}}, "outside"},
		{"inverted", []Api{{Key: kmsg.Fetch, Versions: VersionRange{5, 4}}}, "outside"},
	} {
		if _, err := NewTable(c.apis); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// Two lists may not register one api either.
	if _, err := NewTable([]Api{voteApi()}, []Api{{Key: kmsg.Vote}}); err == nil {
		t.Error("an api of two lists accepted")
	}
}

func TestTypedKeyIsTheMessages(t *testing.T) {
	if a := voteApi(); a.Key != kmsg.Vote || a.Name() != "Vote" {
		t.Fatalf("key %d %q", a.Key, a.Name())
	}
	defer func() {
		if recover() == nil {
			t.Error("a Vote request with a Fetch response registered")
		}
	}()
	Typed[*kmsg.VoteRequest, *kmsg.FetchResponse]{}.Api()
}

func TestTableLookups(t *testing.T) {
	tbl := MustTable([]Api{voteApi(), {Key: kmsg.ApiVersions, Versions: VersionRange{0, 5}}}, []Api{{Key: kmsg.Fetch, Versions: VersionRange{4, 18}}})
	if got := tbl.Keys(); len(got) != 3 || got[0] != 1 || got[1] != 18 || got[2] != 52 {
		t.Fatalf("keys %v, want ascending 1 18 52", got)
	}
	if r, ok := tbl.Versions(1); !ok || r != (VersionRange{4, 18}) {
		t.Fatalf("Fetch %v %v", r, ok)
	}
	for _, k := range []int16{-1, 0, 53, MaxKey, 1000} {
		if tbl.Lookup(k) != nil {
			t.Errorf("key %d listed", k)
		}
	}
	// A copy of each registration is kept: changing the caller's list later changes nothing.
	list := []Api{voteApi()}
	tbl = MustTable(list)
	list[0].Versions.Max = 1
	if r, _ := tbl.Versions(52); r.Max != 2 {
		t.Fatalf("table changed with its input: %v", r)
	}

	id := "c"
	vote := kmsg.NewPtrVoteRequest()
	vote.ClusterID = &id
	if got, ok := tbl.ClusterID(vote); !ok || got != &id {
		t.Errorf("cluster id %v %v", got, ok)
	}
	if _, ok := tbl.ClusterID(kmsg.NewPtrFetchRequest()); ok {
		t.Error("cluster id of an unlisted api")
	}
}

func TestErrorCodeReadsTopLevelThenPartitions(t *testing.T) {
	tbl := MustTable([]Api{voteApi(), {Key: kmsg.Fetch, Versions: VersionRange{4, 18}}})
	resp := kmsg.NewPtrVoteResponse()
	for _, code := range []int16{0, kerr.FencedLeaderEpoch.Code, kerr.InvalidRequest.Code} {
		tp := kmsg.NewVoteResponseTopic()
		p := kmsg.NewVoteResponseTopicPartition()
		p.ErrorCode = code
		tp.Partitions = append(tp.Partitions, p)
		resp.Topics = append(resp.Topics, tp)
	}
	if got := tbl.ErrorCode(resp); got != kerr.FencedLeaderEpoch.Code {
		t.Errorf("partition error: %d", got)
	}
	if got := tbl.TopError(resp); got != 0 {
		t.Errorf("top-level error: %d", got)
	}
	*tbl.Lookup(52).TopError(resp) = kerr.InconsistentClusterID.Code
	if resp.ErrorCode != kerr.InconsistentClusterID.Code || tbl.ErrorCode(resp) != resp.ErrorCode || tbl.TopError(resp) != resp.ErrorCode {
		t.Errorf("set top-level error %d, read %d/%d", resp.ErrorCode, tbl.ErrorCode(resp), tbl.TopError(resp))
	}
	if tbl.ErrorCode(kmsg.NewPtrVoteResponse()) != 0 {
		t.Error("no error read as one")
	}
	// Without accessors nothing is read; a message of another api reads as nothing.
	fetch := kmsg.NewPtrFetchResponse()
	fetch.ErrorCode = 1
	if tbl.ErrorCode(fetch) != 0 || tbl.TopError(fetch) != 0 {
		t.Error("an error read without an accessor")
	}
	if a := tbl.Lookup(52); a.TopError(fetch) != nil || a.PartitionError(fetch) != 0 || a.ClusterID(kmsg.NewPtrFetchRequest()) != nil {
		t.Error("a Fetch message read through Vote's accessors")
	}
}

func TestTableParseRequest(t *testing.T) {
	tbl := MustTable([]Api{voteApi(), {Key: kmsg.Fetch, Versions: VersionRange{4, 18}}})
	id := "client"
	fetch := kmsg.NewPtrFetchRequest()
	fetch.SetVersion(13)
	hdr, req, err := tbl.ParseRequest(AppendRequest(nil, 5, &id, fetch)[4:])
	if err != nil || hdr.APIKey != 1 || req.GetVersion() != 13 {
		t.Fatalf("%+v %v %v", hdr, req, err)
	}
	fetch.SetVersion(3)
	if _, _, err := tbl.ParseRequest(AppendRequest(nil, 5, &id, fetch)[4:]); !errors.Is(err, ErrUnsupportedVersion) ||
		!strings.Contains(err.Error(), "Fetch v3 (served: v4-v18)") {
		t.Fatalf("v3: %v", err)
	}
	av := kmsg.NewPtrApiVersionsRequest()
	if _, _, err := tbl.ParseRequest(AppendRequest(nil, 5, &id, av)[4:]); !errors.Is(err, ErrUnsupportedAPI) {
		t.Fatalf("an api outside the table: %v", err)
	}
}

// The ApiVersions answer lists exactly the table, ascending; without ApiVersions in the
// table every version is refused and no range offered.
func TestApiVersionsResponseListsTheTable(t *testing.T) {
	tbl := MustTable([]Api{voteApi(), {Key: kmsg.ApiVersions, Versions: VersionRange{0, 5}}, {Key: kmsg.Fetch, Versions: VersionRange{4, 18}}})
	resp := tbl.ApiVersionsResponse(3)
	if resp.ErrorCode != 0 || resp.Version != 3 || len(resp.ApiKeys) != 3 {
		t.Fatalf("%+v", resp)
	}
	for i, a := range tbl.Apis() {
		k := resp.ApiKeys[i]
		if k.ApiKey != int16(a.Key) || k.MinVersion != a.Versions.Min || k.MaxVersion != a.Versions.Max {
			t.Errorf("entry %d %+v, registration %+v", i, k, a)
		}
	}
	if resp := tbl.ApiVersionsResponse(6); resp.ErrorCode != kerr.UnsupportedVersion.Code || len(resp.ApiKeys) != 1 ||
		resp.ApiKeys[0].MaxVersion != 5 || resp.Version != 0 {
		t.Fatalf("v6: %+v", resp)
	}
	none := MustTable([]Api{voteApi()})
	if resp := none.ApiVersionsResponse(0); resp.ErrorCode != kerr.UnsupportedVersion.Code || len(resp.ApiKeys) != 0 {
		t.Fatalf("no ApiVersions: %+v", resp)
	}
}

// Every controller api's registration answers its own request type and no other.
func TestControllerApisAnswerTheirType(t *testing.T) {
	apis := ControllerApis()
	tbl := MustTable(apis)
	if len(tbl.Keys()) != len(apis) {
		t.Fatalf("%d registrations, %d keys", len(apis), len(tbl.Keys()))
	}
	for _, a := range apis {
		req := kmsg.RequestForKey(int16(a.Key))
		req.SetVersion(a.Versions.Max)
		resp := a.ErrorResponse(req, kerr.NotController.Code, "")
		if resp == nil || resp.Key() != int16(a.Key) {
			t.Errorf("%s: answered %v", a.Name(), resp)
		}
		if a.ErrorResponse(kmsg.NewPtrVoteRequest(), kerr.NotController.Code, "") != nil {
			t.Errorf("%s: answered a Vote request", a.Name())
		}
	}
}

// ControllerRegistration's error answer carries the code and the error's generic
// text, not the exception's message (Kafka 4.4.0's getErrorResponse).
func TestControllerRegistrationErrorAnswer(t *testing.T) {
	a := ControllerRegistrationApi()
	if a.Key != kmsg.ControllerRegistration || a.Versions != (VersionRange{0, 0}) {
		t.Fatalf("registration %+v", a)
	}
	for _, c := range []struct {
		code int16
		msg  string
		want *string
	}{
		{kerr.NotController.Code, "The active controller appears to be node 2.", kmsg.StringPtr("This is not the correct controller for this cluster.")},
		{kerr.UnknownServerError.Code, "Cannot serialize ephemeral port 0 in ListenerInfo.", kmsg.StringPtr("The server experienced an unexpected error when processing the request.")},
		{kerr.RequestTimedOut.Code, "The controller's request queue is full.", kmsg.StringPtr("The request timed out.")},
	} {
		resp, ok := a.ErrorResponse(kmsg.NewPtrControllerRegistrationRequest(), c.code, c.msg).(*kmsg.ControllerRegistrationResponse)
		if !ok || resp.ErrorCode != c.code || resp.ErrorMessage == nil || *resp.ErrorMessage != *c.want {
			t.Errorf("code %d: answered %+v, want message %q", c.code, resp, *c.want)
		}
	}
	if a.ErrorResponse(kmsg.NewPtrVoteRequest(), kerr.NotController.Code, "") != nil {
		t.Error("answered a Vote request")
	}
}
