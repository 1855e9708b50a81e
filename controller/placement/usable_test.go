package placement

import (
	"reflect"
	"testing"

	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// Brokers 1 (rack a), 2 (in controlled shutdown), 3 (its only directory
// cordoned), 16 and 17 (fenced): 2 and 3 are not usable, and the others come
// in the heartbeat map's order, 16 first.
func TestUsableBrokers(t *testing.T) {
	b := image.NewBuilder(image.Empty(), image.Options{})
	level := metadata.LatestProductionLevel
	if err := b.Replay(0, 1, &metadata.FeatureLevelRecord{Name: "metadata.version", FeatureLevel: int16(level)}, 0); err != nil {
		t.Fatal(err)
	}
	version, _ := level.RecordVersion(metadata.RegisterBrokerRecordAPIKey)
	for i, id := range []int32{17, 1, 2, 3, 16} {
		r := metadata.NewRegisterBrokerRecord()
		r.BrokerId, r.BrokerEpoch, r.IncarnationId = id, 5, uuid.UUID{1, byte(id)}
		r.EndPoints = []metadata.RegisterBrokerRecordBrokerEndpoint{{Name: "PLAINTEXT", Host: "h", Port: uint16(9000 + id)}}
		r.Fenced, r.InControlledShutdown = id == 17, id == 2
		r.LogDirs = [][16]byte{{0: 0xd, 15: byte(id)}}
		r.Rack = nil // no rack
		if id == 1 {
			r.Rack = str("a")
		}
		if id == 3 {
			r.CordonedLogDirs = r.LogDirs
		}
		if err := b.Replay(int64(1+i), 1, r, version); err != nil {
			t.Fatal(err)
		}
	}
	im := b.Image()
	want := []Broker{{ID: 16}, {ID: 1, Rack: str("a")}, {ID: 17, Fenced: true}}
	if got := UsableBrokers(im, nil); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	// The caller's view of shutting down replaces the registrations'.
	got := UsableBrokers(im, func(b *image.Broker) bool { return b.ID == 16 })
	if want := []Broker{{ID: 1, Rack: str("a")}, {ID: 17, Fenced: true}, {ID: 2}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if d := DefaultDirs(im, []int32{1, 99}); d[0] != (uuid.UUID{0: 0xd, 15: 1}) || d[1] != DirUnassigned {
		t.Fatalf("DefaultDirs: %v", d)
	}
}
