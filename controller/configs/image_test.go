package configs

import (
	"testing"

	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
)

func TestLayersFromImage(t *testing.T) {
	b := image.NewBuilder(image.Empty(), image.Options{})
	for i, r := range []*metadata.ConfigRecord{
		{ResourceType: BrokerResource, ResourceName: "", Name: "log.retention.hours", Value: sp("2")},
		{ResourceType: BrokerResource, ResourceName: "3", Name: "min.insync.replicas", Value: sp("2")},
		{ResourceType: TopicResource, ResourceName: "t", Name: "cleanup.policy", Value: sp("compact")},
	} {
		if err := b.Replay(int64(i), 1, r, 0); err != nil {
			t.Fatal(err)
		}
	}
	im := b.Image()
	l := TopicLayers(im, map[string]string{"log.segment.bytes": "2097152"}, 3, "t")
	for key, want := range map[string]string{"retention.ms": "7200000", "min.insync.replicas": "2", "cleanup.policy": "compact", "segment.bytes": "2097152"} {
		if e, _ := Effective(key, l); e.Value == nil || *e.Value != want {
			t.Errorf("%s = %+v, want %q", key, e, want)
		}
	}
	recs, err := IncrementalAlter(TopicResource, "t", []Op{{"cleanup.policy", OpAppend, sp("delete")}}, Context{Current: Current(im, TopicResource, "t")})
	if err != nil || recString(recs) != "cleanup.policy=compact,delete;" {
		t.Errorf("APPEND on the image's value: %q %v", recString(recs), err)
	}
}
