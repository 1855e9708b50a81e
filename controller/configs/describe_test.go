package configs

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
)

func describeImage(t *testing.T) *image.Image {
	t.Helper()
	b := image.NewBuilder(image.Empty(), image.Options{})
	for i, r := range []metadata.Record{
		&metadata.TopicRecord{Name: "t", TopicId: [16]byte{1}},
		&metadata.ConfigRecord{ResourceType: TopicResource, ResourceName: "t", Name: "retention.ms", Value: sp(" 1000")},
		&metadata.ConfigRecord{ResourceType: BrokerResource, ResourceName: "", Name: "log.retention.ms", Value: sp("5000")},
		&metadata.ConfigRecord{ResourceType: BrokerResource, ResourceName: "", Name: "log.retention.hours", Value: sp("10")},
		&metadata.ConfigRecord{ResourceType: BrokerResource, ResourceName: "", Name: "custom.key", Value: sp("x")},
		&metadata.ConfigRecord{ResourceType: BrokerResource, ResourceName: "1", Name: "log.cleaner.threads", Value: sp("3")},
	} {
		if err := b.Replay(int64(i), 1, r, 0); err != nil {
			t.Fatal(err)
		}
	}
	return b.Image()
}

func describeOne(t *testing.T, im *image.Image, synonyms bool, typ int8, name string, keys ...string) kmsg.DescribeConfigsResponseResource {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms = synonyms
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.ConfigNames = kmsg.ConfigResourceType(typ), name, keys
	req.Resources = append(req.Resources, r)
	resp, err := Describe(DescribeSource{Image: im, NodeID: 1, Static: map[string]string{"node.id": "1", "log.roll.hours": "100"}}, req)
	if err != nil || len(resp.Resources) != 1 {
		t.Fatalf("describe %d %q: %v %+v", typ, name, err, resp)
	}
	return resp.Resources[0]
}

