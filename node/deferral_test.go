package node

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/topics"
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
		{topics.ClusterMetadata, "", false}, // a node that can be the active controller leads
		{topics.ClusterMetadata, "true", true},
		{topics.ClusterMetadata, "false", false},
		{topics.RaftPerformanceTest, "", false},
		{topics.RaftPerformanceTest, "true", false},
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

// A leader connects to the voters whose software it does not know (a voter that only
// fetches from it gets no request of its own), and learns it from the connection; a
// follower does not probe; an unreachable voter keeps the probe going.
func TestLeaderProbesUnknownVoters(t *testing.T) {
	p, _ := config.ParseProperties(baseConfig)
	p.Set(config.LeadershipDeferralKey, "true")
	cfg, err := config.New(p, false)
	if err != nil {
		t.Fatal(err)
	}
	n, err := New(cfg, Options{TopicName: topics.ClusterMetadata, ShutdownTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := network.NewServer(network.ServerConfig{Apis: Apis(), Listeners: []network.ListenerConfig{{Name: "CONTROLLER", Addr: "127.0.0.1:0"}}},
		network.HandlerFunc(func(*network.ConnInfo, protocol.RequestHeader, kmsg.Request, func(kmsg.Response)) {
			t.Error("the probe sent a request")
		}))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead.Close() // nothing listens there any more
	n.peers = network.NewPeers(network.PeerConfig{OnConnect: n.ctrls.connected, RequestTimeout: time.Second})
	t.Cleanup(n.peers.Close)
	n.peers.SetAddress(2, srv.Addrs()["CONTROLLER"].String())
	n.peers.SetAddress(3, dead.Addr().String())
	voters, err := raft.NewVoterSet(staticVoterNodes(n.rcfg.Voters))
	if err != nil {
		t.Fatal(err)
	}
	st := raft.Status{NodeID: 1, Role: raft.RoleFollower, Voters: voters}
	if n.probeControllers(st) {
		t.Fatal("a follower probes")
	}
	st.Role = raft.RoleLeader
	deadline := time.Now().Add(5 * time.Second)
	for !n.ctrls.knows(2) {
		if !n.probeControllers(st) {
			t.Fatal("the probe reports every voter known before node 2 answered")
		}
		if time.Now().After(deadline) {
			t.Fatal("the leader did not learn node 2's software within 5s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !n.probeControllers(st) || n.ctrls.knows(3) {
		t.Fatal("unreachable node 3 counts as known")
	}
	if len(n.ctrls.ids()) != 0 {
		t.Fatalf("a kraftd voter counts as a controller: %v", n.ctrls.ids())
	}
}
