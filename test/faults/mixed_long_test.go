//go:build faults

package faults

import (
	"math/rand"
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

// TestMixedControllers (rows 1, 2, 3, 5, 13, 16, 18 on real controllers):
// kraftd `start` beside Kafka's kafka.Kafka controllers on
// __cluster_metadata, 2+1 and 1+2, under the mixed rounds and a power loss
// of every node; the committed prefix is judged on every log, and every
// log is read back with kafka-dump-log.
func TestMixedControllers(t *testing.T) {
	skipShort(t)
	for _, kafka := range [][]int32{{3}, {2, 3}} {
		t.Run(mixName(kafka), func(t *testing.T) {
			c, _ := start(t, Options{Kafka: kafka, Controllers: true})
			mixedRounds(t, c, 3)
			r := nemesisNamed(t, "power-loss-all").run(c, c.WaitLeader(LivenessBound), rand.New(rand.NewSource(4)), 0)
			t.Logf("round %d: %s: %s", r.N, r.Fault, recovery(r))
			c.WaitCaughtUp(LivenessBound)
			h := c.Check()
			t.Logf("history: %s", Summary(h))
			c.CompareWithKafkaDump()
		})
	}
}

func mixName(kafka []int32) string {
	return map[int]string{1: "2kraftd+1kafka", 2: "1kraftd+2kafka"}[len(kafka)]
}

// TestMixedNemesisLong (rows 1, 2, 3, 5, 9, 10, 11, 13, 16, 18, 32 on mixed
// quorums): the seeded nemesis on 2 kraftd + 1 Kafka and on 1 kraftd + 2,
// with TestRaftServer and with kafka.Kafka controllers,
// FAULT_MIXED_MINUTES each (default 2). Disk faults and power-loss cuts go
// to kraftd nodes only (Kafka's file layer is its own); every other fault
// strikes whichever node it picks, Kafka's included.
func TestMixedNemesisLong(t *testing.T) {
	minutes := envFloat(t, "FAULT_MIXED_MINUTES", 2)
	seed := int64(envFloat(t, "FAULT_SEED", float64(time.Now().UnixNano()%1_000_000_000)))
	for _, o := range []Options{{Kafka: []int32{3}}, {Kafka: []int32{2, 3}}, {Kafka: []int32{3}, Controllers: true}, {Kafka: []int32{2, 3}, Controllers: true}} {
		name := mixName(o.Kafka)
		if o.Controllers {
			name += "-controllers"
		}
		t.Run(name, func(t *testing.T) {
			t.Logf("seed %d; replay: make faults FAULT_SEED=%d FAULT_MIXED_MINUTES=%g", seed, seed, minutes)
			o.Throughput = 200
			c, _ := start(t, o)
			rep := c.RunNemesis(seed, time.Duration(minutes*float64(time.Minute)), 1)
			t.Logf("report: %v", rep)
			c.CompareWithKafkaDump()
		})
	}
}
