package security

import (
	"testing"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/protocol/metadata"
)

func encode(t *testing.T, r metadata.Record) []byte {
	t.Helper()
	b, err := metadata.Append(nil, r, 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestScramStoreFromRecords(t *testing.T) {
	alice, err := NewScramCredential(MechScramSHA512, "alice-secret", nil, 4096)
	if err != nil {
		t.Fatal(err)
	}
	rec := metadata.UserScramCredentialRecord{Name: "alice", Mechanism: 2, Salt: alice.Salt, StoredKey: alice.StoredKey, ServerKey: alice.ServerKey, Iterations: 4096}
	other := []byte{1, 12, 0, 4, 'n', 'a', 'm', 0, 1, 0} // a FeatureLevelRecord
	unknown := []byte{1, 99, 0, 0}                       // a type newer than kraftd's codec
	remove := encode(t, &metadata.RemoveUserScramCredentialRecord{Name: "bob", Mechanism: 1})
	data := protocol.AppendBatch(nil, protocol.Batch{Records: []protocol.Record{{OffsetDelta: 0, Value: other}, {OffsetDelta: 1, Value: encode(t, &rec)}, {OffsetDelta: 2, Value: unknown}}})
	data = protocol.AppendBatch(data, protocol.Batch{BaseOffset: 3, Records: []protocol.Record{{Value: remove}}})
	s := NewScramStore()
	s.Put(MechScramSHA256, "bob", alice)
	n, err := s.ApplyBatches(data)
	if err != nil || n != 2 {
		t.Fatalf("applied %d: %v", n, err)
	}
	if c, ok := s.Get(MechScramSHA512, "alice"); !ok || string(c.StoredKey) != string(alice.StoredKey) {
		t.Error("alice not stored")
	}
	if _, ok := s.Get(MechScramSHA256, "bob"); ok {
		t.Error("bob not removed")
	}
	bad := rec
	bad.Mechanism = 9
	if _, err := s.ApplyMetadataRecord(encode(t, &bad)); err == nil {
		t.Error("unknown mechanism accepted")
	}
	if _, err := s.ApplyBatches(data[:len(data)-1]); err == nil {
		t.Error("truncated batch accepted")
	}
	if _, err := NewScramCredential(MechScramSHA256, "x", nil, 4095); err == nil {
		t.Error("4095 iterations accepted")
	}
	if _, err := NewScramCredential(MechPlain, "x", nil, 4096); err == nil {
		t.Error("PLAIN credential made")
	}
}
