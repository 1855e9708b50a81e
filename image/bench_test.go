package image

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/uuid"
)

// syntheticCluster returns the records of a cluster of n partitions: 1000
// brokers with a log directory each, topics of 10 to 100 partitions at
// replication factor 3 placed at random (directories assigned, leader the
// first replica), then a change to one partition in ten (an ISR shrink or a
// leader move), at 4.4-IV2 with ELR on.
func syntheticCluster(n int) []metadata.Record {
	r := rand.New(rand.NewPCG(42, 42))
	const brokers = 1000
	recs := []metadata.Record{mvRec(33), feature(elrFeature, 1)}
	brokerDir := func(b int32) uuid.UUID { return uuid.UUID{0x80, byte(b >> 8), byte(b), 15: 1} }
	for b := range int32(brokers) {
		recs = append(recs, registerBroker(b, int64(b), brokerDir(b)), regChange(b, int64(b), func(r *metadata.BrokerRegistrationChangeRecord) { r.Fenced = -1 }))
	}
	var changes []metadata.Record
	for made, t := 0, 0; made < n; t++ {
		id := uuid.UUID{0x40, byte(t >> 16), byte(t >> 8), byte(t), 15: 7}
		recs = append(recs, topic(fmt.Sprintf("topic-%d", t), id))
		parts := min(10+r.IntN(91), n-made)
		for p := range int32(parts) {
			reps := make([]int32, 0, 3)
			for len(reps) < 3 {
				if b := int32(r.IntN(brokers)); !slices.Contains(reps, b) {
					reps = append(reps, b)
				}
			}
			pr := partition(id, p, reps, reps[0])
			pr.Directories = uuids([]uuid.UUID{brokerDir(reps[0]), brokerDir(reps[1]), brokerDir(reps[2])})
			recs = append(recs, pr)
			if r.IntN(10) == 0 {
				changes = append(changes, change(id, p, func(c *metadata.PartitionChangeRecord) {
					if r.IntN(2) == 0 {
						c.Isr = reps[:2]
					} else {
						c.Leader = reps[1]
					}
				}))
			}
		}
		made += parts
	}
	return append(recs, changes...)
}

func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkImage replays a synthetic cluster from scratch and reports the
// replay rate and the image's heap bytes per partition (live heap after GC,
// indexes included).
//
//	go test -run '^$' -bench Image -benchmem ./image/
func BenchmarkImage(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("partitions=%d", n), func(b *testing.B) {
			recs := syntheticCluster(n)
			base := heapInUse()
			var im *Image
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				im = nil
				bl := NewBuilder(Empty(), Options{})
				for i, rec := range recs {
					if err := bl.Replay(int64(i), 1, rec, 0); err != nil {
						b.Fatal(err)
					}
				}
				im = bl.Image()
			}
			elapsed := time.Since(start)
			b.StopTimer()
			if got := im.Counts().Partitions; got != n {
				b.Fatalf("%d partitions", got)
			}
			b.ReportMetric(float64(heapInUse()-base)/float64(n), "B/partition")
			b.ReportMetric(float64(len(recs)*b.N)/elapsed.Seconds(), "records/s")
			runtime.KeepAlive(recs)
			runtime.KeepAlive(im)
		})
	}
}

// BenchmarkImageLoad is the standby's path: record values decoded and
// replayed through the Loader, in batches of 1000.
func BenchmarkImageLoad(b *testing.B) {
	recs := syntheticCluster(100_000)
	var batches []raft.CommittedBatch
	for i := 0; i < len(recs); i += 1000 {
		batches = append(batches, batch(b, int64(i), recs[i:min(i+1000, len(recs))]...))
	}
	b.ResetTimer()
	for range b.N {
		l := NewLoader(Options{})
		for _, cb := range batches {
			if err := l.HandleCommit(cb); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(recs)*b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkImageChange is the copy-on-write price: one partition change on
// a million-partition image, then the next image handed out.
func BenchmarkImageChange(b *testing.B) {
	recs := syntheticCluster(1_000_000)
	bl := NewBuilder(Empty(), Options{})
	replayAll(b, bl, recs...)
	im := bl.Image()
	var targets []*metadata.PartitionChangeRecord
	for t := range im.Topics() {
		targets = append(targets, change(t.ID(), 0, func(c *metadata.PartitionChangeRecord) { c.Leader = -1 }))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		nb := NewBuilder(im, Options{})
		if err := nb.Replay(int64(len(recs)+i), 2, targets[i%len(targets)], 2); err != nil {
			b.Fatal(err)
		}
		_ = nb.Image()
	}
}
