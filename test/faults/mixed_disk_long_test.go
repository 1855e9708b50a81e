//go:build faults

package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestMixedDiskFull (row 9, kraftd beside Kafka): two kraftd nodes and one
// Kafka 4.4.0 TestRaftServer, each on its own tmpfs. The disk of the Kafka
// node fills up while it follows and while it leads, then a kraftd
// leader's. Kafka 4.4 and kraftd react alike: the process stops (exit 1),
// the others commit on, nothing acknowledged is lost; space returns, the
// node restarts and rejoins.
func TestMixedDiskFull(t *testing.T) {
	skipShort(t)
	mounts := map[int32]string{}
	for id := int32(1); id <= 3; id++ {
		mounts[id] = mountTmpfs(t, "64m")
	}
	c, _ := start(t, Options{Kafka: []int32{3}, Throughput: 200, DataDir: func(id int32) string { return mounts[id] }})
	for _, tc := range []struct {
		what        string
		node        int32
		wantLeading bool
	}{{"Kafka follower", 3, false}, {"Kafka leader", 3, true}, {"kraftd leader", 1, true}} {
		s := c.leadBy(t, tc.node, tc.wantLeading)
		r := c.BeginRound("enospc " + tc.what)
		if tc.wantLeading {
			r.MinEpoch = s.Epoch // a stopped leader's successor must commit
		}
		filler := fill(t, mounts[tc.node], 16<<10)
		if !c.WaitExit(tc.node, LivenessBound) {
			t.Fatalf("%s: node %d (%s) still runs %v after its disk filled", tc.what, tc.node, c.kind(tc.node), LivenessBound)
		}
		t.Logf("%s: node %d (%s) stopped on ENOSPC: %v", tc.what, tc.node, c.kind(tc.node), c.ExitErr(tc.node))
		os.Remove(filler)
		c.Start(tc.node)
		took, ok := c.Healed(r)
		t.Logf("%s: space back, node %d restarted; commit %v later (ok %v)", tc.what, tc.node, took, ok)
	}
	c.WaitCaughtUp(LivenessBound)
	h := c.Check()
	t.Logf("history: %s", Summary(h))
	c.CompareWithKafkaDump()
}

// leadBy kills leaders (kill -9, restarted at once) until node id leads
// (want) or follows (!want) a committing leader, and returns its sample.
func (c *Cluster) leadBy(t *testing.T, id int32, want bool) Sample {
	t.Helper()
	for i := 0; i < 20; i++ {
		s := c.WaitLeader(LivenessBound)
		if (s.Node == id) == want {
			return s
		}
		r := c.BeginRound("kill9 leader")
		r.MinEpoch = s.Epoch
		c.Kill(s.Node)
		c.downAndBack(r, s.Node, func() {})
	}
	t.Fatalf("node %d did not come to lead=%v in 20 leader kills", id, want)
	return Sample{}
}

// TestMixedCorruption (row 6, kraftd beside Kafka): a bit flips in the
// middle of a stopped follower's largest segment, below its high watermark,
// once on the Kafka 4.4.0 TestRaftServer and once on a kraftd node, and
// each restarts. kraftd refuses to start, naming the file (the operator
// decides: committed data is never dropped silently); Kafka starts, drops
// its log from the damaged batch on (its recovery truncates there) and
// fetches it again from the leader. Either way the quorum commits on and,
// once caught up, every log reads back valid with kafka-dump-log.
func TestMixedCorruption(t *testing.T) {
	skipShort(t)
	c, _ := start(t, Options{Kafka: []int32{3}, Throughput: 200})
	for _, id := range []int32{3, 2} {
		c.waitLogBytes(t, id, 64<<10)
		s := c.leadBy(t, id, false)
		r := c.BeginRound(fmt.Sprintf("bit flip in the log of follower %d (%s)", id, c.kind(id)))
		c.Kill(id)
		seg, orig := largestSegment(t, c.partitionDir(id))
		bad := append([]byte(nil), orig...)
		bad[len(bad)/2] ^= 0x40
		if err := os.WriteFile(seg, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		c.Start(id)
		least := int64(len(orig))
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && c.Running(id); time.Sleep(20 * time.Millisecond) {
			if st, err := os.Stat(seg); err == nil {
				least = min(least, st.Size())
			}
		}
		t.Logf("%s node %d: the damaged segment (%d bytes, flip at %d) held as little as %d bytes in the 5 s after the restart", c.kind(id), id, len(orig), len(orig)/2, least)
		if !c.Running(id) {
			t.Logf("%s node %d refused to start on the damaged segment: %v", c.kind(id), id, c.ExitErr(id))
			if c.kind(id) == "Kafka" {
				t.Errorf("Kafka node %d stopped on a damaged segment: %v", id, c.ExitErr(id))
			}
			if err := os.WriteFile(seg, orig, 0o644); err != nil {
				t.Fatal(err)
			}
			c.Start(id)
		} else if c.kind(id) == "kraftd" {
			t.Fatalf("kraftd node %d started on a damaged segment", id)
		} else {
			t.Logf("Kafka node %d started on the damaged segment (leader %d, epoch %d)", id, s.Node, s.Epoch)
			if least > int64(len(orig)/2) {
				t.Errorf("Kafka node %d kept the damaged batch (segment never below %d bytes)", id, least)
			}
		}
		took, ok := c.Healed(r)
		t.Logf("commit %v later (ok %v)", took, ok)
	}
	c.WaitCaughtUp(LivenessBound)
	h := c.Check()
	t.Logf("history: %s", Summary(h))
	c.CompareWithKafkaDump()
}

// waitLogBytes waits until node id's largest segment holds n bytes.
func (c *Cluster) waitLogBytes(t *testing.T, id int32, n int64) {
	t.Helper()
	deadline := time.Now().Add(LivenessBound)
	for time.Now().Before(deadline) {
		segs, _ := filepath.Glob(filepath.Join(c.partitionDir(id), "*.log"))
		for _, p := range segs {
			if st, err := os.Stat(p); err == nil && st.Size() >= n {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("node %d (%s) has no segment of %d bytes after %v", id, c.kind(id), n, LivenessBound)
}

// largestSegment returns the path and contents of the biggest segment in
// dir.
func largestSegment(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	var path string
	var data []byte
	for _, p := range segs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > len(data) {
			path, data = p, b
		}
	}
	if len(data) == 0 {
		t.Fatalf("no segment with data in %s", dir)
	}
	return path, data
}
