package security

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"sync"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/xdg-go/scram"
)

// ScramCredential is what a SCRAM server stores for a user and mechanism,
// the fields of Kafka's UserScramCredentialRecord (metadata record type 11).
type ScramCredential struct {
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

// ScramMinIterations is Kafka's minimum for both SCRAM mechanisms: a
// credential below it fails authentication.
const ScramMinIterations = 4096

// ScramMechanismFromType maps UserScramCredentialRecord.Mechanism (Kafka's
// ScramMechanism type byte) to the mechanism name.
func ScramMechanismFromType(t int8) (string, bool) {
	switch t {
	case 1:
		return MechScramSHA256, true
	case 2:
		return MechScramSHA512, true
	}
	return "", false
}

func scramHash(mech string) (scram.HashGeneratorFcn, bool) {
	switch mech {
	case MechScramSHA256:
		return scram.HashGeneratorFcn(sha256.New), true
	case MechScramSHA512:
		return scram.HashGeneratorFcn(sha512.New), true
	}
	return nil, false
}

// NewScramCredential derives a credential from a password as Kafka's
// ScramFormatter (and kafka-storage format --add-scram) does; salt nil
// draws a random one.
func NewScramCredential(mech, password string, salt []byte, iterations int) (ScramCredential, error) {
	h, ok := scramHash(mech)
	if !ok {
		return ScramCredential{}, fmt.Errorf("security: %s is not a SCRAM mechanism", mech)
	}
	if iterations < ScramMinIterations {
		return ScramCredential{}, fmt.Errorf("security: %d iterations is less than the minimum %d for %s", iterations, ScramMinIterations, mech)
	}
	if salt == nil {
		salt = make([]byte, 32)
		if _, err := rand.Read(salt); err != nil {
			return ScramCredential{}, err
		}
	}
	// The user name takes no part in the derived keys.
	c, err := h.NewClient("", password, "")
	if err != nil {
		return ScramCredential{}, fmt.Errorf("security: SCRAM password: %w", err)
	}
	sc := c.GetStoredCredentials(scram.KeyFactors{Salt: string(salt), Iters: iterations})
	return ScramCredential{Salt: salt, StoredKey: sc.StoredKey, ServerKey: sc.ServerKey, Iterations: int32(iterations)}, nil
}

// ScramStore holds the SCRAM credentials a server checks clients against,
// by mechanism and user. Kafka 4.4 controllers take them from
// UserScramCredentialRecords in the metadata log (written at format time by
// kafka-storage format --add-scram, later by AlterUserScramCredentials);
// whoever reads those records calls Put and Remove. Safe for concurrent use.
type ScramStore struct {
	mu sync.RWMutex
	m  map[[2]string]ScramCredential
}

// NewScramStore returns an empty store.
func NewScramStore() *ScramStore { return &ScramStore{m: map[[2]string]ScramCredential{}} }

// Put adds or replaces user's credential for mech.
func (s *ScramStore) Put(mech, user string, c ScramCredential) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[[2]string{mech, user}] = c
}

// Remove deletes user's credential for mech.
func (s *ScramStore) Remove(mech, user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, [2]string{mech, user})
}

// Get returns user's credential for mech.
func (s *ScramStore) Get(mech, user string) (ScramCredential, bool) {
	if s == nil {
		return ScramCredential{}, false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.m[[2]string{mech, user}]
	return c, ok
}

// ApplyMetadataRecord applies one metadata log record value if it is a
// UserScramCredentialRecord or RemoveUserScramCredentialRecord, and
// reports whether it was one. Other record types are ignored unread (a
// type newer than kraftd's codec included).
func (s *ScramStore) ApplyMetadataRecord(value []byte) (bool, error) {
	key, _, _, err := metadata.Header(value)
	if err != nil {
		return false, err
	}
	if key != metadata.UserScramCredentialRecordAPIKey && key != metadata.RemoveUserScramCredentialRecordAPIKey {
		return false, nil
	}
	rec, _, err := metadata.Decode(value)
	if err != nil {
		return false, err
	}
	switch r := rec.(type) {
	case *metadata.UserScramCredentialRecord:
		mech, ok := ScramMechanismFromType(r.Mechanism)
		if !ok {
			return false, fmt.Errorf("security: UserScramCredentialRecord for %q: unknown mechanism type %d", r.Name, r.Mechanism)
		}
		s.Put(mech, r.Name, ScramCredential{Salt: r.Salt, StoredKey: r.StoredKey, ServerKey: r.ServerKey, Iterations: r.Iterations})
	case *metadata.RemoveUserScramCredentialRecord:
		if mech, ok := ScramMechanismFromType(r.Mechanism); ok {
			s.Remove(mech, r.Name)
		}
	}
	return true, nil
}

// ApplyBatches applies the SCRAM records found in a run of record batches
// (a snapshot file such as the bootstrap 0-0 checkpoint that kafka-storage
// format --add-scram writes, or log data), skipping control batches. It
// returns how many SCRAM records it applied.
func (s *ScramStore) ApplyBatches(data []byte) (int, error) {
	n := 0
	for len(data) > 0 {
		b, rest, err := protocol.DecodeBatch(data)
		if err != nil {
			return n, err
		}
		data = rest
		if b.Control {
			continue
		}
		for _, r := range b.Records {
			ok, err := s.ApplyMetadataRecord(r.Value)
			if err != nil {
				return n, fmt.Errorf("batch at offset %d: %w", b.BaseOffset, err)
			}
			if ok {
				n++
			}
		}
	}
	return n, nil
}

// ReplaceWith makes s hold exactly o's credentials, in one step, so logins
// never see a half-loaded store (a metadata snapshot replaces the state).
func (s *ScramStore) ReplaceWith(o *ScramStore) {
	o.mu.RLock()
	m := make(map[[2]string]ScramCredential, len(o.m))
	for k, v := range o.m {
		m[k] = v
	}
	o.mu.RUnlock()
	s.mu.Lock()
	s.m = m
	s.mu.Unlock()
}
