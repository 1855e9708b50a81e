package protocol

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/features"
)

// VersionRange is an inclusive range of api versions.
type VersionRange struct{ Min, Max int16 }

// Api keys kraftd serves.
const (
	KeyFetch       int16 = 1
	KeyApiVersions int16 = 18
	// SaslHandshake and SaslAuthenticate: a Kafka controller lists them on every
	// controller listener (their schemas name the controller); off SASL listeners
	// they are answered with ILLEGAL_SASL_STATE, as Kafka's ControllerApis.
	KeySaslHandshake    int16 = 17
	KeySaslAuthenticate int16 = 36
	KeyVote             int16 = 52
	KeyBeginQuorumEpoch int16 = 53
	KeyEndQuorumEpoch   int16 = 54
	KeyDescribeQuorum   int16 = 55
	KeyUpdateFeatures   int16 = 57
	KeyFetchSnapshot    int16 = 59
	KeyDescribeCluster  int16 = 60
	// KeyControllerRegistration is served only to turn a Kafka controller's registration
	// away (node.Handle): kraftd keeps no metadata.
	KeyControllerRegistration int16 = 70
	KeyAddRaftVoter           int16 = 80
	KeyRemoveRaftVoter        int16 = 81
	KeyUpdateRaftVoter        int16 = 82
)

// servedApis is the advertisement: one line per api, in ApiVersions order (ascending key).
// The ranges are those a Kafka 4.4.0 controller advertises for these apis (its message
// schemas, testdata/kafka-jvm-raft/json/kafka-4.4.0-raft-api-schemas.json, confirmed by the
// interop test against a live 4.4.0 controller). Adjust a line here when the target Kafka
// release changes; every version listed must be one kmsg can encode (checked by the tests).
var servedApis = [...]struct {
	key int16
	VersionRange
}{
	// v0-3 were removed in Kafka 4.0. Raft needs >= 13 (topic ids): 4-12 get a top-level
	// INVALID_REQUEST from the raft layer, as from Kafka. v18 adds the fetcher's high
	// watermark (KIP-1166).
	{KeyFetch, VersionRange{4, 18}},
	{KeySaslHandshake, VersionRange{0, 1}},
	{KeyApiVersions, VersionRange{0, 5}}, // v5: ClusterId/NodeId checking (KIP-1242)
	{KeySaslAuthenticate, VersionRange{0, 2}},
	{KeyVote, VersionRange{0, 2}}, // v2: pre-vote (KIP-996)
	{KeyBeginQuorumEpoch, VersionRange{0, 1}},
	{KeyEndQuorumEpoch, VersionRange{0, 1}},
	{KeyDescribeQuorum, VersionRange{0, 2}},
	// kraft.version only (the kraft.version upgrade); v2 drops the
	// per-feature results.
	{KeyUpdateFeatures, VersionRange{0, 2}},
	{KeyFetchSnapshot, VersionRange{0, 1}},
	{KeyDescribeCluster, VersionRange{0, 2}},
	{KeyControllerRegistration, VersionRange{0, 0}},
	{KeyAddRaftVoter, VersionRange{0, 1}}, // v1: AckWhenCommitted (KIP-1186)
	{KeyRemoveRaftVoter, VersionRange{0, 0}},
	{KeyUpdateRaftVoter, VersionRange{0, 0}},
}

// maxKey bounds the lookup tables; kmsg knows keys well below it.
const maxKey = 128

type apiInfo struct {
	served        bool // kraftd serves the api itself (servedApis)
	notController bool // answered as a non-active controller (controllerApis)
	rng           VersionRange
	firstFlexible int16 // -1: never flexible (or unknown api)
	known         bool  // kmsg has the api
}

// apis is indexed by api key; built once at init from servedApis and kmsg so that header
// parsing needs no allocation and no map lookup.
var apis [maxKey]apiInfo

func init() {
	for k := int16(0); k < maxKey; k++ {
		info := &apis[k]
		info.firstFlexible = -1
		req := kmsg.RequestForKey(k)
		if req == nil {
			continue
		}
		info.known = true
		for v := int16(0); v <= req.MaxVersion(); v++ {
			req.SetVersion(v)
			if req.IsFlexible() {
				info.firstFlexible = v
				break
			}
		}
	}
	for _, a := range servedApis {
		apis[a.key].served = true
		apis[a.key].rng = a.VersionRange
	}
	for _, a := range controllerApis {
		apis[a.key].notController = true
		apis[a.key].rng = a.VersionRange
	}
	for k := int16(0); k < maxKey; k++ {
		if apis[k].served || apis[k].notController {
			advertisedKeys = append(advertisedKeys, k)
		}
	}
}

