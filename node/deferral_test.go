package node

import (
	"slices"
	"testing"
	"time"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/raft"
)

// Peers that list metadata.version are controllers; a change, and only a change, wakes the
// loop; bootstrap servers (negative ids) are not counted; a node that comes back as other
// software is re-learned.
func TestControllersLearnedFromConnections(t *testing.T) {
	c := newControllers()
	kafka := []string{"group.version", "kraft.version", metadataVersionFeature}
	kraftd := []string{"kraft.version"}
	woken := func() bool {
		select {
		case <-c.changes():
			return true
		default:
			return false
		}
	}
	c.connected(1, kafka)
	c.connected(3, kraftd)
	c.connected(-2, kafka)
	if !woken() || !slices.Equal(c.ids(), []int32{1}) {
		t.Fatalf("controllers %v, want [1] and a wake-up", c.ids())
	}
	c.connected(1, kafka) // a reconnect with the same answer
	c.connected(3, kraftd)
	if woken() {
		t.Fatal("woken without a change")
	}
	c.connected(2, kafka)
	c.connected(1, kraftd) // node 1 restarted as kraftd
	if !woken() || !slices.Equal(c.ids(), []int32{2}) {
		t.Fatalf("controllers %v, want [2] and a wake-up", c.ids())
	}
	var none *controllers
	if none.changes() != nil {
		t.Fatal("a node without deferral has a wake-up channel")
	}
}

// Deferral applies to __cluster_metadata, where Kafka controllers run; test-kraft-server-start's
// partition keeps normal leadership; the key turns it off.
func TestDeferralOnlyOnTheMetadataLog(t *testing.T) {
	for _, tc := range []struct {
		topic string
		key   string
		want  bool
	}{
		{raft.MetadataTopicName, "", true},
		{raft.MetadataTopicName, "false", false},
		{raft.PerformanceTestTopicName, "", false},
		{raft.PerformanceTestTopicName, "true", false},
	} {
		p, _ := config.ParseProperties(baseConfig)
		if tc.key != "" {
			p.Set(config.LeadershipDeferralKey, tc.key)
		}
		cfg, err := config.New(p, false)
		if err != nil {
			t.Fatal(err)
		}
		n, err := New(cfg, Options{TopicName: tc.topic, ShutdownTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if n.rcfg.DeferLeadership != tc.want || (n.ctrls != nil) != tc.want {
			t.Errorf("%s with %s=%q: deferral %v (tracking controllers %v), want %v", tc.topic,
				config.LeadershipDeferralKey, tc.key, n.rcfg.DeferLeadership, n.ctrls != nil, tc.want)
		}
	}
}
