package replication

import (
	"testing"

	"github.com/kraftd/kraftd/controller/placement"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// cluster builds test images record by record.
type cluster struct {
	t     *testing.T
	b     *image.Builder
	off   int64
	level metadata.Level
}

func newCluster(t *testing.T, elr bool) *cluster {
	c := &cluster{t: t, b: image.NewBuilder(image.Empty(), image.Options{}), level: metadata.LatestProductionLevel}
	c.add(&metadata.FeatureLevelRecord{Name: "metadata.version", FeatureLevel: int16(c.level)})
	if elr {
		c.add(&metadata.FeatureLevelRecord{Name: "eligible.leader.replicas.version", FeatureLevel: 1})
	}
	return c
}

func (c *cluster) add(rec metadata.Record) {
	c.t.Helper()
	v, _ := c.level.RecordVersion(rec.APIKey())
	if err := c.b.Replay(c.off, 1, rec, v); err != nil {
		c.t.Fatalf("%T: %v", rec, err)
	}
	c.off++
}

// dir is broker id's only log directory.
func dir(id int32) uuid.UUID { return uuid.UUID{0xd, byte(id)} }

func (c *cluster) broker(id int32, epoch int64, fenced bool) {
	r := metadata.NewRegisterBrokerRecord()
	r.BrokerId, r.BrokerEpoch, r.IncarnationId, r.Fenced = id, epoch, uuid.UUID{1, byte(id)}, fenced
	r.EndPoints = []metadata.RegisterBrokerRecordBrokerEndpoint{{Name: "PLAINTEXT", Host: "h", Port: uint16(9000 + id)}}
	r.LogDirs = [][16]byte{dir(id)}
	c.add(r)
}

func (c *cluster) topic(name string, id uuid.UUID, parts ...*metadata.PartitionRecord) {
	c.add(&metadata.TopicRecord{Name: name, TopicId: id})
	for i, p := range parts {
		p.TopicId, p.PartitionId = id, int32(i)
		if p.RemovingReplicas == nil {
			p.RemovingReplicas, p.AddingReplicas = []int32{}, []int32{}
		}
		for _, r := range p.Replicas {
			p.Directories = append(p.Directories, dir(r))
		}
		c.add(p)
	}
}

func part(leader int32, epoch, partitionEpoch int32, replicas, isr []int32) *metadata.PartitionRecord {
	p := metadata.NewPartitionRecord()
	p.Leader, p.LeaderEpoch, p.PartitionEpoch, p.Replicas, p.Isr = leader, epoch, partitionEpoch, replicas, isr
	return p
}

func (c *cluster) op() Op {
	n := byte(0)
	return Op{
		Image:    c.b.Image(),
		Settings: DefaultSettings(),
		Random:   placement.NewJavaRandom(42),
		NewUUID: func() uuid.UUID {
			n++
			return uuid.UUID{0xa, 15: n}
		},
	}
}
