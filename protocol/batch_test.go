package protocol

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func unhex(tb testing.TB, s string) []byte {
	tb.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Golden batches of docs/design/storage.md 6.1 and 6.2.
const goldenLeaderChangeBatch = `
00 00 00 00 00 00 00 00 00 00 00 5e 00 00 00 01
02 17 35 ab 2b 00 20 00 00 00 00 00 00 01 8b cf
e5 68 00 00 00 01 8b cf e5 68 00 ff ff ff ff ff
ff ff ff ff ff ff ff ff ff 00 00 00 01 58 00 00
00 08 00 00 00 02 44 00 00 00 00 00 01 04 00 00
00 01 00 00 00 00 02 00 00 00 00 03 00 03 00 00
00 01 00 00 00 00 02 00 00 00`

const goldenDataBatch = `
00 00 00 00 00 00 00 01 00 00 00 47 00 00 00 01
02 46 27 12 21 00 00 00 00 00 01 00 00 01 8b cf
e5 68 00 00 00 01 8b cf e5 68 00 ff ff ff ff ff
ff ff ff ff ff ff ff ff ff 00 00 00 02 14 00 00
00 01 08 ab ab ab ab 00 14 00 00 02 01 08 cd cd
cd cd 00`

const goldenTS = 1700000000000

func TestCRC32CCheckValue(t *testing.T) {
	if got := CRC32C([]byte("123456789")); got != 0xE3069283 {
		t.Fatalf("crc32c = %#x", got)
	}
}

func TestGoldenDataBatch(t *testing.T) {
	want := unhex(t, goldenDataBatch)
	got := AppendBatch(nil, Batch{
		BaseOffset: 1, PartitionLeaderEpoch: 1, BaseTimestamp: goldenTS, MaxTimestamp: goldenTS,
		Records: []Record{{Value: []byte{0xab, 0xab, 0xab, 0xab}}, {OffsetDelta: 1, Value: []byte{0xcd, 0xcd, 0xcd, 0xcd}}},
	})
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendBatch:\n got %x\nwant %x", got, want)
	}
	h, err := CheckBatch(want)
	if err != nil {
		t.Fatal(err)
	}
	if h.CRC != 0x46271221 || h.Size() != 83 || h.BaseOffset != 1 || h.LastOffset() != 2 || h.NextOffset() != 3 ||
		h.RecordCount != 2 || h.IsControl() || h.Compression() != 0 || h.ProducerID != -1 || h.ProducerEpoch != -1 || h.BaseSequence != -1 {
		t.Fatalf("header %+v", h)
	}
	b, rest, err := DecodeBatch(append(want, 0xee))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rest, []byte{0xee}) {
		t.Fatalf("rest = %x", rest)
	}
	if b.BaseOffset != 1 || b.PartitionLeaderEpoch != 1 || b.Control || b.BaseTimestamp != goldenTS || len(b.Records) != 2 ||
		b.Records[0].Key != nil || !bytes.Equal(b.Records[1].Value, []byte{0xcd, 0xcd, 0xcd, 0xcd}) || b.Records[1].OffsetDelta != 1 {
		t.Fatalf("decoded %+v", b)
	}
}

func TestGoldenLeaderChangeBatch(t *testing.T) {
	want := unhex(t, goldenLeaderChangeBatch)
	h, err := CheckBatch(want)
	if err != nil {
		t.Fatal(err)
	}
	if h.CRC != 0x1735ab2b || h.Size() != 106 || h.BatchLength != 94 || !h.IsControl() {
		t.Fatalf("header %+v", h)
	}
	b, rest, err := DecodeBatch(want)
	if err != nil || len(rest) != 0 {
		t.Fatalf("DecodeBatch: %v, rest %d", err, len(rest))
	}
	if len(b.Records) != 1 || !bytes.Equal(b.Records[0].Key, []byte{0, 0, 0, 2}) {
		t.Fatalf("records %+v", b.Records)
	}
	var m kmsg.LeaderChangeMessage
	if err := m.ReadFrom(b.Records[0].Value); err != nil {
		t.Fatal(err)
	}
	if m.LeaderID != 1 || len(m.Voters) != 3 || len(m.GrantingVoters) != 2 {
		t.Fatalf("leader change %+v", m)
	}
	again := AppendBatch(nil, b)
	if !bytes.Equal(again, want) {
		t.Fatalf("re-encoded:\n got %x\nwant %x", again, want)
	}
}

func TestBatchErrors(t *testing.T) {
	good := unhex(t, goldenDataBatch)
	mut := func(f func(b []byte)) []byte {
		b := bytes.Clone(good)
		f(b)
		return b
	}
	cases := []struct {
		name    string
		b       []byte
		is      error
		message string
	}{
		{"short header", good[:60], ErrShortBatch, "60 bytes"},
		{"torn tail", good[:82], ErrShortBatch, "needs 83 bytes, have 82"},
		{"magic", mut(func(b []byte) { b[16] = 1 }), ErrCorruptBatch, "magic 1"},
		{"length", mut(func(b []byte) { b[11] = 48 }), ErrCorruptBatch, "length 48"},
		{"crc", mut(func(b []byte) { b[len(b)-2] ^= 1 }), ErrCorruptBatch, "CRC 0x46271221"},
	}
	for _, c := range cases {
		_, err := CheckBatch(c.b)
		if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.message) {
			t.Errorf("%s: err = %v, want %v containing %q", c.name, err, c.is, c.message)
		}
		if _, _, err := DecodeBatch(c.b); !errors.Is(err, c.is) {
			t.Errorf("%s: DecodeBatch err = %v", c.name, err)
		}
	}
}