func derefOr(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

// TestDescribeTopic: the topic's own value as its type prints it, with the
// TOPIC_CONFIG synonym first and then the server synonyms from the dynamic
// cluster record (the non-dynamic log.retention.hours left out) and the
// defaults; a key the topic lacks takes the static property, converted.
func TestDescribeTopic(t *testing.T) {
	im := describeImage(t)
	res := describeOne(t, im, true, TopicResource, "t", "retention.ms", "segment.ms")
	if res.ErrorCode != 0 || len(res.Configs) != 2 {
		t.Fatalf("%+v", res)
	}
	var ret, seg kmsg.DescribeConfigsResponseResourceConfig
	for _, c := range res.Configs {
		if c.Name == "retention.ms" {
			ret = c
		} else {
			seg = c
		}
	}
	if derefOr(ret.Value) != "1000" || ret.Source != 1 || ret.ConfigType != 5 || len(ret.ConfigSynonyms) != 3 ||
		ret.ConfigSynonyms[0].Source != 1 || derefOr(ret.ConfigSynonyms[1].Value) != "5000" || ret.ConfigSynonyms[1].Source != 3 ||
		ret.ConfigSynonyms[2].Name != "log.retention.hours" || derefOr(ret.ConfigSynonyms[2].Value) != "168" || ret.ConfigSynonyms[2].Source != 5 {
		t.Errorf("retention.ms: %+v", ret)
	}
	// The synonyms start at log.roll.ms, set nowhere: none, and the source
	// is DEFAULT_CONFIG although the value is the static hours, as in Kafka.
	if derefOr(seg.Value) != "360000000" || seg.Source != 5 || len(seg.ConfigSynonyms) != 0 {
		t.Errorf("segment.ms: %+v", seg)
	}
	if res := describeOne(t, im, false, TopicResource, "u"); res.ErrorCode != kerr.UnknownTopicOrPartition.Code || derefOr(res.ErrorMessage) != "" {
		t.Errorf("unknown topic: %+v", res)
	}
	if res := describeOne(t, im, false, TopicResource, ""); res.ErrorCode != kerr.InvalidTopicException.Code ||
		derefOr(res.ErrorMessage) != "Topic name is invalid: the empty string is not allowed" {
		t.Errorf("empty topic: %+v", res)
	}
}

// TestDescribeBroker: the cluster resource lists its dynamic keys (unknown
// ones sensitive, without a value), this node's resource is its whole
// configuration, other and bad ids are refused with Kafka's texts.
func TestDescribeBroker(t *testing.T) {
	im := describeImage(t)
	res := describeOne(t, im, true, BrokerResource, "")
	got := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, c := range res.Configs {
		got[c.Name] = c
	}
	if len(got) != 2 || derefOr(got["log.retention.ms"].Value) != "5000" || got["log.retention.ms"].Source != 3 || got["log.retention.ms"].ReadOnly ||
		got["custom.key"].Value != nil || !got["custom.key"].IsSensitive || got["custom.key"].ConfigType != 0 {
		t.Errorf("cluster: %+v", res.Configs)
	}
	res = describeOne(t, im, true, BrokerResource, "1", "log.cleaner.threads", "broker.id", "log.roll.hours", "process.roles")
	got = map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, c := range res.Configs {
		got[c.Name] = c
	}
	if derefOr(got["log.cleaner.threads"].Value) != "3" || got["log.cleaner.threads"].Source != 2 ||
		derefOr(got["broker.id"].Value) != "1" || !got["broker.id"].ReadOnly || got["broker.id"].Source != 4 ||
		derefOr(got["log.roll.hours"].Value) != "100" || got["log.roll.hours"].Source != 4 ||
		got["process.roles"].Value != nil || got["process.roles"].Source != 5 {
		t.Errorf("own node: %+v", res.Configs)
	}
	for name, want := range map[string]string{
		"2":  "Unexpected broker id, expected 1 or empty string, but received 2",
		"x":  "Broker id must be an integer, but it is: x",
		"-1": "Unexpected broker id, expected 1 or empty string, but received -1",
	} {
		if res := describeOne(t, im, false, BrokerResource, name); res.ErrorCode != kerr.InvalidRequest.Code || derefOr(res.ErrorMessage) != want {
			t.Errorf("broker %q: %+v", name, res)
		}
	}
	if res := describeOne(t, im, false, BrokerLoggerResource, ""); res.ErrorCode != kerr.InvalidRequest.Code || derefOr(res.ErrorMessage) != "Broker id must not be empty" {
		t.Errorf("logger: %+v", res)
	}
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType = 99
	req.Resources = append(req.Resources, r)
	if _, err := Describe(DescribeSource{Image: im, NodeID: 1}, req); err == nil || err.Err != kerr.InvalidRequest {
		t.Errorf("unknown type: %v", err)
	}
}

// TestDescribeBounded: a request naming this node's resource again and
// again gets answers up to a bound, then a refusal per resource, not an
// answer of any size.
func TestDescribeBounded(t *testing.T) {
	im := describeImage(t)
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms, req.IncludeDocumentation = true, true
	for range 2000 {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
		req.Resources = append(req.Resources, r)
	}
	resp, err := Describe(DescribeSource{Image: im, NodeID: 1}, req)
	if err != nil || len(resp.Resources) != 2000 {
		t.Fatalf("%v %d", err, len(resp.Resources))
	}
	answered, size := 0, 0
	for _, r := range resp.Resources {
		if r.ErrorCode == 0 {
			answered++
			size += answerBytes(r.Configs)
		} else if r.ErrorCode != kerr.InvalidRequest.Code || derefOr(r.ErrorMessage) != tooLarge {
			t.Fatalf("%+v", r)
		}
	}
	if answered == 0 || answered == 2000 || size > maxAnswerBytes {
		t.Errorf("%d answered, %d bytes", answered, size)
	}
}
