package faults

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kraftd/kraftd/internal/testenv"
)

// failStop injects rules into node id's file layer, waits for the node to
// exit non-zero with its fatal line, clears the rules and restarts it.
func (c *Cluster) failStop(t *testing.T, id int32, rules, want string) {
	t.Helper()
	c.SetDiskFaults(id, rules)
	if !c.WaitExit(id, LivenessBound) {
		t.Fatalf("node %d still runs %v after %q", id, LivenessBound, rules)
	}
	if err := c.ExitErr(id); err == nil {
		t.Fatalf("node %d exited 0 after %q: want a non-zero fail-stop", id, rules)
	}
	if b, _ := os.ReadFile(c.nodes[id].errLog); !bytes.Contains(b, []byte(want)) {
		t.Fatalf("node %d's log does not say %q after %q", id, want, rules)
	}
	c.SetDiskFaults(id, "")
	c.Start(id)
}

// TestDiskErrorsFailStop (row 10): EIO from fsync on the leader, then EIO
// from a write on a follower. Each stops its node at once (exit non-zero,
// never a retried fsync followed by an ack); the others go on, and the node
// rejoins on restart. The checker finds every acked batch on a majority.
func TestDiskErrorsFailStop(t *testing.T) {
	skipShort(t)
	c, s := start(t, Options{})
	r := c.BeginRound("eio fsync leader")
	r.MinEpoch = s.Epoch
	c.failStop(t, s.Node, "sync error EIO\n", "input/output error")
	took, ok := c.Healed(r)
	t.Logf("leader %d failed its fsync and stopped; a new leader commits %v later (ok %v)", s.Node, took, ok)

	s = c.WaitLeader(LivenessBound)
	follower := without(c.IDs, s.Node)[0]
	r = c.BeginRound("eio write follower")
	c.failStop(t, follower, "write error EIO\n", "input/output error")
	c.Healed(r)
	finish(t, c)
}

// mountTmpfs mounts a tmpfs of size at a new dir and unmounts it in
// cleanup (registered before the cluster's, so it runs after the processes
// are gone).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Skip(t, "mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		testenv.Skip(t, "mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		// The killed processes' files may take a moment to be released.
		var out []byte
		var err error
		for i := 0; i < 20; i++ {
			if out, err = exec.Command("umount", dir).CombinedOutput(); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		if lazy, lerr := exec.Command("umount", "-l", dir).CombinedOutput(); lerr != nil {
			t.Errorf("umount %s: %v: %s; lazy: %v: %s", dir, err, out, lerr, lazy)
		}
	})
	return dir
}

// fill writes a file that leaves about leave bytes free on dir's file
// system and returns its path.
func fill(t *testing.T, dir string, leave int64) string {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * st.Bsize
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for n := free - leave; n > 0; n -= int64(len(chunk)) {
		if _, err := f.Write(chunk[:min(int64(len(chunk)), n)]); err != nil {
			break // full already: fine
		}
	}
	return path
}

// TestDiskFull (row 9): each node's data dir is its own 8 MiB tmpfs. The
// leader's disk fills up on append: it stops (nothing acked past what a
// majority holds); a follower's disk fills: it stops acknowledging; a
// segment roll fails with ENOSPC (injected at the new segment's creation).
// Each time space returns and the node, restarted, rejoins.
func TestDiskFull(t *testing.T) {
	skipShort(t)
	mounts := map[int32]string{}
	for id := int32(1); id <= 3; id++ {
		mounts[id] = mountTmpfs(t, "8m")
	}
	c, s := start(t, Options{DataDir: func(id int32) string { return mounts[id] },
		Props: []string{"metadata.log.segment.min.bytes=1024", "metadata.log.segment.bytes=32768"}})

	cases := []struct {
		fault  string
		target func(leader int32) int32
	}{
		{"enospc append leader", func(l int32) int32 { return l }},
		{"enospc append follower", func(l int32) int32 { return without(c.IDs, l)[0] }},
		{"enospc roll leader", func(l int32) int32 { return l }},
	}
	for _, tc := range cases {
		target := tc.target(s.Node)
		r := c.BeginRound(tc.fault)
		var filler string
		if strings.Contains(tc.fault, "roll") {
			c.SetDiskFaults(target, "create error ENOSPC .log\n")
		} else {
			filler = fill(t, mounts[target], 16<<10)
		}
		if !c.WaitExit(target, LivenessBound) {
			t.Fatalf("%s: node %d still runs %v after its disk filled", tc.fault, target, LivenessBound)
		}
		t.Logf("%s: node %d stopped: %v", tc.fault, target, c.ExitErr(target))
		if filler != "" {
			os.Remove(filler)
		}
		c.SetDiskFaults(target, "")
		c.Start(target)
		took, ok := c.Healed(r)
		t.Logf("%s: space back, node %d restarted; commit %v later (ok %v)", tc.fault, target, took, ok)
		s = c.WaitLeader(LivenessBound)
	}
	finish(t, c)
}
