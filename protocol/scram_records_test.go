package protocol

import (
	"bytes"
	"testing"
)

func TestScramRecordsRoundTrip(t *testing.T) {
	u := UserScramCredentialRecord{Name: "alice", Mechanism: 2, Salt: []byte("salt"), StoredKey: []byte("stored"), ServerKey: []byte("server"), Iterations: 4096}
	typ, v, body, err := ParseMetadataRecord(u.AppendTo(nil))
	if err != nil || typ != UserScramCredentialRecordType || v != 0 {
		t.Fatalf("%d %d %v", typ, v, err)
	}
	var got UserScramCredentialRecord
	if err := got.ReadFrom(body); err != nil {
		t.Fatal(err)
	}
	if got.Name != u.Name || got.Mechanism != 2 || !bytes.Equal(got.Salt, u.Salt) || !bytes.Equal(got.StoredKey, u.StoredKey) || !bytes.Equal(got.ServerKey, u.ServerKey) || got.Iterations != 4096 {
		t.Errorf("%+v", got)
	}
	rm := RemoveUserScramCredentialRecord{Name: "alice", Mechanism: 1}
	typ, _, body, err = ParseMetadataRecord(rm.AppendTo(nil))
	var gotRm RemoveUserScramCredentialRecord
	if err != nil || typ != RemoveUserScramCredentialRecordType || gotRm.ReadFrom(body) != nil || gotRm != rm {
		t.Fatalf("%d %v %+v", typ, err, gotRm)
	}
	// Every truncation fails cleanly.
	full := u.AppendTo(nil)
	for i := range full {
		if _, _, body, err := ParseMetadataRecord(full[:i]); err == nil {
			if (&UserScramCredentialRecord{}).ReadFrom(body) == nil {
				t.Errorf("truncated at %d decoded", i)
			}
		}
	}
	if _, _, _, err := ParseMetadataRecord([]byte{2, 11, 0}); err == nil {
		t.Error("frame version 2 accepted")
	}
}
