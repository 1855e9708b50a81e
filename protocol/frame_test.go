package protocol

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
)

// allocBytes reports the bytes f allocates per call (averaged over a few calls).
func allocBytes(f func()) uint64 { return allocBytesRuns(4, f) }

// allocBytesRuns is allocBytes over the given number of measured calls (after one warm-up).
func allocBytesRuns(runs uint64, f func()) uint64 {
	f()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / runs
}

func TestReadFrame(t *testing.T) {
	var stream []byte
	stream = append(stream, 0, 0, 0, 3, 'a', 'b', 'c', 0, 0, 0, 0, 0, 0, 0, 1, 'z')
	r := bytes.NewReader(stream)
	buf := make([]byte, 0, 16)
	f, err := ReadFrame(r, 100, buf)
	if err != nil || string(f) != "abc" {
		t.Fatalf("frame 1 = %q, %v", f, err)
	}
	if &f[0] != &buf[:1][0] {
		t.Fatal("frame did not reuse buf")
	}
	if f, err = ReadFrame(r, 100, buf); err != nil || len(f) != 0 {
		t.Fatalf("empty frame = %q, %v", f, err)
	}
	if f, err = ReadFrame(r, 100, nil); err != nil || string(f) != "z" {
		t.Fatalf("frame 3 = %q, %v", f, err)
	}
	if _, err = ReadFrame(r, 100, buf); err != io.EOF {
		t.Fatalf("at end: %v, want io.EOF", err)
	}
}

func TestReadFrameErrors(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		is   error
	}{
		{"negative", []byte{0xff, 0xff, 0xff, 0xff}, ErrNegativeFrameSize},
		{"min int32", []byte{0x80, 0, 0, 0}, ErrNegativeFrameSize},
		{"too large", []byte{0, 0, 0, 101}, ErrFrameTooLarge},
		{"truncated prefix", []byte{0, 0}, io.ErrUnexpectedEOF},
		{"truncated body", []byte{0, 0, 0, 5, 1, 2}, io.ErrUnexpectedEOF},
	}
	for _, c := range cases {
		_, err := ReadFrame(bytes.NewReader(c.in), 100, nil)
		if !errors.Is(err, c.is) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.is)
		}
	}
	// A huge claimed size is refused before any allocation of that size.
	n := allocBytes(func() {
		_, _ = ReadFrame(bytes.NewReader([]byte{0x7f, 0xff, 0xff, 0xff}), DefaultMaxFrameSize, make([]byte, 0, 8))
	})
	if n > 4096 {
		t.Fatalf("%d bytes allocated for a refused frame", n)
	}
	// A frame claiming far more bytes than the stream holds allocates a bounded chunk, not
	// the claimed size.
	n = allocBytes(func() {
		_, _ = ReadFrame(bytes.NewReader([]byte{0x05, 0xf5, 0xe1, 0x00, 1, 2, 3}), DefaultMaxFrameSize, nil)
	})
	if n > frameAllocChunk+4096 {
		t.Fatalf("%d bytes allocated for a truncated 100 MB frame", n)
	}
}

func TestReadFrameLarge(t *testing.T) {
	// Frames above the allocation chunk are read completely and intact, whatever the
	// reader's chunking.
	for _, size := range []int{frameAllocChunk, frameAllocChunk + 1, 3*frameAllocChunk + 17} {
		body := make([]byte, size)
		for i := range body {
			body[i] = byte(i * 7)
		}
		stream := append([]byte{byte(size >> 24), byte(size >> 16), byte(size >> 8), byte(size)}, body...)
		got, err := ReadFrame(io.MultiReader(bytes.NewReader(stream[:1000]), bytes.NewReader(stream[1000:])), DefaultMaxFrameSize, nil)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("size %d: %v, equal %v", size, err, bytes.Equal(got, body))
		}
		_, err = ReadFrame(bytes.NewReader(stream[:len(stream)-1]), DefaultMaxFrameSize, nil)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("size %d truncated: %v", size, err)
		}
	}
}
