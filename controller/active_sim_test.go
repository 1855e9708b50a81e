package controller_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller"
	"github.com/kraftd/kraftd/controller/cluster"
	"github.com/kraftd/kraftd/controller/controllertest"
	"github.com/kraftd/kraftd/image"
)

// TestSimActiveFailover runs active controllers on simulated raft with
// four simulated brokers registering and heartbeating through the real
// handlers, time passing (NoOps, stale-broker fencing) and nodes, the
// active one too, crashing and restarting. The harness compares every
// image published at an offset with the first one published there, so a
// new active controller's records follow the previous one's consistently on
// every node; each seed runs twice with the same outcome.
func TestSimActiveFailover(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			a, b := activeSim(t, seed), activeSim(t, seed)
			if a != b {
				t.Fatalf("two runs of seed %d differ:\n%s\n%s", seed, a, b)
			}
			t.Log(a)
		})
	}
}

func activeSim(t *testing.T, seed uint64) string {
	c := controllertest.New(t, controller.Options{MaxBytesBetweenSnapshots: 8192, Active: &controller.ActiveOptions{
		Cluster:         cluster.Settings{ClusterID: "test-cluster", SessionTimeout: 9 * time.Second},
		MaxIdleInterval: controller.DefaultMaxIdleInterval,
	}})
	r := rand.New(rand.NewPCG(seed, 5))
	c.Do("add-nodes", "3")
	c.Do("stabilize")
	c.Do("tick", "1", "2s")
	for range 3 {
		c.Do("stabilize")
	}
	epochs := map[int32]int64{}
	answered, notController := 0, 0
	down := int32(-1)
	leader := func() int32 {
		for i := 0; ; i++ {
			if l := c.Leader(); l >= 0 && c.App(l) != nil && c.App(l).Active() {
				return l
			}
			if i == 300 {
				t.Fatalf("no active controller after 30 s:\n%s", c.Do("status"))
			}
			c.Do("advance", "100ms")
			c.Do("stabilize")
		}
	}
	failovers, prev := 0, int32(-1)
	for range 150 {
		lead := leader()
		if prev >= 0 && lead != prev {
			failovers++
		}
		prev = lead
		b := int32(1 + r.IntN(4))
		switch k := r.IntN(100); {
		case k < 30:
			var a answer
			c.Serve(lead, request(registration(b), &a))
			c.Do("stabilize")
			c.Do("stabilize")
			if resp, ok := a.resp.(*kmsg.BrokerRegistrationResponse); ok && resp.ErrorCode == 0 {
				epochs[b] = resp.BrokerEpoch
			}
			count(a, &answered, &notController)
		case k < 70:
			hb := kmsg.NewPtrBrokerHeartbeatRequest()
			hb.Version = 1
			hb.BrokerID, hb.BrokerEpoch = b, epochs[b]
			hb.CurrentMetadataOffset = c.App(lead).Image().Provenance().Offset
			hb.WantShutdown = r.IntN(20) == 0
			var a answer
			req := request(hb, &a)
			req.Arrived = c.Env.Now(lead)
			c.Serve(lead, req)
			c.Do("stabilize")
			c.Do("stabilize")
			count(a, &answered, &notController)
		case k < 85:
			c.Do("advance", fmt.Sprintf("%dms", 200+r.IntN(2000)))
			c.Do("stabilize")
		case down < 0:
			down = int32(1 + r.IntN(3))
			c.Do("crash", fmt.Sprint(down))
			c.Do("stabilize")
		default:
			c.Do("restart", fmt.Sprint(down))
			c.Do("stabilize")
			down = -1
		}
	}
	if down >= 0 {
		c.Do("restart", fmt.Sprint(down))
	}
	for range 5 {
		c.Do("advance", "500ms")
		c.Do("stabilize")
	}
	var last *image.Image
	for id := int32(1); id <= 3; id++ {
		im := c.App(id).Image()
		if last != nil && im.Provenance().Offset == last.Provenance().Offset {
			if d := image.Diff(last, im, 5); d != nil {
				t.Fatalf("nodes end at the same offset with different images: %v", d)
			}
		}
		last = im
	}
	fenced := 0
	for br := range last.Brokers() {
		if br.Fenced {
			fenced++
		}
	}
	if failovers == 0 {
		t.Fatal("no failover happened")
	}
	return fmt.Sprintf("offset=%d brokers=%d fenced=%d answered=%d not_controller=%d failovers=%d compared=%d",
		last.Provenance().Offset, len(epochs), fenced, answered, notController, failovers, c.Compared)
}

func count(a answer, answered, notController *int) {
	switch {
	case a.n == 0:
	case a.code == 41:
		*notController++
	default:
		*answered++
	}
}
