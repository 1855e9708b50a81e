package protocol

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func isUnsupportedVersion(err error) bool { return errors.Is(err, ErrUnsupportedVersion) }

// TestHeaderVersionsEveryServedVersion checks the request and response header layout for
// every served api and version against Kafka's rules: request v2 / response v1 exactly for
// flexible versions, except ApiVersions responses (always v0).
func TestHeaderVersionsEveryServedVersion(t *testing.T) {
	// First flexible version per api, from Kafka's message schemas.
	firstFlexible := map[int16]int16{
		int16(kmsg.Fetch): 12, int16(kmsg.ApiVersions): 3, int16(kmsg.Vote): 0, int16(kmsg.BeginQuorumEpoch): 1, int16(kmsg.EndQuorumEpoch): 1,
		int16(kmsg.DescribeQuorum): 0, int16(kmsg.UpdateFeatures): 0, int16(kmsg.FetchSnapshot): 0, int16(kmsg.DescribeCluster): 0, int16(kmsg.ControllerRegistration): 0,
		int16(kmsg.AddRaftVoter): 0, int16(kmsg.RemoveRaftVoter): 0, int16(kmsg.UpdateRaftVoter): 0,
		int16(kmsg.SASLHandshake): 2, int16(kmsg.SASLAuthenticate): 2, // SaslHandshake: never flexible
	}
	for _, key := range testServed.Keys() {
		ff, ok := firstFlexible[key]
		if !ok {
			t.Fatalf("no expectation for %s", kmsg.NameForKey(key))
		}
		rng, _ := testServed.Versions(key)
		for v := rng.Min; v <= rng.Max; v++ {
			flexible := v >= ff
			name := kmsg.NameForKey(key)
			if IsFlexible(key, v) != flexible {
				t.Fatalf("%s v%d: IsFlexible = %v", name, v, !flexible)
			}
			hdr := AppendRequestHeader(nil, key, v, 1, nil)
			if want := 10 + b2i(flexible); len(hdr) != want {
				t.Fatalf("%s v%d: request header %d bytes, want %d", name, v, len(hdr), want)
			}
			resp := kmsg.ResponseForKey(key)
			resp.SetVersion(v)
			rh := AppendResponseHeader(nil, key, v, 1)
			if want := 4 + b2i(flexible && key != int16(kmsg.ApiVersions)); len(rh) != want {
				t.Fatalf("%s v%d: response header %d bytes, want %d", name, v, len(rh), want)
			}
			// A full default response round-trips through the frame functions.
			frame := AppendResponse(nil, 9, resp)
			back, err := ParseResponse(frame[4:], key, v)
			if err != nil {
				t.Fatalf("%s v%d: %v", name, v, err)
			}
			if again := AppendResponse(nil, 9, back); string(again) != string(frame) {
				t.Fatalf("%s v%d: response re-encode differs", name, v)
			}
		}
	}
}

