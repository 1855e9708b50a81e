package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Control record types (key field "type"). Kafka's JVM reader treats an unknown type as
// fatal, so kraftd only writes these.
const (
	ControlLeaderChange   int16 = 2
	ControlSnapshotHeader int16 = 3
	ControlSnapshotFooter int16 = 4
	ControlKRaftVersion   int16 = 5
	ControlKRaftVoters    int16 = 6
)

// ControlKeySize is the size of a control record key: int16 version 0, int16 type.
const ControlKeySize = 4

// ErrBadControlRecord is wrapped when a control record key or value cannot be decoded.
var ErrBadControlRecord = errors.New("protocol: bad control record")

// ControlKey returns the 4-byte key of a control record of the given type.
func ControlKey(typ int16) []byte {
	k := make([]byte, ControlKeySize)
	binary.BigEndian.PutUint16(k[2:], uint16(typ))
	return k
}

// ControlType decodes a control record key. As in Kafka, a negative key version or a key
// shorter than 4 bytes is invalid; newer key versions are read as version 0.
func ControlType(key []byte) (int16, error) {
	if len(key) < ControlKeySize {
		return 0, fmt.Errorf("%w: key of %d bytes, need %d", ErrBadControlRecord, len(key), ControlKeySize)
	}
	if v := int16(binary.BigEndian.Uint16(key)); v < 0 {
		return 0, fmt.Errorf("%w: key version %d", ErrBadControlRecord, v)
	}
	return int16(binary.BigEndian.Uint16(key[2:])), nil
}

// ReadControlRecord returns the type and value of a control record.
func ReadControlRecord(r Record) (int16, []byte, error) {
	typ, err := ControlType(r.Key)
	if err != nil {
		return 0, nil, err
	}
	if r.Value == nil {
		return 0, nil, fmt.Errorf("%w: type %d has a null value", ErrBadControlRecord, typ)
	}
	return typ, r.Value, nil
}

// ControlBatch builds a control batch holding one control record (key {0, typ}, value).
func ControlBatch(baseOffset int64, epoch int32, timestamp int64, typ int16, value []byte) Batch {
	return Batch{
		BaseOffset:           baseOffset,
		PartitionLeaderEpoch: epoch,
		Control:              true,
		BaseTimestamp:        timestamp,
		MaxTimestamp:         timestamp,
		Records:              []Record{{Key: ControlKey(typ), Value: value}},
	}
}

// AppendControlBatch appends an encoded control batch holding one control record.
func AppendControlBatch(dst []byte, baseOffset int64, epoch int32, timestamp int64, typ int16, value []byte) []byte {
	return AppendBatch(dst, ControlBatch(baseOffset, epoch, timestamp, typ, value))
}

// NewLeaderChange builds the LeaderChangeMessage value kraftd writes: version 0, since the
// JVM parses control values at version 0 and v1's directory ids must not be written.
func NewLeaderChange(leaderID int32, voters, granting []int32) *kmsg.LeaderChangeMessage {
	lc := kmsg.NewLeaderChangeMessage()
	m := &lc
	m.Version = 0
	m.LeaderID = leaderID
	for _, id := range voters {
		v := kmsg.NewLeaderChangeMessageVoter()
		v.VoterID = id
		m.Voters = append(m.Voters, v)
	}
	for _, id := range granting {
		v := kmsg.NewLeaderChangeMessageVoter()
		v.VoterID = id
		m.GrantingVoters = append(m.GrantingVoters, v)
	}
	return m
}

// DecodeLeaderChange decodes a LeaderChangeMessage value.
func DecodeLeaderChange(value []byte) (*kmsg.LeaderChangeMessage, error) {
	lc := kmsg.NewLeaderChangeMessage()
	m := &lc
	if err := m.ReadFrom(value); err != nil {
		return nil, fmt.Errorf("%w: LeaderChangeMessage: %v", ErrBadControlRecord, err)
	}
	return m, nil
}

// SnapshotHeaderRecord is the first record of a snapshot (schema SnapshotHeaderRecord v0).
type SnapshotHeaderRecord struct {
	Version                   int16
	LastContainedLogTimestamp int64 // ms
}

// AppendTo appends the flexible v0 encoding.
func (r SnapshotHeaderRecord) AppendTo(dst []byte) []byte {
	dst = kbin.AppendInt16(dst, r.Version)
	dst = kbin.AppendInt64(dst, r.LastContainedLogTimestamp)
	return append(dst, 0) // no tagged fields
}

// ReadFrom decodes the value (read at version 0 whatever its Version field says, as the
// JVM does).
func (r *SnapshotHeaderRecord) ReadFrom(b []byte) error {
	rd := kbin.Reader{Src: b}
	r.Version = rd.Int16()
	r.LastContainedLogTimestamp = rd.Int64()
	return finishControl(&rd, "SnapshotHeaderRecord")
}

// SnapshotFooterRecord is the last record of a snapshot (schema SnapshotFooterRecord v0).
type SnapshotFooterRecord struct {
	Version int16
}

// AppendTo appends the flexible v0 encoding.
func (r SnapshotFooterRecord) AppendTo(dst []byte) []byte {
	dst = kbin.AppendInt16(dst, r.Version)
	return append(dst, 0)
}

// ReadFrom decodes the value.
func (r *SnapshotFooterRecord) ReadFrom(b []byte) error {
	rd := kbin.Reader{Src: b}
	r.Version = rd.Int16()
	return finishControl(&rd, "SnapshotFooterRecord")
}

