package protocol

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestHugeArrayCountsDoNotAllocate: a request claiming an enormous array count is refused
// without allocating for the claimed count, and the worst case kmsg can be driven to (an
// array count bounded only by the remaining bytes) stays proportional to the frame.
func TestHugeArrayCountsDoNotAllocate(t *testing.T) {
	id := "c"
	// Fetch v4: ReplicaID, MaxWait, MinBytes, MaxBytes, IsolationLevel, then int32 topic count.
	tiny := AppendRequestHeader(nil, int16(kmsg.Fetch), 4, 1, &id)
	tiny = append(tiny, make([]byte, 17)...)
	tiny = binary.BigEndian.AppendUint32(tiny, 0x7fffffff)
	// Fetch v13 (flexible): uvarint topic count.
	tinyFlex := AppendRequestHeader(nil, int16(kmsg.Fetch), 13, 1, &id)
	tinyFlex = append(tinyFlex, make([]byte, 25)...)
	tinyFlex = binary.AppendUvarint(tinyFlex, 0xffffffff)
	for name, f := range map[string][]byte{"fetch v4": tiny, "fetch v13": tinyFlex} {
		var err error
		n := allocBytes(func() { _, _, err = testApis.ParseRequest(f) })
		if err == nil {
			t.Fatalf("%s: huge count accepted", name)
		}
		if n > 4096 {
			t.Fatalf("%s: %d bytes allocated for a %d-byte frame", name, n, len(f))
		}
	}

	// The worst case: a count of half the remaining bytes in a 1 MiB body.
	big := AppendRequestHeader(nil, int16(kmsg.Fetch), 4, 1, &id)
	hdrLen := len(big)
	big = append(big, make([]byte, 17)...)
	big = binary.BigEndian.AppendUint32(big, uint32((MaxRequestBodySize-21)/2))
	big = append(big, make([]byte, hdrLen+MaxRequestBodySize-len(big))...)
	n := allocBytesRuns(1, func() { _, _, _ = testApis.ParseRequest(big) })
	// ~32x in normal builds; the race detector's builds do not fuse kmsg's
	// append(make(...)) and allocate twice.
	if n > 72*MaxRequestBodySize {
		t.Fatalf("%d bytes allocated for a %d-byte frame", n, len(big))
	}
	// One byte more is refused before kmsg sees it.
	big = append(big, 0)
	var err error
	n = allocBytes(func() { _, _, err = testApis.ParseRequest(big) })
	if !errors.Is(err, ErrRequestTooLarge) || n > 4096 {
		t.Fatalf("oversized body: %v, %d bytes allocated", err, n)
	}
}

// TestHugeRecordCountDoesNotAllocate: a batch whose CRC and counts agree but whose record
// count could never fit in its bytes is refused by DecodeBatch and DecodeValues before
// either sizes a slice by the count.
func TestHugeRecordCountDoesNotAllocate(t *testing.T) {
	b := AppendBatch(nil, Batch{BaseOffset: 0, PartitionLeaderEpoch: 1, Records: []Record{{Value: []byte("v")}}})
	const count = 1 << 30
	binary.BigEndian.PutUint32(b[23:], count-1) // LastOffsetDelta
	binary.BigEndian.PutUint32(b[57:], count)   // RecordCount
	binary.BigEndian.PutUint32(b[17:], CRC32C(b[21:]))
	if _, err := CheckBatch(b); err != nil {
		t.Fatalf("the crafted batch should pass the header and CRC checks: %v", err)
	}
	for name, decode := range map[string]func() error{
		"DecodeBatch":  func() error { _, _, err := DecodeBatch(b); return err },
		"DecodeValues": func() error { _, _, _, err := DecodeValues(b, nil); return err },
	} {
		var err error
		n := allocBytes(func() { err = decode() })
		if !errors.Is(err, ErrCorruptBatch) {
			t.Fatalf("%s: err = %v, want ErrCorruptBatch", name, err)
		}
		if n > 4096 {
			t.Fatalf("%s: %d bytes allocated for a %d-byte batch", name, n, len(b))
		}
	}
}
