package configs

import (
	"fmt"
	"strings"
	"testing"
)

// Kafka's first pass over a configs request: a resource named twice gets
// one INVALID_REQUEST answer (at its second mention) and no alteration, a
// third mention nothing; an unknown type is UNSUPPORTED_VERSION every time;
// the same name under two types is two resources; BROKER_LOGGER is exempt
// where IncrementalAlterConfigs applies it itself.
func TestScreen(t *testing.T) {
	res := []Resource{
		{TopicResource, "a"}, {BrokerResource, "1"}, {TopicResource, "a"}, {TopicResource, "b"},
		{99, "x"}, {TopicResource, "a"}, {BrokerResource, "a"}, {99, "x"}, {BrokerLoggerResource, "1"}, {BrokerLoggerResource, "1"},
	}
	describe := func(s []Screening) string {
		var parts []string
		for _, v := range s {
			switch {
			case v.Err != nil:
				parts = append(parts, v.Err.Err.Message+" "+v.Err.Message)
			case v.Dropped:
				parts = append(parts, "dropped")
			default:
				parts = append(parts, "alter")
			}
		}
		return strings.Join(parts, "|")
	}
	want := "dropped|alter|INVALID_REQUEST Duplicate resource.|alter|UNSUPPORTED_VERSION Unknown resource type 99.|dropped|alter|" +
		"UNSUPPORTED_VERSION Unknown resource type 99.|alter|alter"
	if got := describe(Screen(res, true)); got != want {
		t.Errorf("IncrementalAlterConfigs:\n got %s\nwant %s", got, want)
	}
	// AlterConfigs has no exemption: BROKER_LOGGER twice is a duplicate.
	got := describe(Screen(res, false))
	if want := strings.TrimSuffix(want, "|alter|alter") + "|dropped|INVALID_REQUEST Duplicate resource."; got != want {
		t.Errorf("AlterConfigs:\n got %s\nwant %s", got, want)
	}
	for _, typ := range []int8{0, 1, 3, 64, -1} {
		if s := Screen([]Resource{{typ, "x"}}, true); s[0].Err == nil || s[0].Err.Message != fmt.Sprintf("Unknown resource type %d.", typ) {
			t.Errorf("type %d: %+v", typ, s[0])
		}
	}
}
