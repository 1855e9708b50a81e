package protocol

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/features"
)

// TestFlexibleVersionsMatchKafka440Schemas checks the flexible-version rule (kmsg's)
// against Kafka 4.4.0's message schemas (flexibleVersions) of the apis a node serves.
func TestFlexibleVersionsMatchKafka440Schemas(t *testing.T) {
	for _, s := range kafka440Schemas {
		for v := s.MinVersion; v <= s.MaxVersion; v++ {
			if IsFlexible(s.ApiKey, v) != (v >= s.FirstFlexibleVersion) {
				t.Errorf("%s v%d: IsFlexible %v, Kafka's flexibleVersions %d+", s.Name, v, IsFlexible(s.ApiKey, v), s.FirstFlexibleVersion)
			}
		}
	}
}

func TestApiVersionsResponseEveryVersion(t *testing.T) {
	for v := int16(0); v <= 5; v++ {
		resp := testApis.ApiVersionsResponse(v)
		if resp.GetVersion() != v || resp.ErrorCode != 0 {
			t.Fatalf("v%d: version %d error %d", v, resp.GetVersion(), resp.ErrorCode)
		}
		frame := AppendResponse(nil, 42, resp)
		// Header v0 at every version: the body starts right after the correlation id with
		// the error code.
		if frame[8] != 0 || frame[9] != 0 {
			t.Fatalf("v%d: body does not start after a v0 header: %x", v, frame[:12])
		}
		back, err := ParseResponse(frame[4:], int16(kmsg.ApiVersions), v)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		av := back.(*kmsg.ApiVersionsResponse)
		if len(av.ApiKeys) != len(testApis.Keys()) {
			t.Fatalf("v%d: %d api keys", v, len(av.ApiKeys))
		}
		for i, k := range av.ApiKeys {
			rng, ok := testApis.Versions(k.ApiKey)
			if !ok || rng.Min != k.MinVersion || rng.Max != k.MaxVersion || (i > 0 && av.ApiKeys[i-1].ApiKey >= k.ApiKey) {
				t.Fatalf("v%d: entry %d = %+v", v, i, k)
			}
		}
		hasKRaft := len(av.SupportedFeatures) == 1 && av.SupportedFeatures[0].Name == "kraft.version" &&
			av.SupportedFeatures[0].MinVersion == 0 && av.SupportedFeatures[0].MaxVersion == 1
		if v >= 4 && !hasKRaft {
			t.Fatalf("v%d: features %+v, want kraft.version 0-1", v, av.SupportedFeatures)
		}
		if v < 4 && len(av.SupportedFeatures) != 0 {
			t.Fatalf("v%d: features %+v, want none (min-0 features are hidden below v4)", v, av.SupportedFeatures)
		}
		if av.FinalizedFeaturesEpoch != -1 {
			t.Fatalf("v%d: finalized epoch %d", v, av.FinalizedFeaturesEpoch)
		}
	}
	for _, v := range []int16{6, 7, 127, -1} {
		resp := testApis.ApiVersionsResponse(v)
		if resp.GetVersion() != 0 || resp.ErrorCode != 35 || len(resp.ApiKeys) != 1 || resp.ApiKeys[0].ApiKey != 18 {
			t.Fatalf("v%d: %+v", v, resp)
		}
	}
}

// TestApiVersionsUnsupportedRequestParsesHeader: a v6 (or far future) ApiVersions request is
// answered from its header alone; the body is not decoded.
func TestApiVersionsUnsupportedRequestParsesHeader(t *testing.T) {
	id := "future-client"
	for _, v := range []int16{6, 100} {
		frame := AppendRequestHeader(nil, int16(kmsg.ApiVersions), v, 31, &id)
		frame = append(frame, 0xde, 0xad) // an unknown body layout
		hdr, req, err := testApis.ParseRequest(frame)
		if req != nil || hdr.APIVersion != v || hdr.CorrelationID != 31 || *hdr.ClientID != id {
			t.Fatalf("v%d: %+v %v", v, hdr, req)
		}
		if !isUnsupportedVersion(err) {
			t.Fatalf("v%d: %v", v, err)
		}
	}
}

// kraft.version is listed as finalized only above level 0, at min = max = level, as Kafka's
// controllers list it (kafka-features describe reads FinalizedVersionLevel there).
func TestSetFinalizedKRaftVersion(t *testing.T) {
	resp := testApis.ApiVersionsResponse(4)
	SetFinalizedKRaftVersion(resp, 0)
	if len(resp.FinalizedFeatures) != 0 {
		t.Fatalf("level 0 listed: %+v", resp.FinalizedFeatures)
	}
	SetFinalizedKRaftVersion(resp, 1)
	if f := resp.FinalizedFeatures; len(f) != 1 || f[0].Name != features.KRaftVersionName || f[0].MinVersionLevel != 1 || f[0].MaxVersionLevel != 1 {
		t.Fatalf("level 1: %+v", f)
	}
}

// A controller that can be active lists metadata.version among its
// supported features (v3 hides those with a minimum of 0) and the image's
// finalized levels with the image's offset as epoch.
func TestSetControllerFeatures(t *testing.T) {
	for _, v := range []int16{3, 4} {
		resp := kmsg.NewPtrApiVersionsResponse()
		SetControllerFeatures(resp, v, map[string]int16{"metadata.version": 33, "group.version": 1, "share.version": 0}, 42)
		var names []string
		for _, f := range resp.SupportedFeatures {
			names = append(names, f.Name)
		}
		if !slices.Contains(names, "metadata.version") || slices.Contains(names, "kraft.version") != (v >= 4) {
			t.Errorf("v%d: supported %v", v, names)
		}
		if len(resp.FinalizedFeatures) != 2 || resp.FinalizedFeatures[0].Name != "group.version" ||
			resp.FinalizedFeatures[1].Name != "metadata.version" || resp.FinalizedFeatures[1].MaxVersionLevel != 33 || resp.FinalizedFeaturesEpoch != 42 {
			t.Errorf("v%d: finalized %+v epoch %d", v, resp.FinalizedFeatures, resp.FinalizedFeaturesEpoch)
		}
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	SetControllerFeatures(resp, 4, map[string]int16{}, 7)
	if len(resp.FinalizedFeatures) != 0 || resp.FinalizedFeaturesEpoch != -1 {
		t.Errorf("no metadata.version: finalized %+v epoch %d", resp.FinalizedFeatures, resp.FinalizedFeaturesEpoch)
	}
}
