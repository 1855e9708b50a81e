//go:build faults

package faults

import (
	"testing"
	"time"
)

// TestMixedOneKraftdTwoKafka: the mixed rounds on one kraftd node and two
// Kafka 4.4.0 TestRaftServers (acks exist only for the spells in which
// kraftd led; the logs are judged either way).
func TestMixedOneKraftdTwoKafka(t *testing.T) {
	skipShort(t)
	c, _ := start(t, Options{Kafka: []int32{2, 3}, Throughput: 200})
	mixedRounds(t, c, 5)
	c.WaitCaughtUp(LivenessBound)
	h := c.Check()
	t.Logf("history: %s", Summary(h))
	c.CompareWithKafkaDump()
}

// TestMixedNemesisLong (rows 1, 9, 10, 11, 13, 16, 18, 32 on mixed
// quorums): the seeded nemesis on 2 kraftd + 1 Kafka TestRaftServer and
// on 1 kraftd + 2, FAULT_MIXED_MINUTES each (default 2). Disk faults go to
// kraftd nodes only (Kafka's file layer is its own); every other fault
// strikes whichever node it picks, Kafka's included.
func TestMixedNemesisLong(t *testing.T) {
	minutes := envFloat(t, "FAULT_MIXED_MINUTES", 2)
	seed := int64(envFloat(t, "FAULT_SEED", float64(time.Now().UnixNano()%1_000_000_000)))
	for _, kafka := range [][]int32{{3}, {2, 3}} {
		t.Run(map[int]string{1: "2kraftd+1kafka", 2: "1kraftd+2kafka"}[len(kafka)], func(t *testing.T) {
			t.Logf("seed %d; replay: make faults FAULT_SEED=%d FAULT_MIXED_MINUTES=%g", seed, seed, minutes)
			c, _ := start(t, Options{Kafka: kafka, Throughput: 200})
			rep := c.RunNemesis(seed, time.Duration(minutes*float64(time.Minute)), 1)
			t.Logf("report: %v", rep)
			c.CompareWithKafkaDump()
		})
	}
}
