package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxFrameSize is Kafka's socket.request.max.bytes default.
const DefaultMaxFrameSize int32 = 104857600

var (
	// ErrFrameTooLarge is returned when a frame's size prefix exceeds the limit.
	ErrFrameTooLarge = errors.New("protocol: frame too large")
	// ErrNegativeFrameSize is returned when a frame's size prefix is negative.
	ErrNegativeFrameSize = errors.New("protocol: negative frame size")
)

// ReadFrame reads one 4-byte-size-prefixed frame from r. It validates the size before
// allocating (0 <= size <= maxSize), reuses buf when large enough, and returns the frame
// body without its size prefix (header + body).
//
// A clean end of stream before the first size byte returns io.EOF; a stream that ends
// inside the prefix or the body returns io.ErrUnexpectedEOF (wrapped).
//
// The returned slice aliases buf when buf was large enough: decoded messages keep
// references into it (kmsg byte fields are not copied), so buf must not be reused while
// they are live.
func ReadFrame(r io.Reader, maxSize int32, buf []byte) ([]byte, error) {
	// The size prefix is read into buf when possible so that the common path does not
	// allocate a 4-byte array that escapes through the io.Reader interface.
	var prefix []byte
	if cap(buf) >= 4 {
		prefix = buf[:4]
	} else {
		prefix = make([]byte, 4)
	}
	if _, err := io.ReadFull(r, prefix); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("protocol: read frame size: %w", err)
	}
	size, err := FrameSize(prefix, maxSize)
	if err != nil {
		return nil, err
	}
	if cap(buf) >= int(size) {
		frame := buf[:size]
		if _, err := io.ReadFull(r, frame); err != nil {
			return nil, frameBodyError(size, err)
		}
		return frame, nil
	}
	if size <= frameAllocChunk {
		frame := make([]byte, size)
		if _, err := io.ReadFull(r, frame); err != nil {
			return nil, frameBodyError(size, err)
		}
		return frame, nil
	}
	// A large frame is allocated as its bytes arrive (doubling from frameAllocChunk), so a
	// peer that announces 100 MB and sends 4 bytes costs a chunk, not the announced size.
	frame := make([]byte, frameAllocChunk)
	read := 0
	for {
		n, err := io.ReadFull(r, frame[read:])
		read += n
		if err != nil {
			return nil, frameBodyError(size, err)
		}
		if read == int(size) {
			return frame, nil
		}
		grown := make([]byte, min(2*len(frame), int(size)))
		copy(grown, frame[:read])
		frame = grown
	}
}

// frameAllocChunk is the largest frame body allocated before any of its bytes arrived.
const frameAllocChunk = 1 << 20

func frameBodyError(size int32, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("protocol: read frame body of %d bytes: %w", size, err)
}

// FrameSize decodes and validates a 4-byte big-endian size prefix against maxSize.
func FrameSize(prefix []byte, maxSize int32) (int32, error) {
	if len(prefix) < 4 {
		return 0, fmt.Errorf("protocol: frame size prefix needs 4 bytes, have %d", len(prefix))
	}
	size := int32(binary.BigEndian.Uint32(prefix))
	if size < 0 {
		return 0, fmt.Errorf("%w: %d", ErrNegativeFrameSize, size)
	}
	if size > maxSize {
		return 0, fmt.Errorf("%w: %d bytes exceeds the maximum of %d", ErrFrameTooLarge, size, maxSize)
	}
	return size, nil
}
