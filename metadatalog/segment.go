package metadatalog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/vfs"
)

// indexInterval is the spacing, in bytes, of the in-memory offset index
// (Kafka's index.interval.bytes default).
const indexInterval = 4096

// indexEntry maps a batch base offset to its byte position in a segment.
type indexEntry struct {
	offset int64
	pos    int64
}

// segment is one <base offset>.log file.
// Invariants: size is the end of the last valid batch; next is the offset
// after the last batch (base when empty); index entries ascend and point at
// batch starts below size.
type segment struct {
	base  int64
	path  string
	f     vfs.File
	size  int64 // bytes
	next  int64
	index []indexEntry
	// lastIndexed is the position of the last index entry (-indexInterval
	// when none).
	lastIndexed int64
	// firstMaxTS is the first batch's MaxTimestamp (ms), -1 when empty: the
	// segment.ms roll clock, as Kafka's rollingBasedTimestamp.
	firstMaxTS int64
	// dirty means bytes were written since the last fsync.
	dirty bool
}

func segmentName(base int64) string { return fmt.Sprintf("%020d.log", base) }

// parseBaseName parses "<20 digits><suffix>".
func parseBaseName(name, suffix string) (int64, bool) {
	if !strings.HasSuffix(name, suffix) || len(name) != 20+len(suffix) {
		return 0, false
	}
	n, err := strconv.ParseInt(name[:20], 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

func newSegment(dir string, base int64, f vfs.File) *segment {
	return &segment{base: base, path: filepath.Join(dir, segmentName(base)), f: f, next: base, lastIndexed: -indexInterval, firstMaxTS: -1}
}

// noteBatch records a batch just appended (or recovered) at pos.
func (s *segment) noteBatch(pos int64, base, next int64, size int, maxTS int64) {
	if pos-s.lastIndexed >= indexInterval {
		s.index = append(s.index, indexEntry{base, pos})
		s.lastIndexed = pos
	}
	if s.firstMaxTS < 0 && pos == 0 {
		s.firstMaxTS = maxTS
	}
	s.size = pos + int64(size)
	s.next = next
}

// lookup returns the index entry at or before offset (the segment start when
// none).
func (s *segment) lookup(offset int64) indexEntry {
	lo, hi := 0, len(s.index)
	for lo < hi {
		m := (lo + hi) / 2
		if s.index[m].offset <= offset {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return indexEntry{s.base, 0}
	}
	return s.index[lo-1]
}

// truncateIndex drops index entries at or after pos.
func (s *segment) truncateIndex(pos int64) {
	n := len(s.index)
	for n > 0 && s.index[n-1].pos >= pos {
		n--
	}
	s.index = s.index[:n]
	if n > 0 {
		s.lastIndexed = s.index[n-1].pos
	} else {
		s.lastIndexed = -indexInterval
	}
	if pos == 0 {
		s.firstMaxTS = -1
	}
}

// miniHeader is the part of a batch header the read path needs.
type miniHeader struct {
	base int64
	size int
	next int64
}

const miniHeaderSize = 27 // through LastOffsetDelta

func parseMini(b []byte) miniHeader {
	base := int64(binary.BigEndian.Uint64(b))
	length := int32(binary.BigEndian.Uint32(b[8:]))
	delta := int32(binary.BigEndian.Uint32(b[23:]))
	return miniHeader{base: base, size: int(length) + 12, next: base + int64(delta) + 1}
}

// locate finds the batch containing offset, walking headers from the index
// entry at or before it. offset must be in [s.base, s.next).
func (s *segment) locate(offset int64, scratch []byte) (pos int64, h miniHeader, err error) {
	e := s.lookup(offset)
	pos = e.pos
	for pos < s.size {
		if _, err := s.f.ReadAt(scratch[:miniHeaderSize], pos); err != nil {
			return 0, h, fmt.Errorf("read %s at position %d: %w", s.path, pos, err)
		}
		h = parseMini(scratch)
		if h.size < protocol.BatchHeaderSize || pos+int64(h.size) > s.size {
			return 0, h, fmt.Errorf("%s: invalid batch header at position %d (verified at open)", s.path, pos)
		}
		if h.next > offset {
			return pos, h, nil
		}
		pos += int64(h.size)
	}
	return 0, h, fmt.Errorf("%s: offset %d not found below position %d", s.path, offset, s.size)
}

// scanWindow reads a file sequentially through a fixed buffer so recovery
// never allocates more than the window, whatever the length fields say.
type scanWindow struct {
	r     io.ReaderAt
	size  int64
	buf   []byte
	start int64 // file position of buf[0]
	n     int   // valid bytes in buf
}

// get returns file bytes [pos, pos+n); n <= len(buf). The slice is valid
// until the next call. io.ErrUnexpectedEOF when the file ends first.
func (w *scanWindow) get(pos int64, n int) ([]byte, error) {
	if pos+int64(n) > w.size {
		return nil, io.ErrUnexpectedEOF
	}
	if pos >= w.start && pos+int64(n) <= w.start+int64(w.n) {
		return w.buf[pos-w.start : pos-w.start+int64(n)], nil
	}
	want := len(w.buf)
	if rem := w.size - pos; rem < int64(want) {
		want = int(rem)
	}
	m, err := w.r.ReadAt(w.buf[:want], pos)
	if m < want {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		w.n = 0
		return nil, err
	}
	w.start, w.n = pos, want
	return w.buf[:n], nil
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// batchProblem describes why the batch at a position is not valid.
type batchProblem struct {
	torn bool // the file ends inside the batch
	msg  string
}

// checkBatchAt validates the batch at pos: header fields, length within the
// file, CRC-32C (streamed through the window), base offset == expect (when
// expect >= 0), epoch >= minEpoch. ioErr is a read failure (not corruption).
func checkBatchAt(w *scanWindow, pos, expect int64, minEpoch int32) (h protocol.BatchHeader, prob *batchProblem, ioErr error) {
	hb, err := w.get(pos, protocol.BatchHeaderSize)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return h, &batchProblem{torn: true, msg: fmt.Sprintf("%d bytes left, less than a batch header", w.size-pos)}, nil
		}
		return h, nil, err
	}
	h, err = protocol.ParseBatchHeader(hb)
	if err != nil {
		return h, &batchProblem{msg: err.Error()}, nil
	}
	if pos+int64(h.Size()) > w.size {
		return h, &batchProblem{torn: true, msg: fmt.Sprintf("batch of %d bytes runs past the end of the file (%d bytes left)", h.Size(), w.size-pos)}, nil
	}
	if h.LastOffsetDelta < 0 {
		return h, &batchProblem{msg: fmt.Sprintf("negative last offset delta %d", h.LastOffsetDelta)}, nil
	}
	crc := uint32(0)
	for p, end := pos+21, pos+int64(h.Size()); p < end; {
		n := end - p
		if n > int64(len(w.buf)) {
			n = int64(len(w.buf))
		}
		b, err := w.get(p, int(n))
		if err != nil {
			return h, nil, err
		}
		crc = crc32.Update(crc, crcTable, b)
		p += n
	}
	if crc != h.CRC {
		return h, &batchProblem{msg: fmt.Sprintf("CRC 0x%08x, computed 0x%08x", h.CRC, crc)}, nil
	}
	if expect >= 0 && h.BaseOffset != expect {
		return h, &batchProblem{msg: fmt.Sprintf("base offset %d, expected %d", h.BaseOffset, expect)}, nil
	}
	if h.LastOffset() < h.BaseOffset {
		return h, &batchProblem{msg: "last offset overflows"}, nil
	}
	if h.PartitionLeaderEpoch < minEpoch {
		return h, &batchProblem{msg: fmt.Sprintf("epoch %d below the previous batch's epoch %d", h.PartitionLeaderEpoch, minEpoch)}, nil
	}
	return h, nil, nil
}

// validBatchAfter reports whether a valid batch with base offset >= expect
// starts anywhere after pos: then the bad bytes at pos are not a torn tail
// but corruption with good data behind it.
func validBatchAfter(w *scanWindow, pos, expect int64) (int64, bool, error) {
	for p := pos + 1; p+protocol.BatchHeaderSize <= w.size; p++ {
		b, err := w.get(p, protocol.BatchHeaderSize)
		if err != nil {
			return 0, false, err
		}
		if b[16] != 2 {
			continue
		}
		base := int64(binary.BigEndian.Uint64(b))
		if base < expect || base-expect > w.size {
			continue
		}
		_, prob, err := checkBatchAt(w, p, -1, -1<<31)
		if err != nil {
			return 0, false, err
		}
		if prob == nil {
			return p, true, nil
		}
	}
	return 0, false, nil
}
