package protocol

import (
	"bytes"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestRequestRoundTripAllServedVersions(t *testing.T) {
	id := "raft-client-1"
	for _, key := range testServed.Keys() {
		rng, _ := testServed.Versions(key)
		for v := rng.Min; v <= rng.Max; v++ {
			req := kmsg.RequestForKey(key)
			req.SetVersion(v)
			frame := AppendRequest(nil, 77, &id, req)
			hdr, got, err := testApis.ParseRequest(frame[4:])
			if err != nil {
				t.Fatalf("%s v%d: %v", kmsg.NameForKey(key), v, err)
			}
			if hdr.APIKey != key || hdr.APIVersion != v || hdr.CorrelationID != 77 || hdr.ClientID == nil || *hdr.ClientID != id {
				t.Fatalf("%s v%d: header %+v", kmsg.NameForKey(key), v, hdr)
			}
			// Header v2 carries one tag byte after the client id; v1 none.
			hdrLen := 10 + len(id)
			wantFlexible := req.IsFlexible()
			raw, body, _ := ParseRequestHeader(frame[4:])
			if raw.Flexible != wantFlexible || len(frame[4:])-len(body) != hdrLen+b2i(wantFlexible) {
				t.Fatalf("%s v%d: flexible %v header len %d", kmsg.NameForKey(key), v, raw.Flexible, len(frame[4:])-len(body))
			}
			if again := AppendRequest(nil, 77, &id, got); !bytes.Equal(again, frame) {
				t.Fatalf("%s v%d: re-encode differs", kmsg.NameForKey(key), v)
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestUnsupportedRequests(t *testing.T) {
	produce := kmsg.NewPtrProduceRequest()
	produce.SetVersion(9)
	_, _, err := testApis.ParseRequest(AppendRequest(nil, 1, nil, produce)[4:])
	if !errors.Is(err, ErrUnsupportedAPI) {
		t.Fatalf("produce: %v", err)
	}
	hdr, _, err := testApis.ParseRequest(append(AppendRequestHeader(nil, int16(kmsg.ApiVersions), 6, 9, nil), 1, 2, 3))
	if !errors.Is(err, ErrUnsupportedVersion) || hdr.APIKey != 18 || hdr.APIVersion != 6 || hdr.CorrelationID != 9 {
		t.Fatalf("apiversions v6: %+v %v", hdr, err)
	}
}

func TestResponseHeaderVersions(t *testing.T) {
	cases := []struct {
		key, version int16
		tagByte      bool
	}{
		{int16(kmsg.ApiVersions), 0, false}, {int16(kmsg.ApiVersions), 3, false}, {int16(kmsg.ApiVersions), 4, false},
		{int16(kmsg.BeginQuorumEpoch), 0, false}, {int16(kmsg.BeginQuorumEpoch), 1, true},
		{int16(kmsg.EndQuorumEpoch), 0, false}, {int16(kmsg.EndQuorumEpoch), 1, true},
		{int16(kmsg.Vote), 0, true}, {int16(kmsg.Fetch), 11, false}, {int16(kmsg.Fetch), 12, true}, {int16(kmsg.DescribeQuorum), 0, true},
		{int16(kmsg.FetchSnapshot), 0, true},
	}
	for _, c := range cases {
		resp := kmsg.ResponseForKey(c.key)
		resp.SetVersion(c.version)
		frame := AppendResponse(nil, 5, resp)
		body := resp.AppendTo(nil)
		if got := len(frame) - 4 - 4 - len(body); got != b2i(c.tagByte) {
			t.Errorf("%s v%d: %d header bytes after the correlation id", kmsg.NameForKey(c.key), c.version, got)
		}
		back, err := ParseResponse(frame[4:], c.key, c.version)
		if err != nil {
			t.Errorf("%s v%d: %v", kmsg.NameForKey(c.key), c.version, err)
			continue
		}
		if back.GetVersion() != c.version {
			t.Errorf("%s v%d: parsed version %d", kmsg.NameForKey(c.key), c.version, back.GetVersion())
		}
	}
}

func TestApiVersionsUnsupportedAnswer(t *testing.T) {
	resp := testApis.ApiVersionsResponse(6)
	if resp.GetVersion() != 0 || resp.ErrorCode != 35 || len(resp.ApiKeys) != 1 ||
		resp.ApiKeys[0].ApiKey != 18 || resp.ApiKeys[0].MinVersion != 0 || resp.ApiKeys[0].MaxVersion != 5 {
		t.Fatalf("%+v", resp)
	}
	frame := AppendResponse(nil, 3, resp)
	// v0 header, v0 body: corr, error 35, int32 count 1, {18, 0, 4}.
	want := []byte{0, 0, 0, 16, 0, 0, 0, 3, 0, 35, 0, 0, 0, 1, 0, 18, 0, 0, 0, 5}
	if !bytes.Equal(frame, want) {
		t.Fatalf("frame %x, want %x", frame, want)
	}
	// A client that asked v5 decodes it as v0 and learns the range.
	back, err := ParseResponse(frame[4:], int16(kmsg.ApiVersions), 5)
	if err != nil {
		t.Fatal(err)
	}
	av := back.(*kmsg.ApiVersionsResponse)
	if av.GetVersion() != 0 || av.ErrorCode != 35 || len(av.ApiKeys) != 1 || av.ApiKeys[0].MaxVersion != 5 {
		t.Fatalf("%+v", av)
	}
}
