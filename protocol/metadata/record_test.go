package metadata_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/kraftd/kraftd/internal/metadatatest"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/protocol/metadata/metareflect"
)

func TestEveryType(t *testing.T) {
	keys := metadata.APIKeys()
	if len(keys) != 27 {
		t.Fatalf("%d record types, Kafka 4.4.0 has 27", len(keys))
	}
	for _, k := range keys {
		r, ok := metadata.New(k)
		if !ok || r.APIKey() != k {
			t.Fatalf("New(%d) = %v, %v", k, r, ok)
		}
	}
	for _, retired := range []int16{6, 13, 16, 30, -1} {
		if _, ok := metadata.New(retired); ok {
			t.Errorf("New(%d) knows a type Kafka does not", retired)
		}
	}
}

// randomRecords gives n random records of every type at every version,
// with unknown tags in about half of them, and their encodings.
func randomRecords(t testing.TB, seed uint64, n int) (recs []metadata.Record, versions []int16, values [][]byte) {
	r := rand.New(rand.NewPCG(seed, 1))
	for _, k := range metadata.APIKeys() {
		proto, _ := metadata.New(k)
		lo, hi := proto.ValidVersions()
		for v := lo; v <= hi; v++ {
			for range n {
				rec, _ := metadata.New(k)
				metadatatest.Fill(r, rec, v)
				if r.IntN(2) == 0 {
					metadatatest.AddUnknownTags(r, rec)
				}
				value, err := metadata.Append(nil, rec, v)
				if err != nil {
					t.Fatalf("%s v%d: %v", rec.TypeName(), v, err)
				}
				recs, versions, values = append(recs, rec), append(versions, v), append(values, value)
			}
		}
	}
	return recs, versions, values
}

// Every type at every version: what is encoded decodes to the same record,
// and encodes again to the same bytes.
func TestRoundTrip(t *testing.T) {
	recs, versions, values := randomRecords(t, 1, 40)
	for i, rec := range recs {
		dec, v, err := metadata.Decode(values[i])
		if err != nil {
			t.Fatalf("%s v%d: %v\n%x", rec.TypeName(), versions[i], err, values[i])
		}
		if v != versions[i] || dec.APIKey() != rec.APIKey() {
			t.Fatalf("%s v%d decoded as %s v%d", rec.TypeName(), versions[i], dec.TypeName(), v)
		}
		if d := metareflect.Diff(dec, rec); d != "" {
			t.Fatalf("%s v%d: decoded differs at %s", rec.TypeName(), v, d)
		}
		again, err := metadata.Append(nil, dec, v)
		if err != nil || !bytes.Equal(again, values[i]) {
			t.Fatalf("%s v%d: re-encoded %x (%v), first %x", rec.TypeName(), v, again, err, values[i])
		}
	}
}

// Every proper prefix of a record, and the record with a byte more, is
// refused with an error naming the type and version; nothing panics.
func TestTruncatedAndTrailing(t *testing.T) {
	recs, versions, values := randomRecords(t, 2, 3)
	for i, value := range values {
		for n := range len(value) {
			if _, _, err := metadata.Decode(value[:n]); err == nil {
				t.Fatalf("%s v%d: %d of %d bytes decoded", recs[i].TypeName(), versions[i], n, len(value))
			} else if n >= 3 && !strings.Contains(err.Error(), recs[i].TypeName()) {
				t.Fatalf("error does not name the type: %v", err)
			}
		}
		_, _, err := metadata.Decode(append(value[:len(value):len(value)], 0))
		var me *metadata.Error
		if !errors.As(err, &me) || !errors.Is(err, metadata.ErrMalformed) || me.Type != recs[i].TypeName() || me.Version != versions[i] ||
			!strings.Contains(me.Reason, "1 bytes after the record") {
			t.Fatalf("a trailing byte: %v", err)
		}
	}
}

