package metadatalog

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/kraftd/kraftd/raft"
)

// LeaderEpochCheckpointFile holds the epoch cache in Kafka's text format.
const LeaderEpochCheckpointFile = "leader-epoch-checkpoint"

// epochEntry says: batches of Epoch start at StartOffset.
type epochEntry struct {
	Epoch       int32
	StartOffset int64
}

// epochCache is Kafka's LeaderEpochFileCache in memory.
// Invariant: entries strictly increase in both Epoch and StartOffset.
type epochCache struct {
	entries []epochEntry
}

func (c *epochCache) latest() (epochEntry, bool) {
	if len(c.entries) == 0 {
		return epochEntry{}, false
	}
	return c.entries[len(c.entries)-1], true
}

// assign records that epoch starts at start, as Kafka's assign does: no-op
// when the latest entry has the same epoch and a start at or below start;
// otherwise entries that would break monotonicity are dropped first.
// Reports whether the cache changed.
func (c *epochCache) assign(epoch int32, start int64) bool {
	if l, ok := c.latest(); ok && l.Epoch == epoch && start >= l.StartOffset {
		return false
	}
	kept := c.entries[:0]
	for _, e := range c.entries {
		if e.Epoch < epoch && e.StartOffset < start {
			kept = append(kept, e)
		}
	}
	c.entries = append(kept, epochEntry{epoch, start})
	return true
}

// truncateFromEnd drops entries starting at or after end (the new log end
// offset).
func (c *epochCache) truncateFromEnd(end int64) bool {
	n := len(c.entries)
	for n > 0 && c.entries[n-1].StartOffset >= end {
		n--
	}
	changed := n != len(c.entries)
	c.entries = c.entries[:n]
	return changed
}

// truncateFromStart moves the first entry's start up to start (log start
// moved forward): entries wholly below start are dropped, the one covering
// start is kept with its start offset raised (Kafka's truncateFromStart).
func (c *epochCache) truncateFromStart(start int64) bool {
	i := 0
	for i+1 < len(c.entries) && c.entries[i+1].StartOffset <= start {
		i++
	}
	changed := i > 0
	c.entries = c.entries[i:]
	if len(c.entries) > 0 && c.entries[0].StartOffset < start {
		c.entries[0].StartOffset = start
		changed = true
	}
	return changed
}

// endOffsetFor answers as Kafka's LeaderEpochFileCache.endOffsetFor: the
// latest epoch ends at the log end offset; an older epoch ends where the next
// larger epoch starts (returning the largest epoch <= epoch); an epoch below
// the first entry ends at the first entry's start (returning the epoch
// asked); -1, an empty cache or an epoch above the latest is undefined.
func (c *epochCache) endOffsetFor(epoch int32, leo int64) (raft.OffsetAndEpoch, bool) {
	if epoch < 0 || len(c.entries) == 0 {
		return raft.OffsetAndEpoch{}, false
	}
	if l, _ := c.latest(); l.Epoch == epoch {
		return raft.OffsetAndEpoch{Offset: leo, Epoch: epoch}, true
	}
	for i, e := range c.entries {
		if e.Epoch > epoch {
			if i == 0 {
				return raft.OffsetAndEpoch{Offset: e.StartOffset, Epoch: epoch}, true
			}
			return raft.OffsetAndEpoch{Offset: e.StartOffset, Epoch: c.entries[i-1].Epoch}, true
		}
	}
	return raft.OffsetAndEpoch{}, false
}

// encode renders the cache as Kafka's leader-epoch-checkpoint: version 0,
// the entry count, then "epoch startOffset" lines.
func (c *epochCache) encode() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", len(c.entries))
	for _, e := range c.entries {
		fmt.Fprintf(&b, "%d %d\n", e.Epoch, e.StartOffset)
	}
	return b.Bytes()
}

// decodeEpochCheckpoint parses a leader-epoch-checkpoint file.
func decodeEpochCheckpoint(data []byte) ([]epochEntry, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		return strings.TrimSpace(sc.Text()), true
	}
	v, ok := line()
	if !ok || v != "0" {
		return nil, fmt.Errorf("unsupported version %q", v)
	}
	cnt, ok := line()
	n, err := strconv.Atoi(cnt)
	if !ok || err != nil || n < 0 {
		return nil, fmt.Errorf("bad entry count %q", cnt)
	}
	var out []epochEntry
	for i := 0; i < n; i++ {
		l, ok := line()
		if !ok {
			return nil, fmt.Errorf("expected %d entries, found %d", n, i)
		}
		f := strings.Fields(l)
		if len(f) != 2 {
			return nil, fmt.Errorf("bad entry %q", l)
		}
		e, err1 := strconv.ParseInt(f[0], 10, 32)
		s, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("bad entry %q", l)
		}
		out = append(out, epochEntry{int32(e), s})
	}
	if l, ok := line(); ok && l != "" {
		return nil, fmt.Errorf("expected %d entries, found more", n)
	}
	return out, nil
}
