package hostile

import (
	"encoding/binary"
	"testing"

	"github.com/kraftd/kraftd/protocol"
)

// TestPoisonedBatchesHaveValidCRCs: a malformed batch must fail for its
// fields, never for its checksum, and the first batch must be valid.
func TestPoisonedBatchesHaveValidCRCs(t *testing.T) {
	for _, kind := range []Malformation{NegativeDelta, Oversized, EmptyWithDelta, ZipBomb} {
		b, err := poisonedBatches(100, 7, kind, 2<<20)
		if err != nil {
			t.Fatalf("%v: %v", kind, err)
		}
		h, err := protocol.CheckBatch(b)
		if err != nil {
			t.Fatalf("%v: first batch: %v", kind, err)
		}
		next := b[h.Size():]
		if got, want := binary.BigEndian.Uint32(next[crcAt:]), protocol.CRC32C(next[attributesAt:]); got != want {
			t.Errorf("%v: CRC %08x, want %08x", kind, got, want)
		}
		nh, err := protocol.ParseBatchHeader(next)
		if err != nil {
			t.Fatalf("%v: %v", kind, err)
		}
		if nh.Size() != len(next) || nh.BaseOffset != 101 || nh.PartitionLeaderEpoch != 7 {
			t.Errorf("%v: header %+v for %d bytes", kind, nh, len(next))
		}
		switch kind {
		case NegativeDelta:
			if nh.LastOffsetDelta != -5 {
				t.Errorf("last offset delta %d", nh.LastOffsetDelta)
			}
		case Oversized:
			if len(next) <= 2<<20 {
				t.Errorf("oversized batch of %d bytes", len(next))
			}
		case EmptyWithDelta:
			if nh.RecordCount != 0 || nh.LastOffsetDelta != 10 {
				t.Errorf("record count %d, last offset delta %d", nh.RecordCount, nh.LastOffsetDelta)
			}
		case ZipBomb:
			if nh.Compression() != protocol.CompressionGzip || len(next) > 1<<20 {
				t.Errorf("compression %d, %d bytes", nh.Compression(), len(next))
			}
			if _, _, err := protocol.DecodeBatch(next); err == nil {
				t.Error("the gzip bomb decodes")
			}
		}
	}
}
