package protocol

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"net"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// VectoredMinBytes is the smallest byte field AppendResponseVectored leaves out of the
// encoded buffer; smaller fields are cheaper to copy than to send as their own iovec.
const VectoredMinBytes = 4096

// vectorMarker stands in for a large byte field while the response is encoded, so its
// position in kmsg's output can be found. It is random per process: no peer can know it,
// so no record content can imitate it.
var vectorMarker = func() []byte {
	m := make([]byte, 16)
	if _, err := rand.Read(m); err != nil {
		panic("protocol: no randomness for the vectored encoding marker: " + err.Error())
	}
	return m
}()

// AppendResponseVectored encodes a complete size-prefixed response frame like
// AppendResponse, but leaves the large byte fields (Fetch RecordBatches and FetchSnapshot
// Bytes of at least VectoredMinBytes) out of the encoded buffer: the returned net.Buffers
// holds slices of dst (header, fields, length prefixes) interleaved with the response's
// own byte slices, in wire order, so a writer can send log bytes with writev without
// copying them. Concatenated, the buffers equal AppendResponse(dst, corr, resp).
//
// The encoded part is appended to dst (which may be reused afterwards once the buffers are
// written). resp is modified during the call and restored before it returns: it must not
// be used concurrently. Responses of other types come back as a single buffer.
func AppendResponseVectored(dst []byte, corr int32, resp kmsg.Response) net.Buffers {
	var fields []*[]byte // large byte fields, in encoding order
	switch r := resp.(type) {
	case *kmsg.FetchResponse:
		for i := range r.Topics {
			for j := range r.Topics[i].Partitions {
				if p := &r.Topics[i].Partitions[j]; len(p.RecordBatches) >= VectoredMinBytes {
					fields = append(fields, &p.RecordBatches)
				}
			}
		}
	case *kmsg.FetchSnapshotResponse:
		for i := range r.Topics {
			for j := range r.Topics[i].Partitions {
				if p := &r.Topics[i].Partitions[j]; len(p.Bytes) >= VectoredMinBytes {
					fields = append(fields, &p.Bytes)
				}
			}
		}
	}
	start := len(dst)
	if len(fields) == 0 {
		dst = AppendResponse(dst, corr, resp)
		return net.Buffers{dst[start:]}
	}
	saved := make([][]byte, len(fields))
	for i, f := range fields {
		saved[i] = *f
		*f = vectorMarker
	}
	dst = AppendResponse(dst, corr, resp)
	for i, f := range fields {
		*f = saved[i]
	}
	enc := dst[start:]

	// The marker's length prefix: uvarint(len+1) when flexible, int32 len otherwise.
	var markerPrefix []byte
	if resp.IsFlexible() {
		markerPrefix = kbin.AppendUvarint(nil, uint32(len(vectorMarker))+1)
	} else {
		markerPrefix = kbin.AppendInt32(nil, int32(len(vectorMarker)))
	}
	prefixes := make([]byte, 0, 5*len(fields))
	bufs := make(net.Buffers, 0, 3*len(fields)+1)
	pos := 0
	total := 0
	for _, rec := range saved {
		idx := bytes.Index(enc[pos:], vectorMarker)
		if idx < len(markerPrefix) || !bytes.Equal(enc[pos+idx-len(markerPrefix):pos+idx], markerPrefix) {
			// Cannot happen with kmsg's encodings; fall back to the copying encoder rather
			// than send a corrupt frame.
			return net.Buffers{AppendResponse(dst[:start], corr, resp)[start:]}
		}
		meta := enc[pos : pos+idx-len(markerPrefix)]
		p0 := len(prefixes)
		if resp.IsFlexible() {
			prefixes = kbin.AppendUvarint(prefixes, uint32(len(rec))+1)
		} else {
			prefixes = kbin.AppendInt32(prefixes, int32(len(rec)))
		}
		bufs = append(bufs, meta, prefixes[p0:len(prefixes):len(prefixes)], rec)
		total += len(meta) + len(prefixes) - p0 + len(rec)
		pos += idx + len(vectorMarker)
	}
	bufs = append(bufs, enc[pos:])
	total += len(enc) - pos
	binary.BigEndian.PutUint32(enc, uint32(total-4))
	return bufs
}
