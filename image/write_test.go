package image

import (
	"slices"
	"strings"
	"testing"

	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// snapshotValues writes im and encodes each record as a snapshot holds it.
func snapshotValues(t testing.TB, im *Image) [][]byte {
	t.Helper()
	var out [][]byte
	err := im.Write(func(rec metadata.Record, version int16) error {
		v, err := metadata.Append(nil, rec, version)
		out = append(out, v)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// loadValues replays snapshot record values onto the empty image, as
// loading a snapshot at offset does.
func loadValues(t testing.TB, values [][]byte, offset int64) *Image {
	t.Helper()
	b := NewBuilder(Empty(), Options{})
	for _, v := range values {
		rec, version, err := metadata.Decode(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Replay(offset, 3, rec, version); err != nil {
			t.Fatal(err)
		}
	}
	return b.Image()
}

// everything is one image with every kind of state at 4.4-IV2, ELR on.
func everything(t testing.TB) *Image {
	foo, bar := tid(1), tid(2)
	ctrl := &metadata.RegisterControllerRecord{ControllerId: 3000, IncarnationId: uuid.UUID{9},
		EndPoints: []metadata.RegisterControllerRecordControllerEndpoint{{Name: "CONTROLLER", Host: "h", Port: 9093}},
		Features:  []metadata.RegisterControllerRecordControllerFeature{{Name: "kraft.version", MaxSupportedVersion: 1}}}
	b2 := registerBroker(2, 20, dir(2))
	b2.Rack, b2.Fenced, b2.CordonedLogDirs = ptr("rack"), false, uuids([]uuid.UUID{dir(2)})
	withELR := partition(foo, 1, []int32{1, 2}, 1)
	withELR.Isr, withELR.EligibleLeaderReplicas, withELR.LastKnownElr = []int32{1}, []int32{2}, []int32{}
	withELR.Directories = uuids([]uuid.UUID{dir(1), dir(2)})
	moving := partition(bar, 0, []int32{2, 1}, 2)
	moving.AddingReplicas, moving.LeaderRecoveryState, moving.LeaderEpoch, moving.PartitionEpoch = []int32{1}, 1, 4, 9
	name := "carol"
	return build(t,
		mvRec(33), feature(elrFeature, 1), feature("group.version", 1),
		registerBroker(1, 10, dir(1)), b2, ctrl,
		topic("foo", foo), partition(foo, 0, []int32{1, 2}, 1), withELR, topic("bar", bar), moving,
		config(topicResource, "foo", "retention.ms", ptr("100")), config(brokerResource, "", "min.insync.replicas", ptr("1")),
		&metadata.ClientQuotaRecord{Key: "consumer_byte_rate", Value: 2.5, Entity: []metadata.ClientQuotaRecordEntityData{{EntityType: "user", EntityName: &name}, {EntityType: "client-id"}}},
		&metadata.ProducerIdsRecord{BrokerId: 1, BrokerEpoch: 10, NextProducerId: 5000},
		&metadata.AccessControlEntryRecord{Id: uuid.UUID{7}, ResourceType: 2, ResourceName: "foo", PatternType: 3, Principal: "User:a", Host: "*", Operation: 3, PermissionType: 3},
		&metadata.UserScramCredentialRecord{Name: "alice", Mechanism: 2, Salt: []byte("salt"), StoredKey: []byte("k"), ServerKey: []byte("s"), Iterations: 8192},
		&metadata.DelegationTokenRecord{TokenId: "tok", Owner: "User:a", Requester: "User:a", Renewers: []string{"User:b"}, IssueTimestamp: 1, MaxTimestamp: 3, ExpirationTimestamp: 2},
	)
}

// TestWriteRoundTrip: an image written as a snapshot and loaded again is the
// same image; metadata.version comes first at version 0, the sections come
// in Kafka's order, and each record at the version Kafka writes at 4.4-IV2.
func TestWriteRoundTrip(t *testing.T) {
	im := everything(t)
	var types []string
	err := im.Write(func(rec metadata.Record, version int16) error {
		if want, _ := metadata.Level(33).RecordVersion(rec.APIKey()); version != want && rec.APIKey() != metadata.FeatureLevelRecordAPIKey {
			t.Errorf("%s at v%d, Kafka writes v%d", rec.TypeName(), version, want)
		}
		types = append(types, strings.TrimSuffix(rec.TypeName(), "Record"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"FeatureLevel", "FeatureLevel", "FeatureLevel", "RegisterBroker", "RegisterBroker", "RegisterController",
		"Topic", "Partition", "Partition", "Topic", "Partition", "Config", "Config",
		"ClientQuota", "ProducerIds", "AccessControlEntry", "UserScramCredential", "DelegationToken",
	}
	if !slices.Equal(types, want) {
		t.Fatalf("records\n%v\nwant\n%v", types, want)
	}
	values := snapshotValues(t, im)
	if rec, v, _ := metadata.Decode(values[0]); v != 0 || rec.(*metadata.FeatureLevelRecord).Name != "metadata.version" {
		t.Fatalf("first record %v v%d", rec, v)
	}
	got := loadValues(t, values, 99)
	if d := Diff(im, got, 10); d != nil {
		t.Fatalf("loaded image differs:\n%s", strings.Join(d, "\n"))
	}
	checkIndexes(t, got)
	if p := got.Provenance(); p.Offset != 99 || p.Epoch != 3 {
		t.Fatalf("provenance %+v", p)
	}
	if again := snapshotValues(t, got); !slices.EqualFunc(again, values, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Fatal("the loaded image writes other bytes: the order within sections is not deterministic")
	}
}

// TestWriteLoss: what a metadata.version cannot carry fails the write, as
// Kafka's loss handler fails its snapshot, except where Kafka drops it
// silently (SCRAM before 3.5-IV2, ELRs while the feature is off).
func TestWriteLoss(t *testing.T) {
	count := func(im *Image, apiKey int16) int {
		n := 0
		if err := im.Write(func(rec metadata.Record, _ int16) error {
			if rec.APIKey() == apiKey {
				n++
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	fails := func(im *Image, what string) {
		t.Helper()
		if err := im.Write(func(metadata.Record, int16) error { return nil }); err == nil || !strings.Contains(err.Error(), what) {
			t.Fatalf("error %v, want one about %s", err, what)
		}
	}
	foo := tid(1)
	withDirs := partition(foo, 0, []int32{1}, 1)
	withDirs.Directories = uuids([]uuid.UUID{dir(1)})
	fails(build(t, registerBroker(1, 1)), "no metadata.version")
	fails(build(t, mvRec(16), registerBroker(1, 1, dir(1))), "online log directories")
	fails(build(t, mvRec(16), topic("foo", foo), withDirs), "directory assignments")
	fails(build(t, mvRec(14), &metadata.RegisterControllerRecord{ControllerId: 1}), "controller registrations")
	fails(build(t, mvRec(13), &metadata.DelegationTokenRecord{TokenId: "t"}), "delegation tokens")
	cordoned := registerBroker(1, 1, dir(1))
	cordoned.CordonedLogDirs = [][16]byte{}
	fails(build(t, mvRec(29), cordoned), "cordoned")
	if n := count(build(t, mvRec(10), &metadata.UserScramCredentialRecord{Name: "a", Mechanism: 1}), metadata.UserScramCredentialRecordAPIKey); n != 0 {
		t.Fatal("SCRAM written at 3.5-IV1")
	}
	elr := partition(foo, 0, []int32{1, 2}, 1)
	elr.Isr, elr.EligibleLeaderReplicas = []int32{1}, []int32{2}
	off := build(t, mvRec(33), topic("foo", foo), elr)
	values := snapshotValues(t, off)
	if p, _ := loadValues(t, values, 0).Partition(foo, 0); len(p.ELR()) != 0 {
		t.Fatal("ELR written while eligible.leader.replicas.version is 0")
	}
	// At 3.3-IV3 a broker registration is v1, MIGRATING directories are left
	// out, and the image loads back the same.
	old := build(t, mvRec(7), registerBroker(1, 1), topic("foo", foo), partition(foo, 0, []int32{1}, 1))
	if d := Diff(old, loadValues(t, snapshotValues(t, old), 0), 5); d != nil {
		t.Fatalf("3.3-IV3 round trip: %v", d)
	}
}
