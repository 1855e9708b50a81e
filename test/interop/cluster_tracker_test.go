package interop

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/controller/cluster"
	"github.com/kraftd/kraftd/image"
)

// TestHeartbeatTrackerOrderAgainstKafka drives Kafka 4.4.0's own
// BrokerHeartbeatTracker and controller/cluster's tracker through the same
// random contacts and expiries (hundreds of brokers, several epochs each,
// epochs beyond 32 bits, table resizes) and wants the same expired entry
// taken out each time: the order of Kafka's ConcurrentHashMap, which decides
// which broker the stale-broker task fences first when several expired.
func TestHeartbeatTrackerOrderAgainstKafka(t *testing.T) {
	run := javaProgram(t, "KafkaHeartbeatTracker")
	seed := corpusSeed(t)
	const timeout = 9 * time.Second
	for round := uint64(0); round < 4; round++ {
		rnd := rand.New(rand.NewPCG(seed, round))
		m := cluster.Activate(cluster.Settings{SessionTimeout: timeout}, image.Empty(), 0)
		brokers := 8 + rnd.IntN(400)
		epochs := make([][]int64, brokers)
		for i := range epochs {
			for range 1 + rnd.IntN(3) {
				e := rnd.Int64N(1 << 20)
				if rnd.IntN(4) == 0 {
					e = rnd.Int64()
				}
				epochs[i] = append(epochs[i], e)
			}
		}
		var cmds []string
		var want []string // kraftd's answers
		now := time.Duration(0)
		for range 6000 {
			now += time.Duration(rnd.Int64N(int64(50 * time.Millisecond)))
			if rnd.IntN(4) == 0 {
				// Mostly only the oldest entries have expired, so the map
				// grows to hundreds of entries through several resizes.
				at := now + time.Duration(rnd.Int64N(int64(timeout+timeout/2)))
				cmds = append(cmds, fmt.Sprintf("expire %d", at.Nanoseconds()))
				if id, epoch, ok := m.ExpireSession(at); ok {
					want = append(want, fmt.Sprintf("%d %d", id, epoch))
				} else {
					want = append(want, "none")
				}
				continue
			}
			id := int32(rnd.IntN(brokers))
			epoch := epochs[id][rnd.IntN(len(epochs[id]))]
			cmds = append(cmds, fmt.Sprintf("contact %d %d %d", id, epoch, now.Nanoseconds()))
			m.TrackHeartbeat(id, epoch, now)
		}
		cmd := run(fmt.Sprint(timeout.Nanoseconds()))
		cmd.Stdin = strings.NewReader(strings.Join(cmds, "\n") + "\n")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		got := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(got) != len(want) {
			t.Fatalf("round %d: %d answers from Kafka, %d from kraftd", round, len(got), len(want))
		}
		taken := 0
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("round %d (%d brokers), expiry %d: Kafka takes %s, kraftd %s", round, brokers, i, got[i], want[i])
			}
			if got[i] != "none" {
				taken++
			}
		}
		t.Logf("round %d: %d brokers, %d expiries, %d entries taken out, all in Kafka's order", round, brokers, len(got), taken)
	}
}
