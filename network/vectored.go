package network

import (
	"bytes"
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
)

// vectoredMinRecords is the record-bytes size from which a Fetch response is written
// with its records as a separate buffer (writev) instead of being copied into the write
// buffer. Below it, one copy is cheaper than the extra encoding work.
const vectoredMinRecords = 64 << 10

// vectoredFetch enables the vectored path (off only in benchmarks, for comparison).
var vectoredFetch = true

// splitFetchResponse encodes a Fetch response frame as three pieces to be written back
// to back: head (size prefix, header, body up to and including the records length),
// the records slice itself (not copied), and tail (the rest of the body). It applies
// when exactly one partition carries at least vectoredMinRecords bytes of records, as a
// raft Fetch response does; ok is false otherwise and the caller encodes normally.
//
// kmsg has no hook to write a bytes field elsewhere, so the response is encoded twice
// with tiny stand-in records (empty and one byte): the bytes before and after the stand-in
// are the head and tail. Both encodings are checked against that shape, so a layout this
// does not expect falls back to the normal path rather than producing a wrong frame.
// The records field is the last regular field of a partition and nothing else in the body
// depends on its length, which is what makes the splice valid.
func splitFetchResponse(corr int32, resp *kmsg.FetchResponse) (head, records, tail []byte, ok bool) {
	var target *[]byte
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			p := &resp.Topics[i].Partitions[j]
			if len(p.RecordBatches) >= vectoredMinRecords {
				if target != nil {
					return nil, nil, nil, false
				}
				target = &p.RecordBatches
			}
		}
	}
	if target == nil {
		return nil, nil, nil, false
	}
	records = *target
	defer func() { *target = records }()

	const stand = 0xab
	*target = []byte{}
	a := resp.AppendTo(nil)
	*target = []byte{stand}
	b := resp.AppendTo(nil)
	flexible := resp.IsFlexible()
	m0, m1 := recordsLength(nil, 0, flexible), recordsLength(nil, 1, flexible)
	// a = P + m0 + S and b = P + m1 + stand + S: the first difference is inside the
	// length, after the bytes m0 and m1 share.
	shared := 0
	for shared < len(m0) && m0[shared] == m1[shared] {
		shared++
	}
	d := 0
	for d < len(a) && d < len(b) && a[d] == b[d] {
		d++
	}
	p := d - shared
	if p < 0 || p+len(m0) > len(a) || p+len(m1)+1 > len(b) {
		return nil, nil, nil, false
	}
	s := a[p+len(m0):]
	if !bytes.Equal(a[p:p+len(m0)], m0) || !bytes.Equal(b[:p], a[:p]) || !bytes.Equal(b[p:p+len(m1)], m1) ||
		b[p+len(m1)] != stand || !bytes.Equal(b[p+len(m1)+1:], s) {
		return nil, nil, nil, false
	}
	head = append(head, 0, 0, 0, 0)
	head = protocol.AppendResponseHeader(head, resp.Key(), resp.GetVersion(), corr)
	head = append(head, a[:p]...)
	head = recordsLength(head, len(records), flexible)
	binary.BigEndian.PutUint32(head, uint32(len(head)-4+len(records)+len(s)))
	return head, records, s, true
}

// recordsLength appends the length of a non-null records field of n bytes.
func recordsLength(dst []byte, n int, flexible bool) []byte {
	if flexible {
		return kbin.AppendUvarint(dst, uint32(n+1))
	}
	return binary.BigEndian.AppendUint32(dst, uint32(n))
}
