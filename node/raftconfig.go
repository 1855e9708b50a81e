package node

import (
	"net"
	"os"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/raft"
)

// raftConfig maps the validated properties onto raft.Config.
func raftConfig(cfg *config.Config) raft.Config {
	rc := raft.DefaultConfig()
	rc.NodeID = cfg.NodeID
	rc.ListenerName = cfg.RaftListener()
	for _, v := range cfg.Voters {
		rc.Voters = append(rc.Voters, raft.Voter{ID: v.ID, Endpoints: []raft.Endpoint{{Name: rc.ListenerName, Host: v.Host, Port: int32(v.Port)}}})
	}
	for _, b := range cfg.BootstrapServers {
		rc.Bootstrap = append(rc.Bootstrap, raft.Endpoint{Host: b.Host, Port: int32(b.Port)})
	}
	rc.ElectionTimeout = cfg.ElectionTimeout
	rc.ElectionBackoffMax = cfg.ElectionBackoffMax
	rc.FetchTimeout = cfg.FetchTimeout
	rc.RequestTimeout = cfg.RequestTimeout
	rc.AppendLinger = cfg.AppendLinger
	rc.RetryBackoff = cfg.RetryBackoff
	rc.AutoJoin = cfg.AutoJoin && cfg.IsController()
	rc.FetchPace, rc.FetchPaceRate = cfg.FetchPace, cfg.FetchPaceRate
	rc.AppendFlushBytes, rc.MaxUncommittedBytes = cfg.AppendFlushBytes, cfg.MaxUncommitted
	// A batch must fit in one segment (the log refuses larger ones, as Kafka's does). Kafka's
	// 8 MiB segment minimum guarantees it; with metadata.log.segment.min.bytes lowered, the
	// leader's batches are capped at the segment size instead.
	if cfg.SegmentBytes < int64(rc.MaxBatchBytes) {
		rc.MaxBatchBytes = int(cfg.SegmentBytes)
	}
	return rc
}

// advertisedEndpoints resolves this node's controller endpoints: advertised
// host (or the bind host, or the machine's name when binding all addresses)
// and the bound port when the configured one is 0.
func advertisedEndpoints(cfg *config.Config, bound map[string]net.Addr) []raft.Endpoint {
	var out []raft.Endpoint
	for _, ep := range cfg.AdvertisedControllerListeners() {
		host, port := ep.Host, ep.Port
		if port == 0 {
			if a, ok := bound[ep.Name].(*net.TCPAddr); ok {
				port = a.Port
			}
		}
		if host == "" || host == "0.0.0.0" || host == "::" {
			if h, err := os.Hostname(); err == nil {
				host = h
			} else {
				host = "localhost"
			}
		}
		out = append(out, raft.Endpoint{Name: ep.Name, Host: host, Port: int32(port)})
	}
	return out
}
