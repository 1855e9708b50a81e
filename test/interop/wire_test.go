package interop

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"sort"
	"testing"
	"time"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// raftApis are the api keys a KRaft peer or Kafka's admin tools send to a controller's
// raft listener (and ControllerRegistration, which a JVM peer sends to the leader);
// kraftd must advertise exactly Kafka's ranges for each.
var raftApis = []int16{
	int16(kmsg.Fetch), int16(kmsg.ApiVersions), int16(kmsg.Vote), int16(kmsg.BeginQuorumEpoch),
	int16(kmsg.EndQuorumEpoch), int16(kmsg.DescribeQuorum), int16(kmsg.FetchSnapshot),
	int16(kmsg.DescribeCluster), int16(kmsg.ControllerRegistration), int16(kmsg.AddRaftVoter),
	int16(kmsg.RemoveRaftVoter), int16(kmsg.UpdateRaftVoter), int16(kmsg.UpdateFeatures), // kraft.version upgrades
	// A Kafka controller lists SaslHandshake and SaslAuthenticate on every listener.
	int16(kmsg.SASLHandshake), int16(kmsg.SASLAuthenticate),
}

// controllerKeys are the keys of the controller apis kraftd answers as a controller
// that is not active.
func controllerKeys() []int16 {
	var keys []int16
	for _, a := range protocol.ControllerApis() {
		keys = append(keys, int16(a.Key))
	}
	return keys
}

// exchange sends one request over c with kraftd's codec and returns the raw response frame
// (without size prefix) and its decoding. Every response frame must re-encode to the same
// bytes through kraftd's codec.
func exchange(t *testing.T, c net.Conn, corr int32, req kmsg.Request, decodeVersion int16) ([]byte, kmsg.Response) {
	t.Helper()
	client := "kraftd-interop"
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(protocol.AppendRequest(nil, corr, &client, req)); err != nil {
		t.Fatalf("write %T v%d: %v", req, req.GetVersion(), err)
	}
	frame, err := protocol.ReadFrame(c, protocol.DefaultMaxFrameSize, nil)
	if err != nil {
		t.Fatalf("read response to %T v%d: %v", req, req.GetVersion(), err)
	}
	frame = append([]byte(nil), frame...)
	got, err := protocol.ResponseCorrelationID(frame)
	if err != nil || got != corr {
		t.Fatalf("response correlation id %d (%v), want %d", got, err, corr)
	}
	resp, err := protocol.ParseResponse(frame, req.Key(), decodeVersion)
	if err != nil {
		t.Fatalf("kraftd cannot decode Kafka's %T v%d response: %v\nframe: %x", req, decodeVersion, err, frame)
	}
	if re := protocol.AppendResponse(nil, corr, resp); !bytes.Equal(re[4:], frame) {
		t.Errorf("Kafka's %T v%d response re-encodes differently:\nkafka:  %x\nkraftd: %x", req, decodeVersion, frame, re[4:])
	}
	return frame, resp
}

func apiVersionsRequest(v int16) *kmsg.ApiVersionsRequest {
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(v)
	req.ClientSoftwareName = "kraftd-interop"
	req.ClientSoftwareVersion = "0.1"
	return req
}

func rangesOf(keys []kmsg.ApiVersionsResponseApiKey) map[int16]protocol.VersionRange {
	m := map[int16]protocol.VersionRange{}
	for _, k := range keys {
		m[k.ApiKey] = protocol.VersionRange{Min: k.MinVersion, Max: k.MaxVersion}
	}
	return m
}

// compareAdvertisement reports every api whose range differs between Kafka's answer and
// kraftd's (node.Apis and its ApiVersions answer).
func compareAdvertisement(t *testing.T, v int16, kafka *kmsg.ApiVersionsResponse) {
	t.Helper()
	kr := rangesOf(kafka.ApiKeys)
	ours := rangesOf(node.Apis().ApiVersionsResponse(v).ApiKeys)
	for _, key := range raftApis {
		name := kmsg.NameForKey(key)
		k, kok := kr[key]
		s, sok := node.Apis().Versions(key)
		switch {
		case !kok && sok:
			t.Errorf("%s (key %d): kraftd serves %d-%d, Kafka %s does not advertise it", name, key, s.Min, s.Max, kafkatest.KafkaVersion)
		case kok && !sok:
			t.Errorf("%s (key %d): Kafka %s advertises %d-%d, kraftd does not serve it", name, key, kafkatest.KafkaVersion, k.Min, k.Max)
		case kok && k != s:
			t.Errorf("%s (key %d): Kafka %s advertises %d-%d, node.Apis says %d-%d", name, key, kafkatest.KafkaVersion, k.Min, k.Max, s.Min, s.Max)
		}
		if o, ok := ours[key]; ok != kok || (ok && o != k) {
			t.Errorf("%s (key %d): NewApiVersionsResponse(v%d) lists %v (present %v), Kafka %v (present %v)", name, key, v, o, ok, k, kok)
		}
	}
	// The other apis of the controller's listener kraftd lists with Kafka's ranges (and
	// answers as a controller that is not active); nothing else.
	for _, key := range controllerKeys() {
		k, kok := kr[key]
		a, _ := node.Apis().Versions(key)
		if o, ok := ours[key]; !kok || !ok || o != k || a != k {
			t.Errorf("%s (key %d): Kafka %s advertises %v (present %v), kraftd lists %v (present %v), node.Apis %v",
				kmsg.NameForKey(key), key, kafkatest.KafkaVersion, k, kok, o, ok, a)
		}
	}
	for key := range ours {
		if !contains(raftApis, key) && !contains(controllerKeys(), key) {
			t.Errorf("kraftd advertises key %d (%s), which is neither a raft nor a controller api", key, kmsg.NameForKey(key))
		}
	}
	if len(ours) != len(kr) {
		t.Errorf("kraftd lists %d apis, Kafka %s %d", len(ours), kafkatest.KafkaVersion, len(kr))
	}
	if kafka.ErrorCode != 0 {
		t.Errorf("Kafka's ApiVersions v%d error code %d", v, kafka.ErrorCode)
	}
}

