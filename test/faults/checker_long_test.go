//go:build faults

package faults

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kraftd/kraftd/internal/testenv"
)

// TestCheckerCatchesRealLoss runs the checker on real logs that lost
// acknowledged data: after a short run every node is killed and two of the
// three logs are cut to half their size. The checker must report lost acks
// (so it reads what the nodes wrote, not just what the tests hand it).
func TestCheckerCatchesRealLoss(t *testing.T) {
	skipShort(t)
	c, _ := start(t, Options{})
	// A short run: a thousand records committed (and acknowledged in the journal).
	testenv.WaitFor(t, LivenessBound, "a thousand records committed", func() bool { return c.maxHW() >= 1000 })
	for _, id := range c.IDs {
		c.Kill(id)
	}
	for _, id := range c.IDs[:2] {
		seg := filepath.Join(c.partitionDir(id), "00000000000000000000.log")
		st, err := os.Stat(seg)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(seg, st.Size()/2); err != nil {
			t.Fatal(err)
		}
	}
	h, err := c.History()
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for _, v := range Check(h, 0) {
		if v.Kind == LostAck {
			lost++
		}
	}
	if lost == 0 {
		t.Fatalf("no lost ack reported with two of three logs cut in half (%d acks)", len(h.Acks))
	}
	t.Logf("%d of %d acks reported lost", lost, len(h.Acks))
}
