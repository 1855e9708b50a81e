package faults

import (
	"fmt"
	"maps"
	"math/rand"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/kraftd/kraftd/vfs/faultfs"
)

// Power loss at process level (rows 3 and 5). A kill -9 keeps everything
// the process wrote in the page cache, so on its own it never loses an
// unflushed tail. PowerLoss kills the nodes and then cuts every file their
// file layer wrote back to a random size between its size at the last
// fsync (faultfs.SyncLedger) and its current one: the unflushed tail is gone,
// wholly or in part, and a cut inside a batch leaves it torn. What no
// fsync covered may go entirely.

// Cut is what a power loss took from one node.
type Cut struct {
	Node         int32
	Files, Bytes int64 // files cut and bytes dropped
}

func (c Cut) String() string {
	return fmt.Sprintf("node %d lost %d bytes in %d files", c.Node, c.Bytes, c.Files)
}

// PowerLoss kills ids at once with SIGKILL, then drops from each its
// unflushed writes at random; the nodes stay down.
func (c *Cluster) PowerLoss(rng *rand.Rand, ids ...int32) []Cut {
	c.t.Helper()
	for _, id := range ids {
		c.signal(id, syscall.SIGKILL)
	}
	var cuts []Cut
	for _, id := range ids {
		if !c.WaitExit(id, 10*time.Second) {
			c.t.Fatalf("node %d did not die of SIGKILL within 10s", id)
		}
		cut, err := c.dropUnflushed(rng, id)
		if err != nil {
			c.t.Fatalf("power loss of node %d: %v", id, err)
		}
		cuts = append(cuts, cut)
		c.mu.Lock()
		c.dropped += cut.Bytes
		c.mu.Unlock()
	}
	return cuts
}

func (c *Cluster) dropUnflushed(rng *rand.Rand, id int32) (Cut, error) {
	nd := c.nodes[id]
	cut := Cut{Node: id}
	if nd.kafka {
		return cut, nil // Kafka's file layer keeps no ledger
	}
	text, err := os.ReadFile(nd.ledger)
	if err != nil && !os.IsNotExist(err) {
		return cut, err
	}
	durable, err := faultfs.DurableSizes(string(text))
	if err != nil {
		return cut, fmt.Errorf("%s: %w", nd.ledger, err)
	}
	// In path order, so that a FAULT_SEED replays the same cut points.
	for _, path := range slices.Sorted(maps.Keys(durable)) {
		size := durable[path]
		if !strings.HasPrefix(path, nd.DataDir+string(os.PathSeparator)) {
			continue
		}
		st, err := os.Stat(path)
		if err != nil || st.Size() <= size {
			continue // gone, or truncated since its fsync
		}
		keep := size + rng.Int63n(st.Size()-size+1)
		if keep == st.Size() {
			continue
		}
		if err := os.Truncate(path, keep); err != nil {
			return cut, err
		}
		cut.Files++
		cut.Bytes += st.Size() - keep
	}
	return cut, nil
}

// tornTail is what kraftd logs when it cuts a torn batch off at start-up.
const tornTail = "truncating torn or corrupt tail"

// logCount is how often s occurs in node id's log (all its runs).
func (c *Cluster) logCount(id int32, s string) int {
	b, _ := os.ReadFile(c.nodes[id].errLog)
	return strings.Count(string(b), s)
}
