package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// MaxDecompressedBatchBytes bounds the records region of a compressed batch once
// decompressed. KRaft writes uncompressed batches of at most 8 MiB; the bound keeps a
// small hostile batch (a "zip bomb") from allocating without limit.
const MaxDecompressedBatchBytes = 16 << 20

// decompress returns the records region uncompressed (data itself when the codec is none)
// in a new buffer, for decoders that keep what they decode.
func decompress(codec int8, data []byte) ([]byte, error) {
	return decompressLimit(codec, data, nil, MaxDecompressedBatchBytes)
}

// scratch holds one decompression buffer for ValidateBatch, which keeps nothing it decodes
// (its callers run on one goroutine; a concurrent caller allocates its own). Reusing it
// means a stream of small batches that each inflate to the limit (a zip bomb a hostile
// leader serves on every fetch) allocates once, not per batch. Unlike a sync.Pool it
// survives garbage collections, which is the point; it costs at most one buffer of about
// MaxDecompressedBatchBytes, and only on a node that has seen compressed batches.
var scratch = make(chan []byte, 1)

// withScratch decompresses into the scratch buffer and calls f with the records region;
// the buffer is reused once f is done, so f must not keep any of it.
func withScratch(codec int8, data []byte, f func([]byte) error) error {
	if codec == CompressionNone {
		return f(data)
	}
	var buf []byte
	select {
	case buf = <-scratch:
	default:
	}
	out, err := decompressLimit(codec, data, buf, MaxDecompressedBatchBytes)
	if cap(out) > cap(buf) {
		buf = out
	}
	if err == nil {
		err = f(out)
	}
	select {
	case scratch <- buf[:0]:
	default:
	}
	return err
}

func tooLarge(name string, limit int) error {
	return fmt.Errorf("%s: decompressed records exceed %d bytes", name, limit)
}

// decompressLimit decompresses into dst (grown as needed; nil for a new buffer) with a
// bound on the output size (at most MaxDecompressedBatchBytes, the zstd decoder's own
// bound). On an error the returned slice, when not nil, is the grown buffer for reuse.
func decompressLimit(codec int8, data, dst []byte, limit int) ([]byte, error) {
	switch codec {
	case CompressionNone:
		return data, nil
	case CompressionGzip:
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return readLimited("gzip", zr, dst, limit)
	case CompressionSnappy:
		return decodeSnappy(data, dst, limit)
	case CompressionLZ4:
		zr := lz4Readers.Get().(*lz4.Reader)
		zr.Reset(bytes.NewReader(data))
		out, err := readLimited("lz4", zr, dst, limit)
		zr.Reset(nil)
		lz4Readers.Put(zr)
		return out, err
	case CompressionZstd:
		dec, err := zstdDecoder()
		if err != nil {
			return nil, err
		}
		out, err := dec.DecodeAll(data, dst[:0])
		if err != nil {
			return out[:0], fmt.Errorf("zstd: %w", err)
		}
		if len(out) > limit {
			return out[:0], tooLarge("zstd", limit)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unknown compression codec %d", codec)
	}
}

// readLimited reads r to its end into dst, failing once more than limit bytes came out.
// The buffer grows by doubling, never by what the input claims: append's growth for large
// slices (1.25x) would leave about five times the output size behind as garbage.
func readLimited(name string, r io.Reader, dst []byte, limit int) ([]byte, error) {
	out := dst[:0]
	for {
		if len(out) == cap(out) {
			grown := make([]byte, len(out), min(max(2*cap(out), 64<<10), limit+1))
			copy(grown, out)
			out = grown
		}
		n, err := r.Read(out[len(out):min(cap(out), limit+1)])
		out = out[:len(out)+n]
		switch {
		case len(out) > limit:
			return out[:0], tooLarge(name, limit)
		case err == io.EOF:
			return out, nil
		case err != nil:
			return out[:0], fmt.Errorf("%s: %w", name, err)
		}
	}
}

// lz4Readers keeps readers, whose block buffers (up to 4 MiB per frame block size) are
// worth reusing across batches.
var lz4Readers = sync.Pool{New: func() any { return lz4.NewReader(nil) }}

var (
	zstdOnce sync.Once
	zstdDec  *zstd.Decoder
	zstdErr  error
)

// zstdDecoder returns a shared decoder: DecodeAll is safe for concurrent use, and building
// a decoder per batch would dominate the cost.
func zstdDecoder() (*zstd.Decoder, error) {
	zstdOnce.Do(func() {
		zstdDec, zstdErr = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(MaxDecompressedBatchBytes),
			zstd.WithDecoderMaxWindow(MaxDecompressedBatchBytes))
		if zstdErr != nil {
			zstdErr = fmt.Errorf("zstd: create decoder: %w", zstdErr)
		}
	})
	return zstdDec, zstdErr
}

// xerialHeader starts the framing Kafka's Java clients write around snappy blocks
// (snappy-java's SnappyOutputStream): magic, then version and compatible version.
var xerialHeader = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// decodeSnappy decodes a raw snappy block or xerial-framed blocks (int32 length + block),
// checking each block's declared size against the limit before decoding it.
func decodeSnappy(data, dst []byte, limit int) ([]byte, error) {
	if !bytes.HasPrefix(data, xerialHeader) {
		n, err := snappy.DecodedLen(data)
		if err != nil {
			return nil, fmt.Errorf("snappy: %w", err)
		}
		if n > limit {
			return nil, tooLarge("snappy", limit)
		}
		out, err := snappy.Decode(grow(dst, n), data)
		if err != nil {
			return nil, fmt.Errorf("snappy: %w", err)
		}
		return out, nil
	}
	const headerLen = 16 // magic 8, version 4, compatible version 4
	if len(data) < headerLen {
		return nil, errors.New("snappy: truncated xerial header")
	}
	// First pass: validate the framing and sum the declared sizes, so the output is
	// allocated once and only after the limit check.
	total := 0
	for rest := data[headerLen:]; len(rest) > 0; {
		if len(rest) < 4 {
			return nil, errors.New("snappy: truncated xerial block length")
		}
		size := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(size) > uint64(len(rest)) {
			return nil, fmt.Errorf("snappy: xerial block of %d bytes exceeds the %d remaining", size, len(rest))
		}
		n, err := snappy.DecodedLen(rest[:size])
		if err != nil {
			return nil, fmt.Errorf("snappy: %w", err)
		}
		if n > limit-total {
			return nil, tooLarge("snappy", limit)
		}
		total += n
		rest = rest[size:]
	}
	out := grow(dst, total)
	pos := 0
	for rest := data[headerLen:]; len(rest) > 0; {
		size := binary.BigEndian.Uint32(rest)
		block := rest[4 : 4+size]
		rest = rest[4+size:]
		n, _ := snappy.DecodedLen(block)
		if _, err := snappy.Decode(out[pos:pos+n], block); err != nil {
			return nil, fmt.Errorf("snappy: %w", err)
		}
		pos += n
	}
	return out, nil
}

// grow returns dst resized to n bytes, reallocated only when its capacity is short.
func grow(dst []byte, n int) []byte {
	if cap(dst) >= n {
		return dst[:n]
	}
	return make([]byte, n)
}
