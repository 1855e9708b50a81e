package interop

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/interop/kafkatest"
	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/protocol"
)

// metadataVersionFeature is the feature only a node running Kafka's QuorumController
// supports: kraftd learns from it which voters can be the active controller.
const metadataVersionFeature = "metadata.version"

// TestKafkaControllerAdvertisesMetadataVersion: a Kafka 4.4.0 controller's ApiVersions
// answer (v4, as kraftd's peer client sends on every connection) lists metadata.version
// among its SupportedFeatures; kraftd's lists kraft.version only. Leadership deferral
// (node/deferral.go) rests on this difference.
func TestKafkaControllerAdvertisesMetadataVersion(t *testing.T) {
	env := kafkatest.Require(t)
	c := env.StartController(t, kafkatest.ControllerConfig{NodeID: 1})
	k := kafkatest.StartKraftd(t, kafkatest.KraftdConfig{NodeID: 1})
	for _, tc := range []struct {
		name, addr string
		want       bool
	}{{"Kafka controller", c.Addr, true}, {"kraftd", k.Addr, false}} {
		features := connectFeatures(t, tc.addr)
		if got := slices.Contains(features, metadataVersionFeature); got != tc.want {
			t.Errorf("%s supports %q: %s listed: %v, want %v", tc.name, features, metadataVersionFeature, got, tc.want)
		}
		if !slices.Contains(features, protocol.KRaftVersionFeature) {
			t.Errorf("%s supports %q: no %s", tc.name, features, protocol.KRaftVersionFeature)
		}
		t.Logf("%s at %s: SupportedFeatures %q", tc.name, tc.addr, features)
	}
}

// connectFeatures opens one connection with kraftd's peer client and returns the
// SupportedFeatures names of the peer's ApiVersions answer.
func connectFeatures(t *testing.T, addr string) []string {
	t.Helper()
	got := make(chan []string, 1)
	p := network.NewPeers(network.PeerConfig{ClientID: "raft-client-1", OnConnect: func(_ int32, f []string) { got <- f }})
	defer p.Close()
	p.SetAddress(1, addr)
	p.Send(1, kmsg.NewPtrDescribeQuorumRequest(), func(kmsg.Response, error) {})
	select {
	case f := <-got:
		return f
	case <-time.After(30 * time.Second):
		t.Fatalf("no connection to %s within 30s", addr)
		return nil
	}
}