// KRaftVersionRecord records the finalized kraft.version (schema KRaftVersionRecord v0).
type KRaftVersionRecord struct {
	Version      int16
	KRaftVersion int16
}

// AppendTo appends the flexible v0 encoding.
func (r KRaftVersionRecord) AppendTo(dst []byte) []byte {
	dst = kbin.AppendInt16(dst, r.Version)
	dst = kbin.AppendInt16(dst, r.KRaftVersion)
	return append(dst, 0)
}

// ReadFrom decodes the value.
func (r *KRaftVersionRecord) ReadFrom(b []byte) error {
	rd := kbin.Reader{Src: b}
	r.Version = rd.Int16()
	r.KRaftVersion = rd.Int16()
	return finishControl(&rd, "KRaftVersionRecord")
}

// VotersRecord is the voter set (schema VotersRecord v0, KIP-853).
type VotersRecord struct {
	Version int16
	Voters  []VotersRecordVoter
}

// VotersRecordVoter is one voter of a VotersRecord.
type VotersRecordVoter struct {
	VoterID          int32
	VoterDirectoryID [16]byte
	Endpoints        []VotersRecordEndpoint
	// KRaftVersionFeature is the kraft.version range the voter supports.
	MinSupportedVersion, MaxSupportedVersion int16
}

// VotersRecordEndpoint is a listener of a voter.
type VotersRecordEndpoint struct {
	Name, Host string
	Port       uint16
}

// AppendTo appends the flexible v0 encoding.
func (r VotersRecord) AppendTo(dst []byte) []byte {
	dst = kbin.AppendInt16(dst, r.Version)
	dst = kbin.AppendCompactArrayLen(dst, len(r.Voters))
	for i := range r.Voters {
		v := &r.Voters[i]
		dst = kbin.AppendInt32(dst, v.VoterID)
		dst = kbin.AppendUuid(dst, v.VoterDirectoryID)
		dst = kbin.AppendCompactArrayLen(dst, len(v.Endpoints))
		for _, e := range v.Endpoints {
			dst = kbin.AppendCompactString(dst, e.Name)
			dst = kbin.AppendCompactString(dst, e.Host)
			dst = kbin.AppendUint16(dst, e.Port)
			dst = append(dst, 0)
		}
		dst = kbin.AppendInt16(dst, v.MinSupportedVersion)
		dst = kbin.AppendInt16(dst, v.MaxSupportedVersion)
		dst = append(dst, 0) // KRaftVersionFeature tags
		dst = append(dst, 0) // voter tags
	}
	return append(dst, 0)
}

// Minimum encoded sizes, to bound array counts by the bytes present before allocating.
const (
	minVoterSize    = 4 + 16 + 1 + 4 + 1 + 1
	minEndpointSize = 1 + 1 + 2 + 1
)

// ReadFrom decodes the value.
func (r *VotersRecord) ReadFrom(b []byte) error {
	rd := kbin.Reader{Src: b}
	r.Version = rd.Int16()
	n := rd.CompactArrayLen()
	if !rd.Ok() || n < 0 || int64(n)*minVoterSize > int64(len(rd.Src)) {
		return fmt.Errorf("%w: VotersRecord: voter count %d with %d bytes", ErrBadControlRecord, n, len(rd.Src))
	}
	r.Voters = make([]VotersRecordVoter, n)
	for i := range r.Voters {
		v := &r.Voters[i]
		v.VoterID = rd.Int32()
		v.VoterDirectoryID = rd.Uuid()
		ne := rd.CompactArrayLen()
		if !rd.Ok() || ne < 0 || int64(ne)*minEndpointSize > int64(len(rd.Src)) {
			return fmt.Errorf("%w: VotersRecord: voter %d: endpoint count %d with %d bytes", ErrBadControlRecord, i, ne, len(rd.Src))
		}
		v.Endpoints = make([]VotersRecordEndpoint, ne)
		for j := range v.Endpoints {
			e := &v.Endpoints[j]
			e.Name = rd.CompactString()
			e.Host = rd.CompactString()
			e.Port = rd.Uint16()
			skipReaderTags(&rd)
		}
		v.MinSupportedVersion = rd.Int16()
		v.MaxSupportedVersion = rd.Int16()
		skipReaderTags(&rd)
		skipReaderTags(&rd)
		if !rd.Ok() {
			break
		}
	}
	return finishControl(&rd, "VotersRecord")
}

// skipReaderTags skips a tag block, marking the reader bad on malformed input.
func skipReaderTags(rd *kbin.Reader) {
	if !rd.Ok() {
		return
	}
	rest, err := skipTags(rd.Src)
	if err != nil {
		rd.Src = nil
		rd.Span(1) // marks the reader bad
		return
	}
	rd.Src = rest
}

// finishControl skips the top-level tag block and checks the value was fully consumed.
func finishControl(rd *kbin.Reader, what string) error {
	skipReaderTags(rd)
	if err := rd.Complete(); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrBadControlRecord, what, err)
	}
	if len(rd.Src) != 0 {
		return fmt.Errorf("%w: %s: %d trailing bytes", ErrBadControlRecord, what, len(rd.Src))
	}
	return nil
}

// ControlRecord builds control record i of a control batch (Kafka writes several control
// records in one batch, e.g. LeaderChange, KRaftVersion and Voters at bootstrap).
func ControlRecord(i int32, typ int16, value []byte) Record {
	return Record{OffsetDelta: i, Key: ControlKey(typ), Value: value}
}
