package node

import (
	"slices"
	"testing"
)

// Peers that list metadata.version are controllers; a change, and only a change, wakes the
// loop; bootstrap servers (negative ids) are not counted; a node that comes back as other
// software is re-learned.
func TestControllersLearnedFromConnections(t *testing.T) {
	c := newControllers()
	kafka := []string{"group.version", "kraft.version", metadataVersionFeature}
	kraftd := []string{"kraft.version"}
	woken := func() bool {
		select {
		case <-c.changes():
			return true
		default:
			return false
		}
	}
	c.connected(1, kafka)
	c.connected(3, kraftd)
	c.connected(-2, kafka)
	if !woken() || !slices.Equal(c.ids(), []int32{1}) {
		t.Fatalf("controllers %v, want [1] and a wake-up", c.ids())
	}
	c.connected(1, kafka) // a reconnect with the same answer
	c.connected(3, kraftd)
	if woken() {
		t.Fatal("woken without a change")
	}
	c.connected(2, kafka)
	c.connected(1, kraftd) // node 1 restarted as kraftd
	if !woken() || !slices.Equal(c.ids(), []int32{2}) {
		t.Fatalf("controllers %v, want [2] and a wake-up", c.ids())
	}
	var none *controllers
	if none.changes() != nil {
		t.Fatal("a node without deferral has a wake-up channel")
	}
}
