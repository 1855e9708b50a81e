package metrics

import (
	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/raft"
)

// View is what a scrape or a health check reads of a node: published by
// the node's run loop (Status at every change, the rest at most every
// viewPeriod), read by other goroutines. Its values are never modified
// after publication.
type View struct {
	Status raft.Status
	// Voters is each voter's replication progress on the leader; nil on
	// other roles.
	Voters         []raft.ReplicaProgress
	LogStartOffset int64
	LogSizeBytes   int64
	LogSegments    int
	ParkedFetches  int
	// Listeners are the network server's per-listener counts; Peers the
	// outbound connections to other nodes.
	Listeners []network.ListenerStats
	Peers     []network.PeerState
}

// Source gives the latest View; false while the node has not published
// one (starting up).
type Source func() (View, bool)
