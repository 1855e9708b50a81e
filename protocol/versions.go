package protocol

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/features"
)

// VersionRange is an inclusive range of api versions.
type VersionRange struct{ Min, Max int16 }

// firstFlexible is, per api key, the first version using the flexible encoding (KIP-482),
// -1 for an api that never does or kmsg does not know: read from kmsg once, so that header
// parsing needs no allocation and no map lookup.
var firstFlexible = func() (f [MaxKey]int16) {
	for k := range int16(MaxKey) {
		f[k] = -1
		req := kmsg.RequestForKey(k)
		if req == nil {
			continue
		}
		for v := int16(0); v <= req.MaxVersion(); v++ {
			req.SetVersion(v)
			if req.IsFlexible() {
				f[k] = v
				break
			}
		}
	}
	return f
}()

// IsFlexible reports whether the api version uses the flexible encoding (KIP-482), which
// selects request header v2 and response header v1 (ApiVersions responses excepted).
// Unknown apis are reported as not flexible.
func IsFlexible(key, version int16) bool {
	if key < 0 || key >= MaxKey {
		return false
	}
	f := firstFlexible[key]
	return f >= 0 && version >= f
}

// MaxKRaftVersion is the highest kraft.version kraftd supports (1: KIP-853 dynamic quorum).
const MaxKRaftVersion int16 = 1

// ClientApiVersionsVersion is the ApiVersions version a client sends first on a new
// connection (what a Kafka 4.4 client sends); a server that does not know it answers with
// its own range and the client retries at the highest version both know.
const ClientApiVersionsVersion int16 = 4

// ApiVersionsResponse answers an ApiVersions request of the given version: every api of
// the table (and the kraft.version feature at v4+), or for a version outside the table's
// ApiVersions range the UNSUPPORTED_VERSION answer in v0 body layout listing only that
// range, so that the client retries with a version both sides know.
func (t *Table) ApiVersionsResponse(reqVersion int16) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	own, ok := t.Versions(int16(kmsg.ApiVersions))
	if !ok || reqVersion < own.Min || reqVersion > own.Max {
		resp.SetVersion(0)
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		if ok {
			k := kmsg.NewApiVersionsResponseApiKey()
			k.ApiKey, k.MinVersion, k.MaxVersion = int16(kmsg.ApiVersions), own.Min, own.Max
			resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{k}
		}
		return resp
	}
	resp.SetVersion(reqVersion)
	resp.ApiKeys = make([]kmsg.ApiVersionsResponseApiKey, 0, len(t.apis))
	for _, a := range t.apis {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = int16(a.Key), a.Versions.Min, a.Versions.Max
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

// SetControllerFeatures makes an ApiVersions v3+ answer a Kafka controller's
// that can be active (SimpleApiVersionManager with FeaturesPublisher): the
// supported features are QuorumFeatures' defaults (features.Supported:
// metadata.version and every production feature; those with a minimum of 0
// only from v4, KAFKA-17492), the finalized ones the committed image's
// levels above 0 beside kraft.version, their epoch the image's offset (-1
// without a metadata.version, as Kafka's empty features image).
func SetControllerFeatures(resp *kmsg.ApiVersionsResponse, reqVersion int16, finalized map[string]int16, epoch int64) {
	resp.SupportedFeatures = resp.SupportedFeatures[:0]
	for _, r := range features.Supported() {
		if r.Min == 0 && reqVersion < 4 {
			continue
		}
		f := kmsg.NewApiVersionsResponseSupportedFeature()
		f.Name, f.MinVersion, f.MaxVersion = r.Name, r.Min, r.Max
		resp.SupportedFeatures = append(resp.SupportedFeatures, f)
	}
	if _, ok := finalized[features.MetadataVersionName]; !ok {
		resp.FinalizedFeaturesEpoch = -1
		return
	}
	for _, name := range slices.Sorted(maps.Keys(finalized)) {
		if level := finalized[name]; level > 0 && name != features.KRaftVersionName {
			f := kmsg.NewApiVersionsResponseFinalizedFeature()
			f.Name, f.MinVersionLevel, f.MaxVersionLevel = name, level, level
			resp.FinalizedFeatures = append(resp.FinalizedFeatures, f)
		}
	}
	resp.FinalizedFeaturesEpoch = epoch
}
