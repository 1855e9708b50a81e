package node

import (
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/raft"
)

// metadataVersionFeature is the feature a Kafka controller lists in its
// ApiVersions SupportedFeatures because it runs the QuorumController that
// interprets the metadata log; kraftd lists only kraft.version.
const metadataVersionFeature = features.MetadataVersionName

// controllers tracks which peers can act as the active controller, as the
// peer client's connections learn it (PeerConfig.OnConnect, on client
// goroutines), and wakes the loop, which passes the set to the driver
// (raft.Driver.SetPreferredLeaders) for leadership deferral.
type controllers struct {
	mu    sync.Mutex
	known map[int32]bool // node id -> lists metadata.version
	// changed (capacity 1) tells the loop the set changed since it last
	// read it.
	changed chan struct{}
}

func newControllers() *controllers {
	return &controllers{known: map[int32]bool{}, changed: make(chan struct{}, 1)}
}

// connected records what a new connection's ApiVersions answer said about
// node. A bootstrap server (negative id) is skipped: its node id is unknown.
// A node that restarts as other software is re-learned on its next
// connection.
func (c *controllers) connected(node int32, features []string) {
	if node < 0 {
		return
	}
	is := slices.Contains(features, metadataVersionFeature)
	c.mu.Lock()
	was, seen := c.known[node]
	c.known[node] = is
	c.mu.Unlock()
	if !seen || was != is {
		select {
		case c.changed <- struct{}{}:
		default: // the loop has not read the previous change yet
		}
	}
}

// knows reports whether a connection to node has told its software.
func (c *controllers) knows(node int32) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.known[node]
	return ok
}

// ids are the nodes known to run a QuorumController, in id order.
func (c *controllers) ids() []int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int32
	for id, is := range c.known {
		if is {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// changes is the loop's wake-up channel; nil (never ready) without
// deferral.
func (c *controllers) changes() <-chan struct{} {
	if c == nil {
		return nil
	}
	return c.changed
}

// probeEvery is how often a leader connects to the voters whose software
// it does not know yet (probeControllers).
const probeEvery = time.Second

// probeControllers (loop) opens a connection to every other voter whose
// software is unknown, while this node leads: a leader sends nothing to a
// voter that fetches from it, so without this it would not learn that the
// voter can act as the active controller (after the whole quorum
// restarted, say) and would keep a leadership it means to hand over. The
// connection's ApiVersions exchange teaches it (controllers.connected). It
// reports whether any voter is still unknown.
func (n *Node) probeControllers(st raft.Status) bool {
	if st.Role != raft.RoleLeader {
		return false
	}
	unknown := false
	for _, id := range st.Voters.IDs() {
		if id != st.NodeID && !n.ctrls.knows(id) {
			unknown = true
			n.peers.Connect(id)
		}
	}
	return unknown
}

// applyControllers (loop) hands the current set to the driver.
func (n *Node) applyControllers(now time.Time) error {
	ids := n.ctrls.ids()
	n.lg.Info("learned which voters can act as the active controller; leadership is deferred to them",
		zap.Int32s("controllers", ids))
	if err := n.driver.SetPreferredLeaders(now, ids); err != nil {
		return n.fatal("set preferred leaders", err)
	}
	return nil
}
