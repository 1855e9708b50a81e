package metadatalog

import (
	"fmt"
	"sort"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

// Read implements raft.Log. The result is a fresh buffer holding whole
// batches of one segment, read with one pread (no re-encoding); the caller
// may keep it. At least one whole batch is returned when from < end offset.
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
	var pos int64
	var first int
	if hs := l.readHint; hs.seg == s && hs.offset == from && hs.pos < s.size {
		pos = hs.pos
		if _, err := s.f.ReadAt(l.scratch[:12], pos); err != nil {
			return nil, fmt.Errorf("metadatalog: read at %d: %s: %w", from, s.path, err)
		}
		first = parseMiniSize(l.scratch[:12])
	} else {
		p, h, err := s.locate(from, l.scratch[:])
		if err != nil {
			return nil, fmt.Errorf("metadatalog: read at %d: %w", from, err)
		}
		pos, first = p, h.size
	}
	n := int64(maxBytes)
	if n < int64(first) {
		n = int64(first)
	}
	if rem := s.size - pos; n > rem {
		n = rem
	}
	buf := make([]byte, n)
	if _, err := s.f.ReadAt(buf, pos); err != nil {
		return nil, fmt.Errorf("metadatalog: read at %d: %s position %d: %w", from, s.path, pos, err)
	}
	// Keep whole batches only.
	cut, next := 0, from
	for cut+miniHeaderSize <= len(buf) {
		h := parseMini(buf[cut:])
		if h.size < protocol.BatchHeaderSize || cut+h.size > len(buf) {
			break
		}
		cut += h.size
		next = h.next
	}
	if cut == 0 {
		return nil, fmt.Errorf("metadatalog: read at %d: %s position %d: no whole batch (verified at open)", from, s.path, pos)
	}
	l.readHint.seg, l.readHint.offset, l.readHint.pos = s, next, pos+int64(cut)
	return buf[:cut], nil
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
