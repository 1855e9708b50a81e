package metadatalog

// memChunkBytes is the size of the chunks Append copies the newest batches
// into. Followers fetch, and the listener reads, a round or two behind the
// log end: at 135 MB/s a round of a few ms is well inside two chunks.
const memChunkBytes = 1 << 20

// memTail holds a copy of the newest appended bytes, so that reads near the
// log end are served without a syscall and without a fresh buffer per read.
//
// Chunks are append-only: bytes below a chunk's length are never written
// again (a truncation drops both chunks instead of cutting one), so a slice
// handed to a reader stays valid and unchanged for as long as it is kept.
type memTail struct {
	cur, prev []byte // prev is the chunk before cur, full or retired
	gen       uint64 // cur's generation; prev's is gen-1; 0 is never valid
}

// add copies data (whole batches, just written to the segment) into the
// current chunk, starting a new one when it does not fit, and returns
// where it landed. ok is false for data larger than a chunk: it is not
// kept, and the next add starts a new chunk so the tail stays contiguous.
func (m *memTail) add(data []byte) (gen uint64, pos int, ok bool) {
	if len(data) > memChunkBytes {
		m.retire()
		return 0, 0, false
	}
	if m.cur == nil || len(m.cur)+len(data) > cap(m.cur) {
		m.retire()
		m.cur = make([]byte, 0, memChunkBytes)
	}
	pos = len(m.cur)
	m.cur = append(m.cur, data...)
	return m.gen, pos, true
}

// retire makes the current chunk the previous one.
func (m *memTail) retire() {
	m.prev, m.cur = m.cur, nil
	m.gen++
}

// chunk returns the chunk of generation gen (its bytes so far), or nil.
func (m *memTail) chunk(gen uint64) []byte {
	switch {
	case gen == 0:
		return nil
	case gen == m.gen:
		return m.cur
	case gen == m.gen-1:
		return m.prev
	}
	return nil
}

// reset forgets both chunks (truncation): a cut-off batch is never served,
// and later appends never write over bytes a reader may hold.
func (m *memTail) reset() {
	m.cur, m.prev = nil, nil
	m.gen += 2
}
