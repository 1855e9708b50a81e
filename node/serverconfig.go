package node

import (
	"math"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/network"
)

// serverConfig maps the socket settings onto the network server's configuration.
func serverConfig(cfg *config.Config, listeners []network.ListenerConfig) network.ServerConfig {
	sc := network.ServerConfig{
		Listeners:             listeners,
		MaxFrameSize:          cfg.SocketRequestMaxBytes,
		IdleTimeout:           cfg.ConnectionsMaxIdle, // config.NeverIdle is negative: never
		MaxConnections:        int(cfg.MaxConnections),
		MaxConnectionsPerIP:   int(cfg.MaxConnectionsPerIP),
		QueuedMaxRequests:     int(cfg.QueuedMaxRequests),
		QueuedMaxRequestBytes: cfg.QueuedMaxRequestBytes,
	}
	if sc.MaxConnectionsPerIP == 0 {
		sc.MaxConnectionsPerIP = network.NoConnections // only the overrides connect
	}
	if len(cfg.MaxConnectionsPerIPOverrides) > 0 {
		sc.MaxConnectionsPerIPOverrides = make(map[string]int, len(cfg.MaxConnectionsPerIPOverrides))
		for host, n := range cfg.MaxConnectionsPerIPOverrides {
			sc.MaxConnectionsPerIPOverrides[host] = int(n)
		}
	}
	switch r := cfg.MaxConnectionCreationRate; r {
	case math.MaxInt32: // Kafka's default: unlimited
	case 0:
		// Kafka caps the accept delay at its one-second quota window, so a zero rate
		// admits about one connection per second rather than none.
		sc.MaxConnectionCreationRate = 1
	default:
		sc.MaxConnectionCreationRate = float64(r)
	}
	return sc
}