// advertisedKeys lists, ascending, every api in kraftd's ApiVersions answer.
var advertisedKeys []int16

// Supported reports the versions kraftd serves for an api key.
func Supported(key int16) (VersionRange, bool) {
	if key < 0 || key >= maxKey || !apis[key].served {
		return VersionRange{}, false
	}
	return apis[key].rng, true
}

// Advertised reports the versions kraftd lists in ApiVersions for an api key: the apis
// it serves and those it answers as a non-active controller (controllerApis).
// ParseRequest decodes exactly these.
func Advertised(key int16) (VersionRange, bool) {
	if key < 0 || key >= maxKey || !(apis[key].served || apis[key].notController) {
		return VersionRange{}, false
	}
	return apis[key].rng, true
}

// AnswersNotController reports whether key is a controller api kraftd answers as a Kafka
// controller that is not active does (ErrorResponse with NOT_CONTROLLER).
func AnswersNotController(key int16) bool {
	return key >= 0 && key < maxKey && apis[key].notController
}

// ServedKeys returns the api keys kraftd serves, ascending.
func ServedKeys() []int16 {
	keys := make([]int16, len(servedApis))
	for i, a := range servedApis {
		keys[i] = a.key
	}
	return keys
}

// IsFlexible reports whether the api version uses the flexible encoding (KIP-482), which
// selects request header v2 and response header v1 (ApiVersions responses excepted).
// Unknown apis are reported as not flexible.
func IsFlexible(key, version int16) bool {
	if key < 0 || key >= maxKey {
		return false
	}
	f := apis[key].firstFlexible
	return f >= 0 && version >= f
}

// MaxKRaftVersion is the highest kraft.version kraftd supports (1: KIP-853 dynamic quorum).
const MaxKRaftVersion int16 = 1

// ClientApiVersionsVersion is the ApiVersions version a client sends first on a new
// connection (what a Kafka 4.4 client sends); a server that does not know it answers with
// its own range and the client retries at the highest version both know.
const ClientApiVersionsVersion int16 = 4

// NewApiVersionsResponse answers an ApiVersions request of the given version: the full list
// of served and controller apis (and the kraft.version feature at v4+), or for a version outside kraftd's range the
// UNSUPPORTED_VERSION answer in v0 body layout listing only ApiVersions' range, so that
// the client retries with a version both sides know.
func NewApiVersionsResponse(reqVersion int16) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	own := apis[KeyApiVersions].rng
	if reqVersion < own.Min || reqVersion > own.Max {
		resp.SetVersion(0)
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = KeyApiVersions, own.Min, own.Max
		resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{k}
		return resp
	}
	resp.SetVersion(reqVersion)
	resp.ApiKeys = make([]kmsg.ApiVersionsResponseApiKey, 0, len(advertisedKeys))
	for _, key := range advertisedKeys {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = key, apis[key].rng.Min, apis[key].rng.Max
		resp.ApiKeys = append(resp.ApiKeys, k)
	}
	// Features whose min version is 0 are only shown to v4+ clients (KAFKA-17492): older
	// clients rejected a zero minimum. kraft.version's minimum is 0.
	if reqVersion >= 4 {
		f := kmsg.NewApiVersionsResponseSupportedFeature()
		f.Name, f.MinVersion, f.MaxVersion = features.KRaftVersionName, 0, MaxKRaftVersion
		resp.SupportedFeatures = []kmsg.ApiVersionsResponseSupportedFeature{f}
	}
	return resp
}

// SetFinalizedKRaftVersion lists kraft.version at level in an ApiVersions v3+ answer's
// FinalizedFeatures, as Kafka's nodes do once it is above 0 (level 0 is not listed).
func SetFinalizedKRaftVersion(resp *kmsg.ApiVersionsResponse, level int16) {
	if level <= 0 {
		return
	}
	f := kmsg.NewApiVersionsResponseFinalizedFeature()
	f.Name, f.MinVersionLevel, f.MaxVersionLevel = features.KRaftVersionName, level, level
	resp.FinalizedFeatures = append(resp.FinalizedFeatures, f)
}