func TestDecodeRefusals(t *testing.T) {
	for _, c := range []struct {
		name  string
		value []byte
		want  string
	}{
		{"empty", nil, "metadata: decode: framing: frame version: truncated"},
		{"no version", []byte{1, 3}, "metadata: decode record type 3: framing: version: truncated"},
		{"frame version 0", []byte{0, 20, 0, 0}, "frame version 0"},
		{"frame version 2", []byte{2, 20, 0, 0}, "frame version 2"},
		{"unknown type", []byte{1, 6, 0, 0}, "record type 6 v0: unknown record type"},
		{"type out of int16", []byte{1, 0x80, 0x80, 0x02, 0, 0}, "record type 32768 is out of range"},
		{"version above the range", []byte{1, 12, 1, 0}, "FeatureLevelRecord v1: version out of range: Kafka 4.4.0 knows versions 0 to 0"},
		{"overlong varint", []byte{1, 20, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, "NoOpRecord v0: tagged fields: truncated or overlong varint"},
		{"count beyond the bytes", []byte{1, 20, 0, 3, 0, 0}, "3 tagged fields cannot fit in the 2 bytes left"},
		{"tag size beyond the bytes", []byte{1, 20, 0, 1, 5, 9, 0}, "tagged fields: tag 5 of size 9 overruns the 1 bytes left"},
		{"tags out of order", []byte{1, 20, 0, 2, 7, 0, 7, 0}, "tag 7 follows tag 7: tags must ascend"},
		{"null string", []byte{1, 2, 0, 0}, "TopicRecord v0: Name: null for a non-nullable string"},
		{"string beyond the bytes", []byte{1, 2, 0, 5, 'a'}, "TopicRecord v0: Name: length 4 exceeds the 1 bytes left"},
		{"string too long", []byte{1, 2, 0, 0x81, 0x80, 0x02}, "Name: string length 32768 exceeds 32767"},
		{"array beyond the bytes", append([]byte{1, 3, 0, 0, 0, 0, 1}, append(make([]byte, 16), 3, 0, 0, 0, 1)...),
			"PartitionRecord v0: Replicas: 2 elements cannot fit in the 4 bytes left"},
		{"null array", append([]byte{1, 3, 0, 0, 0, 0, 1}, append(make([]byte, 16), 0)...),
			"PartitionRecord v0: Replicas: null for a non-nullable array"},
		{"a tag at a version without it", append([]byte{1, 5, 0, 0, 0, 0, 1}, append(make([]byte, 16), 1, 8, 1, 0)...),
			"PartitionChangeRecord v0: Directories: tag 8 is not valid at version 0"},
		{"tagged value shorter than its size", append([]byte{1, 5, 0, 0, 0, 0, 1}, append(make([]byte, 16), 1, 1, 5, 0, 0, 0, 1, 9)...),
			"PartitionChangeRecord v0: Leader: the tagged field holds 1 bytes after its value"},
		{"tagged value longer than its size", append([]byte{1, 5, 0, 0, 0, 0, 1}, append(make([]byte, 16), 1, 1, 3, 0, 0, 0)...),
			"PartitionChangeRecord v0: Leader: the value runs past the tagged field's size"},
		{"not UTF-8", []byte{1, 2, 0, 2, 0xff}, "TopicRecord v0: Name: not valid UTF-8"},
		{"nested element", []byte{1, 14, 0, 2, 2, 'a', 0x05}, "ClientQuotaRecord v0: Entity[0].EntityName: length 4 exceeds the 0 bytes left"},
	} {
		rec, _, err := metadata.Decode(c.value)
		if err == nil || !errors.Is(err, metadata.ErrMalformed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, %v; want an error with %q", c.name, rec, err, c.want)
		}
	}
}

func TestEncodeRefusals(t *testing.T) {
	rb := metadata.NewRegisterBrokerRecord()
	rb.IsMigratingZkBroker = true
	pc := metadata.NewPartitionChangeRecord()
	pc.Directories = [][16]byte{{1}}
	long := &metadata.TopicRecord{Name: strings.Repeat("x", 32768)}
	ep := metadata.NewRegisterBrokerRecord()
	ep.EndPoints = []metadata.RegisterBrokerRecordBrokerEndpoint{{Name: "a"}, {Host: strings.Repeat("h", 40000)}}
	dup := metadata.NewNoOpRecord()
	dup.UnknownTags = []metadata.RawTaggedField{{Tag: 3}, {Tag: 3}}
	known := metadata.NewPartitionRecord()
	known.UnknownTags = []metadata.RawTaggedField{{Tag: 1}}
	for _, c := range []struct {
		rec     metadata.Record
		version int16
		want    string
	}{
		{metadata.NewNoOpRecord(), 1, "NoOpRecord v1: version out of range"},
		{rb, 1, "RegisterBrokerRecord v1: IsMigratingZkBroker: a non-default value cannot be written at version 1"},
		{pc, 0, "PartitionChangeRecord v0: Directories: a non-default value cannot be written at version 0"},
		{long, 0, "TopicRecord v0: Name: a string of 32768 bytes"},
		{ep, 4, "RegisterBrokerRecord v4: EndPoints[1].Host: a string of 40000 bytes"},
		{dup, 0, "UnknownTags: tag 3 follows tag 3"},
		{known, 2, "UnknownTags: tag 1 is a known field's tag"},
		{&metadata.ConfigRecord{Value: ptr("\xed\xa0\x80")}, 0, "ConfigRecord v0: Value: not valid UTF-8"},
	} {
		out, err := metadata.Append([]byte("keep"), c.rec, c.version)
		if err == nil || !errors.Is(err, metadata.ErrUnencodable) || !strings.Contains(err.Error(), c.want) || string(out) != "keep" {
			t.Errorf("%s v%d: %q, %v; want %q", c.rec.TypeName(), c.version, out, err, c.want)
		}
	}
	// Below its version a field at its default is fine.
	if _, err := metadata.Append(nil, metadata.NewRegisterBrokerRecord(), 0); err != nil {
		t.Error(err)
	}
}

func TestHeader(t *testing.T) {
	key, v, body, err := metadata.Header([]byte{1, 0x80})
	if err == nil {
		t.Errorf("truncated varint read as %d %d %x", key, v, body)
	}
	key, v, body, err = metadata.Header([]byte{1, 5, 2, 0xaa})
	if err != nil || key != 5 || v != 2 || !bytes.Equal(body, []byte{0xaa}) {
		t.Errorf("%d %d %x %v", key, v, body, err)
	}
	// A varint longer than it needs to be is read, as Kafka reads it.
	key, v, _, err = metadata.Header([]byte{1, 0x80 | 27, 0, 0x80, 0})
	if err != nil || key != 27 || v != 0 {
		t.Errorf("overlong varints: %d %d %v", key, v, err)
	}
}

// A count is checked against the bytes left before anything is allocated
// for it.
func TestHugeCountsAllocateNothing(t *testing.T) {
	pad := make([]byte, 1<<20)
	replicas := append(append([]byte{1, 3, 0, 0, 0, 0, 1}, make([]byte, 16)...), 0xff, 0xff, 0xff, 0xff, 0x0f) // 2^32-2 elements
	endpoints := []byte{1, 0, 0, 0, 0, 0, 1}
	endpoints = append(endpoints, make([]byte, 16+8)...)
	endpoints = append(endpoints, 0x80, 0x80, 0x40) // 2^20-1 elements of 7 bytes at least
	for _, value := range [][]byte{append(replicas, pad...), append(endpoints, pad...)} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _, err := metadata.Decode(value)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "cannot fit") {
			t.Errorf("decoded: %v", err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
			t.Errorf("%d bytes allocated for a refused count", n)
		}
	}
}
