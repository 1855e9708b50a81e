package metadata

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
)

//go:generate go run ./internal/gen/run

// Record is one metadata record type's body. Every type in this package is
// generated from its Kafka schema (schema/*.json); the unexported methods keep
// other implementations out, so a Record is always one Kafka knows.
type Record interface {
	// APIKey is the record type, the api key of the framing.
	APIKey() int16
	// TypeName is the schema's name ("PartitionChangeRecord").
	TypeName() string
	// ValidVersions is the range of versions Kafka 4.4.0 knows for the type.
	ValidVersions() (min, max int16)
	// Default sets every field to its schema default (which is not always
	// Go's zero value: PartitionChangeRecord.Leader is -2, "unchanged").
	Default()
	// AppendTo appends the body at version, without the framing.
	AppendTo(dst []byte, version int16) ([]byte, error)
	// ReadFrom decodes a whole body at version, without the framing.
	ReadFrom(body []byte, version int16) error

	encode(e *encoder, version int16)
	decode(d *decoder, version int16)
}

// RawTaggedField is a tagged field the schema does not know, one a newer
// Kafka added: decoding keeps it and encoding writes it back, so a record
// round-trips through kraftd unchanged.
type RawTaggedField struct {
	Tag  uint32
	Data []byte
}

// frameVersion is ApiMessageAndVersion's only frame version.
const frameVersion = 1

var (
	// ErrMalformed wraps every decoding failure.
	ErrMalformed = errors.New("malformed metadata record")
	// ErrUnencodable wraps every encoding failure: a version the type lacks,
	// a field the version cannot carry, a value no encoding holds.
	ErrUnencodable = errors.New("metadata record cannot be encoded")
)

// Error says which record, version and field could not be decoded or
// encoded, and why.
type Error struct {
	Op      string // "decode" or "encode"
	Type    string // the schema name; empty when the type is unknown
	APIKey  int16  // -1 when the framing failed before it
	Version int16
	Field   string // a path such as "EndPoints[1].Host"; empty for the record itself
	Reason  string
}

func (e *Error) Error() string {
	if e.APIKey < 0 { // the framing, before the type is known
		return fmt.Sprintf("metadata: %s: %s", e.Op, e.Reason)
	}
	what := e.Type
	if what == "" {
		what = fmt.Sprintf("record type %d", e.APIKey)
	}
	s := fmt.Sprintf("metadata: %s %s", e.Op, what)
	if e.Version >= 0 {
		s += fmt.Sprintf(" v%d", e.Version)
	}
	s += ": "
	if e.Field != "" {
		s += e.Field + ": "
	}
	return s + e.Reason
}

func (e *Error) Unwrap() error {
	if e.Op == "encode" {
		return ErrUnencodable
	}
	return ErrMalformed
}

// Append appends rec at version in Kafka's ApiMessageAndVersion framing
// (unsigned varints: frame version 1, api key, version; then the body), as
// MetadataRecordSerde writes a metadata log record's value. On error dst
// comes back unchanged.
func Append(dst []byte, rec Record, version int16) ([]byte, error) {
	if err := checkVersion("encode", rec, version); err != nil {
		return dst, err
	}
	start := len(dst)
	dst = kbin.AppendUvarint(dst, frameVersion)
	dst = kbin.AppendUvarint(dst, uint32(rec.APIKey()))
	dst = kbin.AppendUvarint(dst, uint32(version))
	out, err := rec.AppendTo(dst, version)
	if err != nil {
		return dst[:start], err
	}
	return out, nil
}

// Decode decodes a metadata log record value: the framing, then the body of
// the type it names. It refuses a type it does not know, a version outside
// the type's range, and any body that does not decode exactly. Decoded
// values never alias value.
func Decode(value []byte) (Record, int16, error) {
	key, version, body, err := Header(value)
	if err != nil {
		return nil, 0, err
	}
	rec, ok := New(key)
	if !ok {
		return nil, 0, &Error{Op: "decode", APIKey: key, Version: version, Reason: "unknown record type"}
	}
	if err := rec.ReadFrom(body, version); err != nil {
		return nil, 0, err
	}
	return rec, version, nil
}

// Header splits a metadata log record value into its api key, version and
// body without decoding the body, for a reader that wants a few types only.
func Header(value []byte) (apiKey, version int16, body []byte, err error) {
	h := [3]int16{-1, -1, -1}
	fail := func(reason string) (int16, int16, []byte, error) {
		return 0, 0, nil, &Error{Op: "decode", APIKey: h[1], Version: h[2], Reason: "framing: " + reason}
	}
	for i, what := range [...]string{"frame version", "record type", "version"} {
		u, n := kbin.Uvarint(value)
		if n <= 0 {
			return fail(what + ": truncated or overlong varint")
		}
		if u > 0x7fff {
			return fail(fmt.Sprintf("%s %d is out of range", what, u))
		}
		h[i], value = int16(u), value[n:]
		if i == 0 && h[0] != frameVersion {
			return fail(fmt.Sprintf("frame version %d (only %d is defined)", h[0], frameVersion))
		}
	}
	return h[1], h[2], value, nil
}

func checkVersion(op string, rec Record, version int16) error {
	lo, hi := rec.ValidVersions()
	if version < lo || version > hi {
		return &Error{Op: op, Type: rec.TypeName(), APIKey: rec.APIKey(), Version: version,
			Reason: fmt.Sprintf("version out of range: Kafka 4.4.0 knows versions %d to %d", lo, hi)}
	}
	return nil
}

// appendRecord is every generated AppendTo.
func appendRecord(dst []byte, rec Record, version int16) ([]byte, error) {
	if err := checkVersion("encode", rec, version); err != nil {
		return dst, err
	}
	e := encoder{dst: dst}
	rec.encode(&e, version)
	if e.err != nil {
		return dst, e.err.record("encode", rec, version)
	}
	return e.dst, nil
}

// readRecord is every generated ReadFrom.
func readRecord(rec Record, body []byte, version int16) error {
	if err := checkVersion("decode", rec, version); err != nil {
		return err
	}
	rec.Default()
	d := decoder{r: kbin.Reader{Src: body}}
	rec.decode(&d, version)
	if d.err == nil && len(d.r.Src) > 0 {
		d.fail("", "%d bytes after the record", len(d.r.Src))
	}
	if d.err != nil {
		return d.err.record("decode", rec, version)
	}
	return nil
}

// APIKeys lists the record types Kafka 4.4.0 defines, in api key order.
func APIKeys() []int16 { return append([]int16(nil), apiKeys...) }
