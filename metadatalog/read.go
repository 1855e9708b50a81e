package metadatalog

import (
	"fmt"
	"sort"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

// Read implements raft.Log. Near the log end the result is a slice of the
// in-memory tail (memtail.go); otherwise a fresh buffer holding whole
// batches of one segment, read with one pread (a second when the first
// batch is larger than maxBytes). Either way its bytes never change, so the
// caller may keep it. At least one whole batch is returned when from < end
// offset.
func (l *Log) Read(from int64, maxBytes int) ([]byte, error) {
	if l.closed {
		return nil, errClosed
	}
	end := l.endOffset()
	if from < l.startOffset || from > end {
		return nil, fmt.Errorf("%w: read at %d, log holds [%d, %d)", ErrOffsetOutOfRange, from, l.startOffset, end)
	}
	if from == end {
		return nil, nil
	}
	s := l.segmentFor(from)
	t, ok := l.tailFor(s, from)
	if ok {
		if chunk := l.mem.chunk(t.memGen); chunk != nil {
			return wholeBatches(chunk[t.mem:len(chunk):len(chunk)], maxBytes), nil
		}
	}
	pos := t.pos
	if !ok {
		p, _, err := s.locate(from, l.scratch[:])
		if err != nil {
			return nil, fmt.Errorf("metadatalog: read at %d: %w", from, err)
		}
		pos = p
	}
	rem := s.size - pos
	buf, err := s.readAt(pos, min(int64(max(maxBytes, miniHeaderSize)), rem))
	if err != nil {
		return nil, fmt.Errorf("metadatalog: read at %d: %w", from, err)
	}
	// The first batch is returned whole, even when larger than maxBytes.
	if first := int64(parseMiniSize(buf)); first < protocol.BatchHeaderSize || first > rem {
		return nil, fmt.Errorf("metadatalog: read at %d: %s: invalid batch header at position %d (verified at open)", from, s.path, pos)
	} else if first > int64(len(buf)) {
		if buf, err = s.readAt(pos, first); err != nil {
			return nil, fmt.Errorf("metadatalog: read at %d: %w", from, err)
		}
	}
	return wholeBatches(buf, len(buf)), nil
}

// wholeBatches cuts buf, which starts with a whole batch, to the whole
// batches within maxBytes (always the first).
func wholeBatches(buf []byte, maxBytes int) []byte {
	cut := 0
	for cut+miniHeaderSize <= len(buf) {
		h := parseMini(buf[cut:])
		if h.size < protocol.BatchHeaderSize || cut+h.size > len(buf) || (cut > 0 && cut+h.size > maxBytes) {
			break
		}
		cut += h.size
	}
	return buf[:cut:cut]
}

// readAt reads n bytes at pos into a fresh buffer.
func (s *segment) readAt(pos, n int64) ([]byte, error) {
	buf := make([]byte, n)
	if _, err := s.f.ReadAt(buf, pos); err != nil {
		return nil, fmt.Errorf("%s position %d: %w", s.path, pos, err)
	}
	return buf, nil
}

// tailBatches is how many of the newest batches Log.tail remembers: the
// readers of a busy log are rounds, not batches, behind its end.
const tailBatches = 64

// batchPos is where batch [base, next) starts in seg, and in the
// in-memory tail when memGen is not 0.
type batchPos struct {
	seg        *segment
	base, next int64
	pos        int64
	memGen     uint64
	mem        int
}

// noteTail remembers an appended batch, replacing the oldest.
func (l *Log) noteTail(b batchPos) {
	l.tail[l.tailNext] = b
	l.tailNext = (l.tailNext + 1) % tailBatches
}

// tailFor returns the remembered batch of s holding offset.
func (l *Log) tailFor(s *segment, offset int64) (batchPos, bool) {
	for i := range l.tail {
		if b := &l.tail[i]; b.seg == s && b.base <= offset && offset < b.next {
			return *b, true
		}
	}
	return batchPos{}, false
}

// forgetTail drops the remembered batches of s, or all when s is nil
// (truncation, which also drops the in-memory tail).
func (l *Log) forgetTail(s *segment) {
	if s == nil {
		l.mem.reset()
	}
	for i, b := range l.tail {
		if s == nil || b.seg == s {
			l.tail[i] = batchPos{}
		}
	}
}

func parseMiniSize(b []byte) int {
	return int(int32(uint32(b[8])<<24|uint32(b[9])<<16|uint32(b[10])<<8|uint32(b[11]))) + 12
}

// segmentFor returns the segment holding offset (start <= offset < end).
func (l *Log) segmentFor(offset int64) *segment {
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > offset }) - 1
	if i < 0 {
		i = 0
	}
	// Skip empty segments (a segment with base == next holds nothing).
	for i < len(l.segs)-1 && l.segs[i].next <= offset {
		i++
	}
	return l.segs[i]
}

// EndOffsetForEpoch implements raft.Log: for the largest epoch e <= epoch
// in the epoch cache, the start offset of the next epoch, or the log end
// offset when e is the latest (epochs above the latest also get the log end
// and the latest epoch, as KafkaMetadataLog answers). Below the first cached
// epoch, or with an empty cache, only a snapshot at the log start with an
// epoch <= epoch is known: its id is returned; otherwise ok is false (Kafka
// answers (epoch, log start) there, which the raft caller derives itself).
func (l *Log) EndOffsetForEpoch(epoch int32) (raft.OffsetAndEpoch, bool) {
	if epoch < 0 {
		return raft.OffsetAndEpoch{}, false
	}
	first, have := raft.OffsetAndEpoch{}, len(l.epochs.entries) > 0
	if have {
		e := l.epochs.entries[0]
		first = raft.OffsetAndEpoch{Offset: e.StartOffset, Epoch: e.Epoch}
	}
	if !have || epoch < first.Epoch {
		snap, ok := l.EarliestSnapshot()
		if ok && l.startOffset > 0 && snap.Offset == l.startOffset && snap.Epoch <= epoch && (!have || snap.Epoch < first.Epoch) {
			return snap, true
		}
		return raft.OffsetAndEpoch{}, false
	}
	if oe, ok := l.epochs.endOffsetFor(epoch, l.endOffset()); ok {
		return oe, true
	}
	// Above the latest epoch.
	return l.EndOffset(), true
}

// Batches calls fn with every batch from offset from (a batch containing it)
// to the end, in order, as raw bytes (valid during the call). For tools and
// tests.
func (l *Log) Batches(from int64, fn func(batch []byte) error) error {
	for from < l.endOffset() {
		data, err := l.Read(from, 1<<20)
		if err != nil {
			return err
		}
		for len(data) > 0 {
			h := parseMini(data)
			if err := fn(data[:h.size]); err != nil {
				return err
			}
			from = h.next
			data = data[h.size:]
		}
	}
	return nil
}