func TestParseRequestErrors(t *testing.T) {
	id := "c"
	cases := []struct {
		name  string
		frame []byte
		is    error
		text  string
	}{
		{"empty", nil, ErrMalformedHeader, "at least 10 bytes"},
		{"short", []byte{0, 1, 0, 1, 0, 0, 0}, ErrMalformedHeader, "have 7"},
		{"client id past end", []byte{0, 18, 0, 3, 0, 0, 0, 1, 0, 5, 'a'}, ErrMalformedHeader, "client id length 5"},
		{"negative client id", []byte{0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xfe}, ErrMalformedHeader, "client id length -2"},
		{"missing tag block", AppendRequestHeader(nil, int16(kmsg.Vote), 1, 1, &id)[:11], ErrMalformedHeader, "tags"},
		{"bad tag size", []byte{0, 52, 0, 1, 0, 0, 0, 1, 0xff, 0xff, 1, 0, 9}, ErrMalformedHeader, "tag 0 size 9"},
		{"unknown api", AppendRequestHeader(nil, 1000, 0, 1, nil), ErrUnsupportedAPI, "key 1000"},
		{"unserved api", AppendRequestHeader(nil, 0, 9, 1, nil), ErrUnsupportedAPI, "Produce"},
		{"negative version", AppendRequestHeader(nil, int16(kmsg.Vote), -1, 1, nil), ErrUnsupportedVersion, "Vote v-1"},
		{"fetch v3", AppendRequestHeader(nil, int16(kmsg.Fetch), 3, 1, nil), ErrUnsupportedVersion, "Fetch v3 (served: v4-v18)"},
		{"fetch v19", AppendRequestHeader(nil, int16(kmsg.Fetch), 19, 1, nil), ErrUnsupportedVersion, "Fetch v19"},
		{"add raft voter v2", AppendRequestHeader(nil, int16(kmsg.AddRaftVoter), 2, 1, nil), ErrUnsupportedVersion, "AddRaftVoter v2"},
		{"vote v3", AppendRequestHeader(nil, int16(kmsg.Vote), 3, 1, nil), ErrUnsupportedVersion, "served: v0-v2"},
	}
	for _, c := range cases {
		_, req, err := testApis.ParseRequest(c.frame)
		if req != nil || !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v, want %v containing %q", c.name, err, c.is, c.text)
		}
	}
	// A truncated body is a plain decode error (the caller closes the connection).
	vote := kmsg.NewPtrVoteRequest()
	vote.SetVersion(1)
	vote.Topics = []kmsg.VoteRequestTopic{{Topic: "__cluster_metadata", Partitions: []kmsg.VoteRequestTopicPartition{{}}}}
	frame := AppendRequest(nil, 1, &id, vote)[4:]
	for cut := len(frame) - 1; cut >= 13; cut-- {
		hdr, req, err := testApis.ParseRequest(frame[:cut])
		if err == nil || req != nil || errors.Is(err, ErrUnsupportedAPI) || errors.Is(err, ErrUnsupportedVersion) || errors.Is(err, ErrMalformedHeader) {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if hdr.APIKey != int16(kmsg.Vote) || hdr.CorrelationID != 1 {
			t.Fatalf("cut at %d: header %+v", cut, hdr)
		}
	}
}

func TestParseResponseErrors(t *testing.T) {
	if _, err := ParseResponse([]byte{0, 0, 0, 1, 0}, 1000, 0); !errors.Is(err, ErrUnsupportedAPI) {
		t.Errorf("unknown key: %v", err)
	}
	if _, err := ParseResponse([]byte{0, 0, 0, 1, 0}, int16(kmsg.Vote), 99); !errors.Is(err, ErrUnsupportedVersion) {
		t.Errorf("unknown version: %v", err)
	}
	if _, err := ParseResponse([]byte{0, 0}, int16(kmsg.Vote), 1); !errors.Is(err, ErrMalformedHeader) {
		t.Errorf("short: %v", err)
	}
	if _, err := ParseResponse([]byte{0, 0, 0, 1}, int16(kmsg.Vote), 1); !errors.Is(err, ErrMalformedHeader) {
		t.Errorf("no tag block: %v", err)
	}
	if _, err := ParseResponse([]byte{0, 0, 0, 1, 0, 0}, int16(kmsg.Vote), 1); err == nil {
		t.Errorf("truncated body decoded")
	}
	if _, err := ResponseCorrelationID([]byte{1, 2, 3}); !errors.Is(err, ErrMalformedHeader) {
		t.Errorf("short correlation id: %v", err)
	}
}

func TestParseRequestHeaderSkipsTags(t *testing.T) {
	// Header v2 with one tagged field (tag 3, 2 bytes): skipped, body follows.
	frame := []byte{0, 52, 0, 1, 0, 0, 0, 7, 0, 1, 'x', 1, 3, 2, 0xaa, 0xbb, 0xcc}
	h, body, err := ParseRequestHeader(frame)
	if err != nil || !h.Flexible || string(h.ClientID) != "x" || h.CorrelationID != 7 || len(body) != 1 || body[0] != 0xcc {
		t.Fatalf("%+v %x %v", h, body, err)
	}
	// Null client id.
	h, _, err = ParseRequestHeader([]byte{0, 53, 0, 0, 0, 0, 0, 7, 0xff, 0xff})
	if err != nil || h.ClientID != nil || h.Flexible || h.Header().ClientID != nil {
		t.Fatalf("%+v %v", h, err)
	}
	// Empty (non-null) client id.
	h, _, err = ParseRequestHeader([]byte{0, 53, 0, 0, 0, 0, 0, 7, 0, 0})
	if err != nil || h.ClientID == nil || h.Header().ClientID == nil || *h.Header().ClientID != "" {
		t.Fatalf("%+v %v", h, err)
	}
}