func TestSetBaseOffset(t *testing.T) {
	b := unhex(t, goldenDataBatch)
	SetBaseOffset(b, 1<<40)
	h, err := CheckBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	if h.BaseOffset != 1<<40 || h.LastOffset() != 1<<40+1 {
		t.Fatalf("header %+v", h)
	}
}

func TestValidateBatch(t *testing.T) {
	good := unhex(t, goldenDataBatch)
	// resealed applies f to a copy of good and recomputes the CRC: a peer can forge any
	// header with a valid checksum.
	resealed := func(f func(b []byte)) []byte {
		b := bytes.Clone(good)
		f(b)
		binary.BigEndian.PutUint32(b[17:], CRC32C(b[21:]))
		return b
	}
	control := AppendControlBatch(nil, 7, 3, 0, ControlLeaderChange, NewLeaderChange(1, []int32{1}, []int32{1}).AppendTo(nil))
	badControl := func(typ int16, value []byte) []byte { return AppendControlBatch(nil, 0, 1, 0, typ, value) }
	bomb := compressBatch(t, AppendBatch(nil, Batch{Records: []Record{{Value: make([]byte, MaxDecompressedBatchBytes)}}}),
		CompressionZstd, zstdBytes)
	if _, err := ValidateBatch(good, len(good)); err != nil {
		t.Fatalf("golden batch: %v", err)
	}
	if _, err := ValidateBatch(control, len(control)); err != nil {
		t.Fatalf("LeaderChange batch: %v", err)
	}
	for _, c := range []struct {
		name    string
		b       []byte
		max     int
		is      error
		message string
		header  bool // refused by ValidateBatchHeader too
	}{
		{"torn tail", good[:82], 1 << 20, ErrShortBatch, "needs 83 bytes", true},
		{"crc", func() []byte { b := bytes.Clone(good); b[70] ^= 1; return b }(), 1 << 20, ErrCorruptBatch, "CRC", false},
		{"above the size limit", good, len(good) - 1, ErrCorruptBatch, "above the limit 82", true},
		{"huge length", resealed(func(b []byte) { binary.BigEndian.PutUint32(b[8:], 1<<30) }), 1 << 20, ErrCorruptBatch, "above the limit", true},
		{"negative base offset", resealed(func(b []byte) { binary.BigEndian.PutUint64(b, 1<<63) }), 1 << 20, ErrCorruptBatch, "negative base offset", true},
		{"offset overflow", resealed(func(b []byte) { binary.BigEndian.PutUint64(b, 1<<63-2) }), 1 << 20, ErrCorruptBatch, "overflow", true},
		{"negative epoch", resealed(func(b []byte) { binary.BigEndian.PutUint32(b[12:], 1<<31) }), 1 << 20, ErrCorruptBatch, "no leader epoch", true},
		{"negative last offset delta", resealed(func(b []byte) { binary.BigEndian.PutUint32(b[23:], uint32(0xfffffffb)) }), 1 << 20, ErrCorruptBatch, "last offset delta -5", true},
		{"no records, delta > 0", resealed(func(b []byte) { binary.BigEndian.PutUint32(b[57:], 0) }), 1 << 20, ErrCorruptBatch, "holds 0 records", true},
		{"record does not decode", resealed(func(b []byte) { b[61] = 0x7f }), 1 << 20, ErrCorruptBatch, "record 0", false},
		{"unknown control type", badControl(99, []byte{0}), 1 << 20, ErrCorruptBatch, "unknown control type 99", false},
		{"control value", badControl(ControlLeaderChange, []byte{0}), 1 << 20, ErrCorruptBatch, "LeaderChangeMessage", false},
		{"decompression bomb", bomb, 1 << 20, ErrCorruptBatch, "exceed", false},
	} {
		_, err := ValidateBatch(c.b, c.max)
		if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.message) {
			t.Errorf("%s: err = %v, want %v containing %q", c.name, err, c.is, c.message)
		}
		_, herr := ValidateBatchHeader(c.b, c.max)
		if c.header && (!errors.Is(herr, c.is) || !strings.Contains(herr.Error(), c.message)) {
			t.Errorf("%s: ValidateBatchHeader err = %v, want %v containing %q", c.name, herr, c.is, c.message)
		} else if !c.header && herr != nil {
			t.Errorf("%s: ValidateBatchHeader refused what only the CRC or records show: %v", c.name, herr)
		}
	}
	// A committed batch with no records for its offsets does not decode either.
	if _, _, err := DecodeBatch(resealed(func(b []byte) { binary.BigEndian.PutUint32(b[57:], 0) })); !errors.Is(err, ErrCorruptBatch) {
		t.Errorf("DecodeBatch of an empty batch with last offset delta 1: err = %v", err)
	}
}
