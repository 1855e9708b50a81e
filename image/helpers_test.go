package image

import (
	"maps"
	"slices"
	"testing"

	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// Record builders for tests: the fields a test names, the schema's defaults
// for the rest.

func tid(n byte) uuid.UUID { return uuid.UUID{15: n, 0: 0x40} }
func dir(n byte) uuid.UUID { return uuid.UUID{15: n, 0: 0x80} }

func feature(name string, level int16) *metadata.FeatureLevelRecord {
	return &metadata.FeatureLevelRecord{Name: name, FeatureLevel: level}
}

func mvRec(level metadata.Level) *metadata.FeatureLevelRecord {
	return feature("metadata.version", int16(level))
}

func registerBroker(brokerID int32, epoch int64, dirs ...uuid.UUID) *metadata.RegisterBrokerRecord {
	r := metadata.NewRegisterBrokerRecord()
	r.BrokerId, r.BrokerEpoch, r.IncarnationId = brokerID, epoch, uuid.UUID{1, byte(brokerID)}
	r.EndPoints = []metadata.RegisterBrokerRecordBrokerEndpoint{{Name: "PLAINTEXT", Host: "localhost", Port: uint16(9000 + brokerID)}}
	r.Features = []metadata.RegisterBrokerRecordBrokerFeature{{Name: "metadata.version", MinSupportedVersion: 7, MaxSupportedVersion: 33}}
	r.LogDirs = uuids(dirs)
	return r
}

func topic(name string, id uuid.UUID) *metadata.TopicRecord {
	return &metadata.TopicRecord{Name: name, TopicId: id}
}

func partition(topicID uuid.UUID, pid int32, replicas []int32, leader int32) *metadata.PartitionRecord {
	r := metadata.NewPartitionRecord()
	r.TopicId, r.PartitionId, r.Replicas, r.Isr = topicID, pid, replicas, slices.Clone(replicas)
	r.RemovingReplicas, r.AddingReplicas = []int32{}, []int32{}
	r.Leader, r.LeaderEpoch, r.PartitionEpoch = leader, 0, 0
	return r
}

func change(topicID uuid.UUID, pid int32, edit func(r *metadata.PartitionChangeRecord)) *metadata.PartitionChangeRecord {
	r := metadata.NewPartitionChangeRecord()
	r.TopicId, r.PartitionId = topicID, pid
	if edit != nil {
		edit(r)
	}
	return r
}

func regChange(brokerID int32, epoch int64, edit func(r *metadata.BrokerRegistrationChangeRecord)) *metadata.BrokerRegistrationChangeRecord {
	r := metadata.NewBrokerRegistrationChangeRecord()
	r.BrokerId, r.BrokerEpoch = brokerID, epoch
	if edit != nil {
		edit(r)
	}
	return r
}

func config(typ int8, res, name string, value *string) *metadata.ConfigRecord {
	return &metadata.ConfigRecord{ResourceType: typ, ResourceName: res, Name: name, Value: value}
}

// replayAll replays recs from offset 0 on, each at the highest version its
// type has, and fails the test on an error.
func replayAll(t testing.TB, b *Builder, recs ...metadata.Record) {
	t.Helper()
	for _, r := range recs {
		if err := replayOne(b, r); err != nil {
			t.Fatal(err)
		}
	}
}

func replayOne(b *Builder, r metadata.Record) error {
	_, hi := r.ValidVersions()
	return b.Replay(b.Provenance().Offset+1, 1, r, hi)
}

// build returns the image of recs replayed onto the empty image.
func build(t testing.TB, recs ...metadata.Record) *Image {
	t.Helper()
	b := NewBuilder(Empty(), Options{})
	replayAll(t, b, recs...)
	return b.Image()
}

// checkIndexes recomputes every index and count of im from its content and
// fails on a difference.
func checkIndexes(t testing.TB, im *Image) {
	t.Helper()
	type entry struct {
		broker int32
		tp     TopicPartition
	}
	want := map[string]map[entry]bool{"isr": {}, "led": {}, "elr": {}, "leaderless": {}, "imbalanced": {}}
	parts := 0
	for tp := range im.Topics() {
		for pid, p := range tp.Partitions() {
			parts++
			at := TopicPartition{tp.id, pid}
			for _, r := range p.ISR() {
				want["isr"][entry{r, at}] = true
				if r == p.Leader() {
					want["led"][entry{r, at}] = true
				}
			}
			for _, r := range p.ELR() {
				want["elr"][entry{r, at}] = true
			}
			if !p.HasLeader() {
				want["leaderless"][entry{0, at}] = true
			}
			if !p.HasPreferredLeader() {
				want["imbalanced"][entry{0, at}] = true
			}
		}
	}
	got := map[string]map[entry]bool{"isr": {}, "led": {}, "elr": {}, "leaderless": {}, "imbalanced": {}}
	brokers := map[int32]bool{}
	for k, inner := range im.st.isr.all() {
		brokers[k] = true
		if inner.len() == 0 {
			t.Fatalf("an empty ISR index entry for broker %d", k)
		}
	}
	for k, inner := range im.st.elr.all() {
		brokers[k] = true
		if inner.len() == 0 {
			t.Fatalf("an empty ELR index entry for broker %d", k)
		}
	}
	for b := range brokers {
		for tp := range im.PartitionsInISR(b) {
			got["isr"][entry{b, tp}] = true
		}
		for tp := range im.PartitionsLedBy(b) {
			got["led"][entry{b, tp}] = true
		}
		for tp := range im.PartitionsInELR(b) {
			got["elr"][entry{b, tp}] = true
		}
	}
	for tp := range im.LeaderlessPartitions() {
		got["leaderless"][entry{0, tp}] = true
	}
	for tp := range im.ImbalancedPartitions() {
		got["imbalanced"][entry{0, tp}] = true
	}
	for what := range want {
		if !maps.Equal(want[what], got[what]) {
			t.Fatalf("%s index: %d entries, the partitions say %d", what, len(got[what]), len(want[what]))
		}
	}
	c := im.Counts()
	fenced, shutting, brokerCount := 0, 0, 0
	dirs := 0
	for b := range im.Brokers() {
		brokerCount++
		if b.Fenced {
			fenced++
		}
		if b.InControlledShutdown {
			shutting++
		}
		for _, d := range b.LogDirs {
			if owner, ok := im.DirectoryOwner(d); !ok || owner != b.ID {
				t.Fatalf("directory %v of broker %d is indexed to %d", d, b.ID, owner)
			}
			dirs++
		}
	}
	if im.st.dirOwners.len() > dirs {
		t.Fatalf("the directory index holds %d entries for %d directories", im.st.dirOwners.len(), dirs)
	}
	wantCounts := Counts{
		Topics: len(slices.Collect(im.Topics())), Partitions: parts,
		OfflinePartitions: len(want["leaderless"]), ImbalancedPartitions: len(want["imbalanced"]),
		FencedBrokers: fenced, ActiveBrokers: brokerCount - fenced, ControlledShutdownBrokers: shutting,
		Controllers: len(slices.Collect(im.Controllers())),
	}
	if c != wantCounts {
		t.Fatalf("counts %+v, the content says %+v", c, wantCounts)
	}
}
