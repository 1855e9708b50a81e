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

var errDecompressedTooLarge = fmt.Errorf("decompressed records exceed %d bytes", MaxDecompressedBatchBytes)

// decompress returns the records region uncompressed (data itself when the codec is none).
func decompress(codec int8, data []byte) ([]byte, error) {
	switch codec {
	case CompressionNone:
		return data, nil
	case CompressionGzip:
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return readLimited("gzip", zr)
	case CompressionSnappy:
		return decodeSnappy(data)
	case CompressionLZ4:
		return readLimited("lz4", lz4.NewReader(bytes.NewReader(data)))
	case CompressionZstd:
		dec, err := zstdDecoder()
		if err != nil {
			return nil, err
		}
		out, err := dec.DecodeAll(data, nil)
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unknown compression codec %d", codec)
	}
}

func readLimited(name string, r io.Reader) ([]byte, error) {
	out, err := io.ReadAll(io.LimitReader(r, MaxDecompressedBatchBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out) > MaxDecompressedBatchBytes {
		return nil, fmt.Errorf("%s: %w", name, errDecompressedTooLarge)
	}
	return out, nil
}

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
func decodeSnappy(data []byte) ([]byte, error) {
	if !bytes.HasPrefix(data, xerialHeader) {
		n, err := snappy.DecodedLen(data)
		if err != nil {
			return nil, fmt.Errorf("snappy: %w", err)
		}
		if n > MaxDecompressedBatchBytes {
			return nil, fmt.Errorf("snappy: %w", errDecompressedTooLarge)
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
		if n > MaxDecompressedBatchBytes-total {
			return nil, fmt.Errorf("snappy: %w", errDecompressedTooLarge)
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
