package controller_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kraftd/kraftd/controller"
	"github.com/kraftd/kraftd/controller/controllertest"
	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// TestSimCrashRestartImages drives three controller applications on real
// raft drivers through a random metadata workload with snapshots every few
// kilobytes and nodes crashing and restarting (the leader too). The harness
// checks after every step that each image a node publishes equals the first
// image published at that offset by any node: a node rebuilt from its
// snapshot and log equals what it and the others held in memory. Every
// seed runs the same way twice.
func TestSimCrashRestartImages(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			a := simRun(t, seed)
			b := simRun(t, seed)
			if a != b {
				t.Fatalf("two runs of seed %d differ:\n%s\n%s", seed, a, b)
			}
			t.Log(a)
		})
	}
}

func simRun(t *testing.T, seed uint64) string {
	c := controllertest.New(t, controller.Options{MaxBytesBetweenSnapshots: 4096})
	r := rand.New(rand.NewPCG(seed, 11))
	c.Do("add-nodes", "3")
	c.Do("stabilize")
	c.Do("tick", "1", "2s")
	c.Do("stabilize")
	lead := c.Leader()
	if lead < 0 {
		t.Fatal("no leader")
	}
	propose := func(recs ...metadata.Record) {
		c.Propose(lead, recs...)
		c.Do("stabilize")
	}
	propose(&metadata.FeatureLevelRecord{Name: features.MetadataVersionName, FeatureLevel: int16(metadata.LatestProductionLevel)})
	for b := int32(1); b <= 4; b++ {
		propose(&metadata.RegisterBrokerRecord{BrokerId: b, BrokerEpoch: int64(b), IncarnationId: uuid.UUID{byte(b)},
			EndPoints: []metadata.RegisterBrokerRecordBrokerEndpoint{{Name: "PLAINTEXT", Host: "localhost", Port: uint16(9090 + b)}},
			LogDirs:   [][16]byte{{0xd, byte(b)}}})
	}
	down := int32(-1)
	topics := 0
	for step := range 400 {
		im := c.App(lead).Image()
		switch k := r.IntN(100); {
		case k < 25 || topics == 0:
			topics++
			id := uuid.UUID{0x70, byte(topics >> 8), byte(topics)}
			recs := []metadata.Record{&metadata.TopicRecord{Name: fmt.Sprintf("t%d", topics), TopicId: id}}
			for p := range int32(1 + r.IntN(8)) {
				reps := r.Perm(4)[:3]
				rs := []int32{int32(reps[0] + 1), int32(reps[1] + 1), int32(reps[2] + 1)}
				recs = append(recs, &metadata.PartitionRecord{PartitionId: p, TopicId: id, Replicas: rs, Isr: rs,
					Leader: rs[0], LeaderEpoch: 0, PartitionEpoch: 0, Directories: [][16]byte{{0xd, byte(rs[0])}, {0xd, byte(rs[1])}, {0xd, byte(rs[2])}}})
			}
			propose(recs...)
		case k < 70:
			var recs []metadata.Record
			for tp := range im.Topics() {
				for pid, p := range tp.Partitions() {
					if r.IntN(4) == 0 {
						isr := p.ISR()
						newLeader := p.Replicas()[r.IntN(len(p.Replicas()))]
						isr2 := isr
						if r.IntN(2) == 0 && len(isr) > 1 {
							isr2 = slices.DeleteFunc(slices.Clone(isr), func(x int32) bool { return x != newLeader && r.IntN(2) == 0 })
						}
						if !slices.Contains(isr2, newLeader) {
							isr2 = append(slices.Clone(isr2), newLeader)
						}
						recs = append(recs, &metadata.PartitionChangeRecord{PartitionId: pid, TopicId: tp.ID(), Leader: newLeader, Isr: isr2})
					}
				}
			}
			if len(recs) > 0 {
				propose(recs...)
			}
		case k < 78:
			for tp := range im.Topics() {
				propose(&metadata.RemoveTopicRecord{TopicId: tp.ID()})
				break
			}
		case k < 86:
			b := int32(1 + r.IntN(4))
			if br, ok := im.Broker(b); ok {
				if br.Fenced {
					propose(&metadata.UnfenceBrokerRecord{Id: b, Epoch: br.Epoch})
				} else {
					propose(&metadata.FenceBrokerRecord{Id: b, Epoch: br.Epoch})
				}
			}
		case k < 92:
			v := fmt.Sprint(r.IntN(1000))
			propose(&metadata.ConfigRecord{ResourceType: 2, ResourceName: "t1", Name: "retention.ms", Value: &v})
		case down < 0:
			down = int32(1 + r.IntN(3))
			c.Do("crash", fmt.Sprint(down))
			c.Do("stabilize")
			if down == lead {
				// The two others elect one of them.
				for i := 0; lead < 0 || lead == down; i, lead = i+1, c.Leader() {
					if i == 300 {
						t.Fatalf("step %d: no leader 30 s after leader %d crashed:\n%s", step, down, c.Do("status"))
					}
					c.Do("advance", "100ms")
					c.Do("stabilize")
				}
			}
		default:
			c.Do("restart", fmt.Sprint(down))
			c.Do("stabilize")
			down = -1
		}
		if step%50 == 49 {
			// Time passes: fetches, elections if any.
			c.Do("advance", "500ms")
			c.Do("stabilize")
			if lead = c.Leader(); lead < 0 {
				for lead < 0 {
					c.Do("advance", "100ms")
					c.Do("stabilize")
					lead = c.Leader()
				}
			}
		}
	}
	if down >= 0 {
		c.Do("restart", fmt.Sprint(down))
	}
	c.Do("advance", "500ms")
	c.Do("stabilize")
	// All three end at the same image.
	var last *image.Image
	for _, id := range []int32{1, 2, 3} {
		im := c.App(id).Image()
		if last != nil && last.Provenance() != im.Provenance() {
			t.Fatalf("node %d at %+v, another at %+v", id, im.Provenance(), last.Provenance())
		}
		if last != nil {
			if d := image.Diff(last, im, 5); d != nil {
				t.Fatalf("final images differ: %v", d)
			}
		}
		last = im
	}
	total := 0
	for _, n := range c.Snapshots {
		total += n
	}
	if total == 0 || c.Compared == 0 {
		t.Fatalf("snapshots %v, images compared %d: the run checked nothing", c.Snapshots, c.Compared)
	}
	loads := 0
	for _, id := range []int32{1, 2, 3} {
		v, _ := c.App(id).ControllerView()
		loads += int(v.SnapshotLoads)
	}
	cnt := last.Counts()
	return fmt.Sprintf("at %+v: %d snapshots %v, %d loaded by the last incarnations, %d comparisons, %d topics %d partitions",
		last.Provenance(), total, c.Snapshots, loads, c.Compared, cnt.Topics, cnt.Partitions)
}
