package protocol

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// compressBatch turns an encoded uncompressed batch into one compressed with codec,
// rewriting attributes, length and CRC as a Kafka producer would.
func compressBatch(tb testing.TB, raw []byte, codec int8, compress func([]byte) []byte) []byte {
	tb.Helper()
	out := append([]byte(nil), raw[:BatchHeaderSize]...)
	out = append(out, compress(raw[BatchHeaderSize:])...)
	attrs := binary.BigEndian.Uint16(out[21:])
	binary.BigEndian.PutUint16(out[21:], attrs&^7|uint16(codec))
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[17:], CRC32C(out[21:]))
	return out
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func lz4Bytes(b []byte) []byte {
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func zstdBytes(b []byte) []byte {
	enc, _ := zstd.NewWriter(nil)
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

// xerialBytes frames snappy blocks the way Kafka's Java producer does (chunks of at most
// chunk bytes).
func xerialBytes(b []byte, chunk int) []byte {
	out := append([]byte(nil), xerialHeader...)
	out = binary.BigEndian.AppendUint32(out, 1)
	out = binary.BigEndian.AppendUint32(out, 1)
	for len(b) > 0 {
		n := min(chunk, len(b))
		blk := snappy.Encode(nil, b[:n])
		out = binary.BigEndian.AppendUint32(out, uint32(len(blk)))
		out = append(out, blk...)
		b = b[n:]
	}
	return out
}

func TestDecodeCompressedBatches(t *testing.T) {
	recs := make([]Record, 50)
	for i := range recs {
		recs[i] = Record{Value: bytes.Repeat([]byte{byte(i)}, 100+i), Headers: []RecordHeader{{Key: "h", Value: []byte{byte(i)}}}}
	}
	raw := AppendBatch(nil, Batch{BaseOffset: 10, PartitionLeaderEpoch: 3, BaseTimestamp: goldenTS, Records: recs})
	codecs := []struct {
		name  string
		codec int8
		f     func([]byte) []byte
	}{
		{"gzip", CompressionGzip, gzipBytes},
		{"snappy raw", CompressionSnappy, func(b []byte) []byte { return snappy.Encode(nil, b) }},
		{"snappy xerial", CompressionSnappy, func(b []byte) []byte { return xerialBytes(b, 1000) }},
		{"lz4", CompressionLZ4, lz4Bytes},
		{"zstd", CompressionZstd, zstdBytes},
	}
	for _, c := range codecs {
		cb := compressBatch(t, raw, c.codec, c.f)
		if len(cb) >= len(raw) {
			t.Fatalf("%s: compressed batch not smaller (%d >= %d)", c.name, len(cb), len(raw))
		}
		b, rest, err := DecodeBatch(cb)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(rest) != 0 || len(b.Records) != 50 || b.BaseOffset != 10 || !bytes.Equal(b.Records[49].Value, recs[49].Value) ||
			b.Records[7].Headers[0].Key != "h" || b.Records[7].Headers[0].Value[0] != 7 || b.Records[49].OffsetDelta != 49 {
			t.Fatalf("%s: decoded %d records", c.name, len(b.Records))
		}
		if _, values, _, err := DecodeValues(cb, nil); err != nil || len(values) != 50 || !bytes.Equal(values[49], recs[49].Value) {
			t.Fatalf("%s: DecodeValues: %d values, %v", c.name, len(values), err)
		}
		// Corrupt compressed data (CRC fixed up) fails with ErrCorruptBatch, no panic.
		bad := bytes.Clone(cb)
		for i := BatchHeaderSize; i < len(bad); i += 3 {
			bad[i] ^= 0x5a
		}
		binary.BigEndian.PutUint32(bad[17:], CRC32C(bad[21:]))
		if _, _, err := DecodeBatch(bad); !errors.Is(err, ErrCorruptBatch) {
			t.Errorf("%s corrupt: %v", c.name, err)
		}
	}
}

func TestDecompressionBomb(t *testing.T) {
	// gzip, lz4 and snappy are checked against a 1 MiB bound to keep the test fast; zstd
	// against the real one (its decoder is configured with it).
	const small = 1 << 20
	bigSmall := make([]byte, small+1)
	bigFull := make([]byte, MaxDecompressedBatchBytes+1)
	for _, c := range []struct {
		name  string
		codec int8
		data  []byte
		limit int
	}{
		{"gzip", CompressionGzip, gzipBytes(bigSmall), small},
		{"lz4", CompressionLZ4, lz4Bytes(bigSmall), small},
		{"snappy xerial", CompressionSnappy, xerialBytes(bigSmall, 1<<16), small},
		{"snappy raw", CompressionSnappy, snappy.Encode(nil, bigSmall), small},
		{"zstd", CompressionZstd, zstdBytes(bigFull), MaxDecompressedBatchBytes},
	} {
		var err error
		n := allocBytesRuns(1, func() { _, err = decompressLimit(c.codec, c.data, nil, c.limit) })
		if err == nil || !strings.Contains(err.Error(), "exceed") {
			t.Errorf("%s: err %v for %d decompressed bytes", c.name, err, c.limit+1)
		}
		// Output buffer growth by doubling only, never the size a header claims; lz4 adds its block
		// buffers (two of the frame's block size, at most 4 MiB each), whatever the input.
		bound := 3 * c.limit
		if c.codec == CompressionLZ4 {
			bound += 9 << 20
		}
		if n > uint64(bound) {
			t.Errorf("%s: %d bytes allocated", c.name, n)
		}
		// Raising the bound by one byte decodes it.
		if c.limit >= MaxDecompressedBatchBytes {
			continue
		}
		if out, err := decompressLimit(c.codec, c.data, nil, c.limit+1); err != nil || len(out) != c.limit+1 {
			t.Errorf("%s at the bound: %d bytes, %v", c.name, len(out), err)
		}
	}
}

// A hostile leader can serve the same small batch that inflates past the limit on every
// fetch: validating it again must not allocate the inflated size again (the decompression
// buffer is reused), or each fetch would leave megabytes of garbage behind.
func TestValidateBatchReusesDecompressionBuffer(t *testing.T) {
	value := make([]byte, MaxDecompressedBatchBytes)
	raw := AppendBatch(nil, Batch{BaseOffset: 0, PartitionLeaderEpoch: 1, BaseTimestamp: goldenTS, Records: []Record{{Value: value}}})
	for _, c := range []struct {
		name  string
		codec int8
		f     func([]byte) []byte
	}{
		{"gzip", CompressionGzip, gzipBytes},
		{"lz4", CompressionLZ4, lz4Bytes},
		{"zstd", CompressionZstd, zstdBytes},
		{"snappy xerial", CompressionSnappy, func(b []byte) []byte { return xerialBytes(b, 1<<16) }},
	} {
		bomb := compressBatch(t, raw, c.codec, c.f)
		var err error
		n := allocBytesRuns(5, func() { _, err = ValidateBatch(bomb, 1<<20) })
		if !errors.Is(err, ErrCorruptBatch) || !strings.Contains(err.Error(), "exceed") {
			t.Fatalf("%s: ValidateBatch of %d bytes inflating past the limit: %v", c.name, len(bomb), err)
		}
		// lz4 allocates its block buffers per reader; the rest allocate next to nothing.
		if bound := uint64(9 << 20); n > bound {
			t.Errorf("%s: %d bytes allocated per validation, want at most %d", c.name, n, bound)
		}
	}
}
