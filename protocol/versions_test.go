package protocol

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/features"
)

// kafkaDeviations lists where kraftd's advertisement (Kafka 4.4.0's) differs from the
// captured answer of a Kafka 4.0-SNAPSHOT controller (trunk 1eb7644): the api versions Kafka
// added or dropped since. The interop test against a live 4.4.0 controller is the final judge.
var kafkaDeviations = map[int16]VersionRange{
	KeyFetch:           {4, 18}, // v0-3 removed in 4.0 (KIP-896), v18 added (KIP-1166)
	KeyApiVersions:     {0, 5},  // KIP-1242
	KeyVote:            {0, 2},  // KIP-996 pre-vote (Kafka 4.0)
	KeyDescribeCluster: {0, 2},  // IncludeFencedBrokers (Kafka 4.0)
	KeyAddRaftVoter:    {0, 1},  // AckWhenCommitted (KIP-1186)
}

// TestRangesMatchKafka440Schemas checks the advertisement and the flexible-version rule of
// every served api against Kafka 4.4.0's message schemas (validVersions, flexibleVersions).
func TestRangesMatchKafka440Schemas(t *testing.T) {
	raw, err := os.ReadFile("../testdata/kafka-jvm-raft/json/kafka-4.4.0-raft-api-schemas.json")
	if err != nil {
		t.Fatal(err)
	}
	var schemas struct {
		Apis []struct {
			Name                                                 string
			ApiKey, MinVersion, MaxVersion, FirstFlexibleVersion int16
		}
	}
	if err := json.Unmarshal(raw, &schemas); err != nil {
		t.Fatal(err)
	}
	if len(schemas.Apis) != len(servedApis) {
		t.Fatalf("%d schemas for %d served apis", len(schemas.Apis), len(servedApis))
	}
	for _, s := range schemas.Apis {
		got, ok := Supported(s.ApiKey)
		if !ok || got != (VersionRange{s.MinVersion, s.MaxVersion}) {
			t.Errorf("%s: kraftd serves %v (%v), Kafka 4.4.0 defines %d-%d", s.Name, got, ok, s.MinVersion, s.MaxVersion)
		}
		for v := s.MinVersion; v <= s.MaxVersion; v++ {
			if IsFlexible(s.ApiKey, v) != (v >= s.FirstFlexibleVersion) {
				t.Errorf("%s v%d: IsFlexible %v, Kafka's flexibleVersions %d+", s.Name, v, IsFlexible(s.ApiKey, v), s.FirstFlexibleVersion)
			}
		}
	}
}

func TestAdvertisedRangesMatchKafkaController(t *testing.T) {
	raw, err := os.ReadFile("../testdata/kafka-jvm-raft/json/apiversions-node1.json")
	if err != nil {
		t.Fatal(err)
	}
	var kafka struct {
		ApiKeys []struct {
			ApiKey, MinVersion, MaxVersion int16
		}
	}
	if err := json.Unmarshal(raw, &kafka); err != nil {
		t.Fatal(err)
	}
	kafkaRange := map[int16]VersionRange{}
	for _, k := range kafka.ApiKeys {
		kafkaRange[k.ApiKey] = VersionRange{k.MinVersion, k.MaxVersion}
	}
	for _, key := range ServedKeys() {
		got, ok := Supported(key)
		if !ok {
			t.Fatalf("ServedKeys lists %d but Supported does not", key)
		}
		want, inKafka := kafkaRange[key]
		if d, ok := kafkaDeviations[key]; ok {
			want, inKafka = d, true
		}
		if !inKafka {
			t.Errorf("%s (%d): served by kraftd, not advertised by the Kafka controller", kmsg.NameForKey(key), key)
			continue
		}
		if got != want {
			t.Errorf("%s (%d): kraftd serves %v, Kafka controller advertises %v", kmsg.NameForKey(key), key, got, want)
		}
		// kmsg must be able to encode every advertised version.
		if req := kmsg.RequestForKey(key); got.Max > req.MaxVersion() || got.Min < 0 || got.Min > got.Max {
			t.Errorf("%s: range %v outside kmsg's 0-%d", kmsg.NameForKey(key), got, req.MaxVersion())
		}
	}
	// Every raft api of the controller is served.
	for _, key := range []int16{KeyFetch, KeyApiVersions, KeyVote, KeyBeginQuorumEpoch, KeyEndQuorumEpoch,
		KeyDescribeQuorum, KeyFetchSnapshot, KeyDescribeCluster, KeyAddRaftVoter, KeyRemoveRaftVoter, KeyUpdateRaftVoter} {
		if _, ok := Supported(key); !ok {
			t.Errorf("raft api %s not served", kmsg.NameForKey(key))
		}
	}
	for _, key := range []int16{0, 3, 7, 16, 19, -1, 1000} {
		if _, ok := Supported(key); ok {
			t.Errorf("key %d unexpectedly served", key)
		}
	}
}

func TestNewApiVersionsResponseEveryVersion(t *testing.T) {
	for v := int16(0); v <= 5; v++ {
		resp := NewApiVersionsResponse(v)
		if resp.GetVersion() != v || resp.ErrorCode != 0 {
			t.Fatalf("v%d: version %d error %d", v, resp.GetVersion(), resp.ErrorCode)
		}
		frame := AppendResponse(nil, 42, resp)
		// Header v0 at every version: the body starts right after the correlation id with
		// the error code.
		if frame[8] != 0 || frame[9] != 0 {
			t.Fatalf("v%d: body does not start after a v0 header: %x", v, frame[:12])
		}
		back, err := ParseResponse(frame[4:], KeyApiVersions, v)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		av := back.(*kmsg.ApiVersionsResponse)
		if len(av.ApiKeys) != len(servedApis)+len(controllerApis) {
			t.Fatalf("v%d: %d api keys", v, len(av.ApiKeys))
		}
		for i, k := range av.ApiKeys {
			rng, ok := Advertised(k.ApiKey)
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
		resp := NewApiVersionsResponse(v)
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
		frame := AppendRequestHeader(nil, KeyApiVersions, v, 31, &id)
		frame = append(frame, 0xde, 0xad) // an unknown body layout
		hdr, req, err := ParseRequest(frame)
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
	resp := NewApiVersionsResponse(4)
	SetFinalizedKRaftVersion(resp, 0)
	if len(resp.FinalizedFeatures) != 0 {
		t.Fatalf("level 0 listed: %+v", resp.FinalizedFeatures)
	}
	SetFinalizedKRaftVersion(resp, 1)
	if f := resp.FinalizedFeatures; len(f) != 1 || f[0].Name != features.KRaftVersionName || f[0].MinVersionLevel != 1 || f[0].MaxVersionLevel != 1 {
		t.Fatalf("level 1: %+v", f)
	}
}
