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

// decompress returns the records region uncompressed (data itself when the codec is none).
func decompress(codec int8, data []byte) ([]byte, error) {
	return decompressLimit(codec, data, MaxDecompressedBatchBytes)
}

func tooLarge(name string, limit int) error {
	return fmt.Errorf("%s: decompressed records exceed %d bytes", name, limit)
}

// decompressLimit decompresses with a bound on the output size (at most
// MaxDecompressedBatchBytes, the zstd decoder's own bound).
func decompressLimit(codec int8, data []byte, limit int) ([]byte, error) {
	switch codec {
	case CompressionNone:
		return data, nil
	case CompressionGzip:
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return readLimited("gzip", zr, limit)
	case CompressionSnappy:
		return decodeSnappy(data, limit)
	case CompressionLZ4:
		zr := lz4Readers.Get().(*lz4.Reader)
		zr.Reset(bytes.NewReader(data))
		out, err := readLimited("lz4", zr, limit)
		zr.Reset(nil)
		lz4Readers.Put(zr)
		return out, err
	case CompressionZstd:
		dec, err := zstdDecoder()
		if err != nil {
			return nil, err
		}
		out, err := dec.DecodeAll(data, nil)
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		if len(out) > limit {
			return nil, tooLarge("zstd", limit)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unknown compression codec %d", codec)
	}
}

func readLimited(name string, r io.Reader, limit int) ([]byte, error) {
	out, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out) > limit {
		return nil, tooLarge(name, limit)
	}
	return out, nil
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
func decodeSnappy(data []byte, limit int) ([]byte, error) {
	if !bytes.HasPrefix(data, xerialHeader) {
		n, err := snappy.DecodedLen(data)
		if err != nil {
			return nil, fmt.Errorf("snappy: %w", err)
		}
		if n > limit {
			return nil, tooLarge("snappy", limit)
		}
		out, err := snappy.Decode(make([]byte, n), data)
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
	out := make([]byte, total)
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
