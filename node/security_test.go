package node

import (
	"bytes"
	"testing"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/security"
)

type bytesSnapshot struct {
	*bytes.Reader
	id raft.OffsetAndEpoch
}

func (s bytesSnapshot) ID() raft.OffsetAndEpoch { return s.id }
func (s bytesSnapshot) Close() error            { return nil }

// The SCRAM store follows committed records, and a loaded snapshot replaces it.
func TestScramListener(t *testing.T) {
	cred := func(pw string) security.ScramCredential {
		c, err := security.NewScramCredential(security.MechScramSHA512, pw, nil, 4096)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	record := func(name string, c security.ScramCredential) []byte {
		r := &metadata.UserScramCredentialRecord{Name: name, Mechanism: 2, Salt: c.Salt, StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: 4096}
		b, err := metadata.Append(nil, r, 0)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	store := security.NewScramStore()
	l := scramListener{store: store, lg: zap.NewNop()}
	alice, bob := cred("a"), cred("b")
	l.HandleCommit([]raft.CommittedBatch{
		{Control: true, Records: [][]byte{{0, 0, 0, 0}}},
		{Records: [][]byte{{0xff}, record("alice", alice)}}, // an unreadable record is skipped
	})
	if _, ok := store.Get(security.MechScramSHA512, "alice"); !ok {
		t.Fatal("committed credential not applied")
	}
	snap := protocol.AppendBatch(nil, protocol.Batch{Records: []protocol.Record{{Value: record("bob", bob)}}})
	l.HandleLoadSnapshot(raft.OffsetAndEpoch{Offset: 10, Epoch: 1}, bytesSnapshot{bytes.NewReader(snap), raft.OffsetAndEpoch{Offset: 10, Epoch: 1}})
	if _, ok := store.Get(security.MechScramSHA512, "alice"); ok {
		t.Error("a snapshot without alice left her credential")
	}
	if _, ok := store.Get(security.MechScramSHA512, "bob"); !ok {
		t.Error("snapshot credential not loaded")
	}
	// A snapshot that cannot be read keeps what is known.
	l.HandleLoadSnapshot(raft.OffsetAndEpoch{Offset: 20, Epoch: 1}, bytesSnapshot{bytes.NewReader(snap[:len(snap)-3]), raft.OffsetAndEpoch{Offset: 20, Epoch: 1}})
	if _, ok := store.Get(security.MechScramSHA512, "bob"); !ok {
		t.Error("an unreadable snapshot dropped the credentials")
	}
}
