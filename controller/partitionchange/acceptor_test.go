package partitionchange

import (
	"slices"
	"testing"

	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// cluster replays brokers 1 (active, directories a and b), 2 (fenced), 3
// (in controlled shutdown) and 4 (active, no directories), and a partition
// on 1, 2 and 4 with replica 1 in directory b.
func cluster(t *testing.T) (*image.Image, image.Partition) {
	t.Helper()
	b := image.NewBuilder(image.Empty(), image.Options{})
	offset := int64(0)
	replay := func(rec metadata.Record) {
		t.Helper()
		version, _ := metadata.LatestProductionLevel.RecordVersion(rec.APIKey())
		if rec.APIKey() == metadata.FeatureLevelRecordAPIKey {
			version = 0
		}
		if err := b.Replay(offset, 1, rec, version); err != nil {
			t.Fatal(err)
		}
		offset++
	}
	replay(&metadata.FeatureLevelRecord{Name: "metadata.version", FeatureLevel: int16(metadata.LatestProductionLevel)})
	for id := int32(1); id <= 4; id++ {
		r := metadata.NewRegisterBrokerRecord()
		r.BrokerId, r.BrokerEpoch, r.IncarnationId = id, 10, uuid.UUID{1, byte(id)}
		r.EndPoints = []metadata.RegisterBrokerRecordBrokerEndpoint{{Name: "PLAINTEXT", Host: "localhost", Port: uint16(9000 + id)}}
		r.Fenced, r.InControlledShutdown = id == 2, id == 3
		if id == 1 {
			r.LogDirs = [][16]byte{dirA, dirB}
		}
		replay(r)
	}
	replay(&metadata.TopicRecord{Name: "t", TopicId: topic})
	pr := metadata.NewPartitionRecord()
	pr.TopicId, pr.PartitionId, pr.Replicas, pr.Isr = topic, 0, []int32{1, 2, 4}, []int32{1, 2, 4}
	pr.RemovingReplicas, pr.AddingReplicas, pr.Leader = []int32{}, []int32{}, 1
	pr.Directories = [][16]byte{dirB, {}, {}}
	replay(pr)
	im := b.Image()
	p, ok := im.Partition(topic, 0)
	if !ok {
		t.Fatal("no partition")
	}
	return im, p
}

var (
	dirA = uuid.UUID{0: 0xa, 15: 0xa}
	dirB = uuid.UUID{0: 0xb, 15: 0xb}
)

func TestAcceptor(t *testing.T) {
	im, ip := cluster(t)
	for id, want := range map[int32]bool{1: true, 2: false, 3: false, 4: true, 5: false} {
		if IsActive(im, id) != want {
			t.Errorf("IsActive(%d) = %v", id, !want)
		}
	}
	p := FromImage(ip)
	if !slices.Equal(p.Replicas, []int32{1, 2, 4}) || p.Leader != 1 || p.Directories[0] != dirB {
		t.Fatalf("FromImage: %+v", p)
	}
	b1, _ := im.Broker(1)
	b4, _ := im.Broker(4)
	for _, c := range []struct {
		b    *image.Broker
		dir  uuid.UUID
		want bool
	}{
		{b1, dirA, true}, {b1, uuid.UUID{9}, false}, {b1, dirMigrating, true}, {b1, dirUnassigned, true},
		{b1, dirLost, false}, {b4, uuid.UUID{9}, true}, {b4, dirLost, false}, {nil, dirMigrating, false},
	} {
		if DirOnline(c.b, c.dir) != c.want {
			t.Errorf("DirOnline(%v, %v) = %v", c.b, c.dir, !c.want)
		}
	}
	active := func(b int32) bool { return IsActive(im, b) }
	accept := Acceptor(im, p, active)
	if !accept(1) || accept(2) || !accept(4) || accept(3) {
		t.Fatal("acceptor")
	}
	// Replica 1's directory offline: it may no longer lead.
	p.Directories[0] = uuid.UUID{9}
	if Acceptor(im, p, active)(1) {
		t.Fatal("replica in an offline directory accepted")
	}
	// With the acceptor, fencing broker 1 moves the leadership to 4.
	c := ctx()
	c.Acceptable = Acceptor(im, FromImage(ip), func(b int32) bool { return b != 1 && active(b) })
	check(t, build(t, FromImage(ip), c, func(b *Builder) { b.SetTargetISR([]int32{2, 4}) }),
		with(func(c *change) { c.Leader, c.Isr = 4, []int32{2, 4} }))
}
