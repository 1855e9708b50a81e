package node

import (
	"math"
	"testing"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/network"
)

func TestServerConfigMapsKafkaLimits(t *testing.T) {
	sc := serverConfig(&config.Config{
		MaxConnections: math.MaxInt32, MaxConnectionsPerIP: 0,
		MaxConnectionsPerIPOverrides: map[string]int32{"127.0.0.1": 4},
		MaxConnectionCreationRate:    0, QueuedMaxRequests: 500, QueuedMaxRequestBytes: -1,
		ConnectionsMaxIdle: config.NeverIdle,
	}, nil)
	if sc.MaxConnectionsPerIP != network.NoConnections || sc.MaxConnectionsPerIPOverrides["127.0.0.1"] != 4 ||
		sc.MaxConnectionCreationRate != 1 || sc.QueuedMaxRequests != 500 || sc.IdleTimeout >= 0 {
		t.Errorf("mapped %+v", sc)
	}
	if sc := serverConfig(&config.Config{MaxConnectionCreationRate: math.MaxInt32}, nil); sc.MaxConnectionCreationRate != 0 {
		t.Errorf("default creation rate mapped to %v, want unlimited", sc.MaxConnectionCreationRate)
	}
}
