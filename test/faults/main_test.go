package faults

import (
	"os"
	"testing"
	"time"

	"github.com/kraftd/kraftd/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	RemoveBinary()
	os.Exit(code)
}

func skipShort(t *testing.T) {
	t.Helper()
	testenv.SkipShort(t, "real-process fault test")
}

// start runs a cluster and waits for its first committing leader (the
// first call also builds the binary).
func start(t *testing.T, o Options) (*Cluster, Sample) {
	t.Helper()
	c := NewCluster(t, o)
	c.StartAll()
	return c, c.WaitLeader(2 * time.Minute)
}

// waitNewLeader waits for a committing leader other than old, at a higher
// epoch than epoch.
func (c *Cluster) waitNewLeader(old, epoch int32, d time.Duration) (Sample, bool) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if s, ok := c.latest(); ok && s.Node != old && s.Epoch > epoch && s.HW > 0 {
			return s, true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return Sample{}, false
}

// finish waits for every running node to catch up, runs the checker and
// logs the history summary.
func finish(t *testing.T, c *Cluster) {
	t.Helper()
	c.WaitCaughtUp(LivenessBound)
	h := c.Check()
	if len(h.Acks) == 0 {
		t.Errorf("no acknowledged batch in the journals: the checker judged nothing")
	}
	t.Logf("history: %s", Summary(h))
}
