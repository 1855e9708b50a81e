//go:build faults

package faults

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFsyncStalls (row 11): every fsync of the leader takes 1.5 s for 6 s,
// then every fsync of a follower takes 8 s for 12 s, with far more offered
// than stalled fsyncs let commit. Leadership may move (a stalled leader's
// loop misses its fetch deadlines) but safety holds, a leader commits once
// the disk is fast again, and memory stays bounded: the backlog waits in
// the workload's in-flight cap, raft's append accumulator and one fetch
// per follower, not in buffers that grow with the stall.
func TestFsyncStalls(t *testing.T) {
	skipShort(t)
	c, _ := start(t, Options{Throughput: 20000})
	for _, st := range []struct {
		leader      bool
		delay, hold time.Duration
	}{{true, 1500 * time.Millisecond, 6 * time.Second}, {false, 8 * time.Second, 12 * time.Second}} {
		s := c.WaitLeader(LivenessBound)
		node := s.Node
		if !st.leader {
			node = without(c.IDs, s.Node)[0]
		}
		r := c.BeginRound("stall fsync")
		c.SetDiskFaults(node, fmt.Sprintf("sync delay %s\n", st.delay))
		time.Sleep(st.hold) // the scenario: fsyncs stalled for hold
		c.SetDiskFaults(node, "")
		took, ok := c.Healed(r)
		t.Logf("fsyncs of node %d (leader %v) stalled %v for %v; commit %v after (ok %v)", node, st.leader, st.delay, st.hold, took, ok)
		if !c.Running(node) {
			t.Fatalf("node %d died of slow fsyncs", node)
		}
	}
	finish(t, c)
	for _, id := range c.IDs {
		peak, err := c.PeakRSS(id)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("node %d peak RSS %d MiB", id, peak>>20)
		if peak > maxRSS {
			t.Errorf("node %d peaked at %d MiB of RSS under stalled fsyncs (bound %d MiB)", id, peak>>20, maxRSS>>20)
		}
	}
}

// maxRSS bounds a node's memory under slow disks (row 11). A node at rest
// uses about 30 MiB; catching up after a stall, with 8 MiB fetches, peaked
// at 110-210 MiB (stalls of 12-60 s: the peak does not grow with the
// stall).
const maxRSS = 256 << 20

// runOnce runs the binary with args to its exit (bounded) and returns its
// combined output and error.
func (c *Cluster) runOnce(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), LivenessBound)
	defer cancel()
	out, err := exec.CommandContext(ctx, c.bin, args...).CombinedOutput()
	return string(out), err
}

// TestDataDirLoss (row 12): a follower loses its whole data dir. kraftd's
// start refuses the unformatted dir (as Kafka requires format). The
// operator rule with static voters: restart it only while a leader that
// holds the committed log is up (here the leader never stopped), so the
// empty node follows instead of voting a short log into leadership. It
// then catches up and nothing acknowledged is lost.
func TestDataDirLoss(t *testing.T) {
	skipShort(t)
	c, s := start(t, Options{})
	f := without(c.IDs, s.Node)[0]
	r := c.BeginRound("lose data dir of a follower")
	c.Kill(f)
	nd := c.Node(f)
	if err := os.RemoveAll(nd.DataDir); err != nil {
		t.Fatal(err)
	}
	out, err := c.runOnce(t, "start", "--config", nd.cfg)
	if err == nil || !strings.Contains(out, "meta.properties") {
		t.Fatalf("start on a lost data dir: err %v, output:\n%s", err, out)
	}
	t.Logf("start refuses the lost dir: %s", lastLine(out))
	c.WaitLeader(LivenessBound) // the operator rule: a leader with the log is up
	c.Start(f)                  // test-kraft-server-start formats it, as TestRaftServer does
	c.Healed(r)
	finish(t, c)
}

// TestCorruptionRefusesStart (rows 6, 7): a stopped follower's segment gets
// a flipped byte below its tail, then its quorum-state becomes garbage.
// Each time the node refuses to start, naming the file, and serves nothing;
// with the file repaired it rejoins and nothing acknowledged is lost.
func TestCorruptionRefusesStart(t *testing.T) {
	skipShort(t)
	c, s := start(t, Options{})
	f := without(c.IDs, s.Node)[0]
	c.waitLogBytes(t, f, 16<<10) // a segment with records below its tail to flip a bit in
	part := c.partitionDir(f)
	for _, tc := range []struct {
		fault, file string
		damage      func([]byte) []byte
	}{
		{"bit flip in a segment", "00000000000000000000.log", func(b []byte) []byte {
			b = append([]byte(nil), b...)
			b[len(b)/2] ^= 0x40
			return b
		}},
		{"garbage quorum-state", "quorum-state", func([]byte) []byte { return []byte("{\"clusterId\":") }},
	} {
		r := c.BeginRound(tc.fault)
		c.Kill(f)
		path := filepath.Join(part, tc.file)
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, tc.damage(orig), 0o644); err != nil {
			t.Fatal(err)
		}
		c.Start(f)
		if !c.WaitExit(f, LivenessBound) {
			t.Fatalf("%s: node %d still runs", tc.fault, f)
		}
		b, _ := os.ReadFile(c.Node(f).errLog)
		if c.ExitErr(f) == nil || !bytes.Contains(b[bytes.LastIndex(b, []byte("=== run")):], []byte(tc.file)) {
			t.Fatalf("%s: node %d exit %v; its log does not name %s", tc.fault, f, c.ExitErr(f), tc.file)
		}
		if err := os.WriteFile(path, orig, 0o644); err != nil {
			t.Fatal(err)
		}
		c.Start(f)
		c.Healed(r)
	}
	finish(t, c)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestSnapshotCatchUpUnderKills (row 31): with small segments, frequent
// snapshots and retention, the leader's log start moves past a stopped
// follower's end; the follower restarts and is killed -9 three times within
// its first 300 ms (while it fetches the snapshot and the log after it),
// then catches up through FetchSnapshot. Its log starts at a snapshot, and
// the checker (acks below a log start count as held by its snapshot) finds
// nothing lost.
func TestSnapshotCatchUpUnderKills(t *testing.T) {
	skipShort(t)
	c, s := start(t, Options{
		Props: []string{"metadata.log.max.record.bytes.between.snapshots=65536", "metadata.log.segment.min.bytes=16384",
			"metadata.log.segment.bytes=32768", "metadata.max.retention.bytes=131072"},
		Args: []string{"--log-maintenance-interval", "300ms"},
	})
	f := without(c.IDs, s.Node)[0]
	r := c.BeginRound("follower below log start")
	c.Kill(f)
	stopped, err := c.ReadLog(f)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * LivenessBound)
	for {
		l, err := c.readLiveLog(s.Node)
		if err == nil && l.Start > endOf(stopped.Batches) {
			t.Logf("leader %d log starts at %d, past node %d's end %d", s.Node, l.Start, f, endOf(stopped.Batches))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the leader's log start never passed node %d's end %d", f, endOf(stopped.Batches))
		}
		time.Sleep(200 * time.Millisecond)
	}
	rng := rand.New(rand.NewSource(31))
	for i := 0; i < 3; i++ {
		c.Start(f)
		time.Sleep(time.Duration(rng.Intn(300)) * time.Millisecond) // the scenario: killed at a random point of its catch-up
		c.Kill(f)
	}
	c.Start(f)
	c.Healed(r)
	c.WaitCaughtUp(LivenessBound)
	if l, err := c.readLiveLog(f); err != nil || l.Start == 0 {
		t.Errorf("node %d caught up without a snapshot (log start %d, %v)", f, l.Start, err)
	}
	finish(t, c)
}
