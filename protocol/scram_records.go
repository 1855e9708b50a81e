package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
)

// Metadata record types holding SCRAM credentials (Kafka's metadata schema,
// KIP-554/KIP-900). A controller verifies SCRAM logins against them.
const (
	UserScramCredentialRecordType       = 11
	RemoveUserScramCredentialRecordType = 22
)

// ErrBadMetadataRecord wraps every metadata record decoding failure.
var ErrBadMetadataRecord = errors.New("protocol: malformed metadata record")

// ParseMetadataRecord splits a metadata log record value in Kafka's
// ApiMessageAndVersion framing (frame version 1, then the record type and
// its version as unsigned varints) into its type, version and body.
func ParseMetadataRecord(value []byte) (typ, version int16, body []byte, err error) {
	var fields [3]uint64
	b := value
	for i := range fields {
		v, n := binary.Uvarint(b)
		if n <= 0 || v > 0x7fff {
			return 0, 0, nil, fmt.Errorf("%w: bad header varint %d", ErrBadMetadataRecord, i)
		}
		fields[i], b = v, b[n:]
	}
	if fields[0] != 1 {
		return 0, 0, nil, fmt.Errorf("%w: frame version %d (want 1)", ErrBadMetadataRecord, fields[0])
	}
	return int16(fields[1]), int16(fields[2]), b, nil
}

func appendMetadataHeader(dst []byte, typ int16) []byte {
	dst = binary.AppendUvarint(dst, 1)
	dst = binary.AppendUvarint(dst, uint64(typ))
	return binary.AppendUvarint(dst, 0)
}

// UserScramCredentialRecord is one user's credential for one mechanism
// (schema UserScramCredentialRecord v0; Mechanism 1 is SCRAM-SHA-256, 2
// SCRAM-SHA-512).
type UserScramCredentialRecord struct {
	Name       string
	Mechanism  int8
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

// AppendTo appends the framed v0 record value.
func (r UserScramCredentialRecord) AppendTo(dst []byte) []byte {
	dst = appendMetadataHeader(dst, UserScramCredentialRecordType)
	dst = kbin.AppendCompactString(dst, r.Name)
	dst = kbin.AppendInt8(dst, r.Mechanism)
	dst = kbin.AppendCompactBytes(dst, r.Salt)
	dst = kbin.AppendCompactBytes(dst, r.StoredKey)
	dst = kbin.AppendCompactBytes(dst, r.ServerKey)
	dst = kbin.AppendInt32(dst, r.Iterations)
	return append(dst, 0) // no tagged fields
}

// ReadFrom decodes a v0 body (the value after ParseMetadataRecord's header).
// Byte fields alias b.
func (r *UserScramCredentialRecord) ReadFrom(b []byte) error {
	rd := kbin.Reader{Src: b}
	r.Name = rd.CompactString()
	r.Mechanism = rd.Int8()
	r.Salt = rd.CompactBytes()
	r.StoredKey = rd.CompactBytes()
	r.ServerKey = rd.CompactBytes()
	r.Iterations = rd.Int32()
	return finishMetadata(&rd, "UserScramCredentialRecord")
}

// RemoveUserScramCredentialRecord deletes a user's credential for one
// mechanism (schema RemoveUserScramCredentialRecord v0).
type RemoveUserScramCredentialRecord struct {
	Name      string
	Mechanism int8
}

// AppendTo appends the framed v0 record value.
func (r RemoveUserScramCredentialRecord) AppendTo(dst []byte) []byte {
	dst = appendMetadataHeader(dst, RemoveUserScramCredentialRecordType)
	dst = kbin.AppendCompactString(dst, r.Name)
	dst = kbin.AppendInt8(dst, r.Mechanism)
	return append(dst, 0)
}

// ReadFrom decodes a v0 body.
func (r *RemoveUserScramCredentialRecord) ReadFrom(b []byte) error {
	rd := kbin.Reader{Src: b}
	r.Name = rd.CompactString()
	r.Mechanism = rd.Int8()
	return finishMetadata(&rd, "RemoveUserScramCredentialRecord")
}

func finishMetadata(rd *kbin.Reader, what string) error {
	skipReaderTags(rd)
	if err := rd.Complete(); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrBadMetadataRecord, what, err)
	}
	if len(rd.Src) != 0 {
		return fmt.Errorf("%w: %s: %d trailing bytes", ErrBadMetadataRecord, what, len(rd.Src))
	}
	return nil
}
