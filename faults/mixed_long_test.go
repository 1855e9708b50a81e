//go:build faults

package faults

import "testing"

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
}