func contains(s []int16, v int16) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func describeApis(keys []kmsg.ApiVersionsResponseApiKey) string {
	var b bytes.Buffer
	sorted := append([]kmsg.ApiVersionsResponseApiKey(nil), keys...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ApiKey < sorted[j].ApiKey })
	for _, k := range sorted {
		fmt.Fprintf(&b, "%s(%d) %d-%d; ", kmsg.NameForKey(k.ApiKey), k.ApiKey, k.MinVersion, k.MaxVersion)
	}
	return b.String()
}

// testApiVersions checks a real controller's ApiVersions answers against kraftd's codec and
// advertisement.
func testApiVersions(t *testing.T, ctrl *kafkatest.Controller) {
	c, err := net.DialTimeout("tcp", ctrl.Addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	for i, v := range []int16{5, 4, 3} {
		_, resp := exchange(t, c, int32(100+i), apiVersionsRequest(v), v)
		av := resp.(*kmsg.ApiVersionsResponse)
		t.Logf("Kafka %s controller ApiVersions v%d: %s", kafkatest.KafkaVersion, v, describeApis(av.ApiKeys))
		compareAdvertisement(t, v, av)
		// kraft.version: kraftd's supported range must be Kafka's (v3+ carries features).
		var kafkaKRaft *kmsg.ApiVersionsResponseSupportedFeature
		for i := range av.SupportedFeatures {
			if av.SupportedFeatures[i].Name == features.KRaftVersionName {
				kafkaKRaft = &av.SupportedFeatures[i]
			}
		}
		ours := node.Apis().ApiVersionsResponse(v)
		var ourKRaft *kmsg.ApiVersionsResponseSupportedFeature
		for i := range ours.SupportedFeatures {
			if ours.SupportedFeatures[i].Name == features.KRaftVersionName {
				ourKRaft = &ours.SupportedFeatures[i]
			}
		}
		switch {
		case (kafkaKRaft == nil) != (ourKRaft == nil):
			t.Errorf("ApiVersions v%d kraft.version feature: Kafka %+v, kraftd %+v", v, kafkaKRaft, ourKRaft)
		case kafkaKRaft != nil && (kafkaKRaft.MinVersion != ourKRaft.MinVersion || kafkaKRaft.MaxVersion != ourKRaft.MaxVersion):
			t.Errorf("ApiVersions v%d kraft.version supported: Kafka %d-%d, kraftd %d-%d", v,
				kafkaKRaft.MinVersion, kafkaKRaft.MaxVersion, ourKRaft.MinVersion, ourKRaft.MaxVersion)
		}
	}
}

// testApiVersionsUnsupported sends an ApiVersions version Kafka does not know: Kafka answers
// UNSUPPORTED_VERSION in a v0 body, and kraftd's answer for the same request must be the
// same bytes.
func testApiVersionsUnsupported(t *testing.T, ctrl *kafkatest.Controller) {
	c, err := net.DialTimeout("tcp", ctrl.Addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const corr = 7
	const future = 42
	// A request version kmsg cannot encode: build v4's body and patch the header version.
	client := "kraftd-interop"
	frame := protocol.AppendRequest(nil, corr, &client, apiVersionsRequest(4))
	binary.BigEndian.PutUint16(frame[6:8], future)
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(frame); err != nil {
		t.Fatal(err)
	}
	resp, err := protocol.ReadFrame(c, protocol.DefaultMaxFrameSize, nil)
	if err != nil {
		t.Fatalf("Kafka closed instead of answering ApiVersions v%d: %v", future, err)
	}
	decoded, err := protocol.ParseResponse(resp, int16(kmsg.ApiVersions), 0)
	if err != nil {
		t.Fatalf("decode Kafka's v0 answer: %v (%x)", err, resp)
	}
	av := decoded.(*kmsg.ApiVersionsResponse)
	if av.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Errorf("Kafka answered ApiVersions v%d with error %d, want UNSUPPORTED_VERSION", future, av.ErrorCode)
	}
	oursResp := node.Apis().ApiVersionsResponse(future)
	ours := protocol.AppendResponse(nil, corr, oursResp)
	if !bytes.Equal(ours[4:], resp) {
		t.Errorf("UNSUPPORTED_VERSION answers differ:\nkafka:  %x (%s)\nkraftd: %x", resp, describeApis(av.ApiKeys), ours[4:])
	}
}
