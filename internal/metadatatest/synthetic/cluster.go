// Package synthetic generates metadata logs of made-up clusters for tests
// and benchmarks. It is apart from metadatatest because it builds
// protocol/metadata records, whose own tests use metadatatest.
package synthetic

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/kraftd/kraftd/protocol/metadata"
)

// Cluster returns the records of a cluster of n partitions, the
// image benchmark's: 1000 brokers with a log directory each (registered and
// unfenced), topics of 10 to 100 partitions at replication factor 3 placed
// at random (directories assigned, leader the first replica), then a change
// to one partition in ten (an ISR shrink or a leader move), at 4.4-IV2 with
// ELR on. The same n always gives the same records.
func Cluster(n int) []metadata.Record {
	r := rand.New(rand.NewPCG(42, 42))
	const brokers = 1000
	recs := []metadata.Record{
		&metadata.FeatureLevelRecord{Name: "metadata.version", FeatureLevel: 33},
		&metadata.FeatureLevelRecord{Name: "eligible.leader.replicas.version", FeatureLevel: 1},
	}
	brokerDir := func(b int32) [16]byte { return [16]byte{0x80, byte(b >> 8), byte(b), 15: 1} }
	for b := range int32(brokers) {
		reg := metadata.NewRegisterBrokerRecord()
		reg.BrokerId, reg.BrokerEpoch, reg.IncarnationId = b, int64(b), [16]byte{1, byte(b >> 8), byte(b)}
		reg.EndPoints = []metadata.RegisterBrokerRecordBrokerEndpoint{{Name: "PLAINTEXT", Host: "localhost", Port: uint16(9000 + b)}}
		reg.Features = []metadata.RegisterBrokerRecordBrokerFeature{{Name: "metadata.version", MinSupportedVersion: 7, MaxSupportedVersion: 33}}
		reg.LogDirs = [][16]byte{brokerDir(b)}
		ch := metadata.NewBrokerRegistrationChangeRecord()
		ch.BrokerId, ch.BrokerEpoch, ch.Fenced = b, int64(b), -1
		recs = append(recs, reg, ch)
	}
	var changes []metadata.Record
	for made, t := 0, 0; made < n; t++ {
		id := [16]byte{0x40, byte(t >> 16), byte(t >> 8), byte(t), 15: 7}
		recs = append(recs, &metadata.TopicRecord{Name: fmt.Sprintf("topic-%d", t), TopicId: id})
		parts := min(10+r.IntN(91), n-made)
		for p := range int32(parts) {
			reps := make([]int32, 0, 3)
			for len(reps) < 3 {
				if b := int32(r.IntN(brokers)); !slices.Contains(reps, b) {
					reps = append(reps, b)
				}
			}
			pr := metadata.NewPartitionRecord()
			pr.TopicId, pr.PartitionId, pr.Replicas, pr.Isr = id, p, reps, slices.Clone(reps)
			pr.RemovingReplicas, pr.AddingReplicas = []int32{}, []int32{}
			pr.Leader, pr.LeaderEpoch, pr.PartitionEpoch = reps[0], 0, 0
			pr.Directories = [][16]byte{brokerDir(reps[0]), brokerDir(reps[1]), brokerDir(reps[2])}
			recs = append(recs, pr)
			if r.IntN(10) == 0 {
				c := metadata.NewPartitionChangeRecord()
				c.TopicId, c.PartitionId = id, p
				if r.IntN(2) == 0 {
					c.Isr = reps[:2]
				} else {
					c.Leader = reps[1]
				}
				changes = append(changes, c)
			}
		}
		made += parts
	}
	return append(recs, changes...)
}
