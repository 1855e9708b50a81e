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
// encoded bytes. Measured on a Fetch response: below about 16 KiB one copy costs less
// than swapping the field out and the extra buffers.
const VectoredMinBytes = 16 << 10

// vectorMarker stands in for a large byte field while the response is encoded, so its
// position in kmsg's output can be found. It is random per process: no peer can know
// it, so no record content can imitate it.
var vectorMarker = func() []byte {
	m := make([]byte, 16)
	if _, err := rand.Read(m); err != nil {
		panic("protocol: no randomness for the vectored encoding marker: " + err.Error())
	}
	return m
}()

// AppendResponseVectored appends the frame of resp (as AppendResponse encodes it) to
// bufs for a vectored write (net.Buffers.WriteTo, writev), without copying its large
// byte fields: Fetch RecordBatches and FetchSnapshot Bytes of at least
// VectoredMinBytes. The encoded bytes are appended to the last buffer of bufs (a new
// one when bufs is empty); each large field is appended as the response's own slice,
// followed by a buffer for the bytes after it, which is the last buffer again and
// which the next append continues. Concatenated, the bytes added equal
// AppendResponse(nil, corr, resp).
//
// Only the returned last buffer may be appended to. resp is modified during the call
// and restored before it returns: it must not be used concurrently.
func AppendResponseVectored(bufs net.Buffers, corr int32, resp kmsg.Response) net.Buffers {
	if len(bufs) == 0 {
		bufs = append(bufs, nil)
	}
	last := len(bufs) - 1
	dst := bufs[last]
	resp = atVersion(resp, resp.GetVersion(), taggedResponseFields)
	var fieldsArr [4]*[]byte // a raft response has one partition
	fields := appendLargeByteFields(fieldsArr[:0], resp)
	if len(fields) == 0 {
		bufs[last] = AppendResponse(dst, corr, resp)
		return bufs
	}
	var savedArr [4][]byte
	saved := savedArr[:0]
	for _, f := range fields {
		saved = append(saved, *f)
		*f = vectorMarker
	}
	start := len(dst)
	dst = AppendResponse(dst, corr, resp)
	for i, f := range fields {
		*f = saved[i]
	}

	flexible := resp.IsFlexible()
	var prefixArr [4]byte
	markerPrefix := appendBytesLength(prefixArr[:0], len(vectorMarker), flexible)
	// Each marker and its prefix (17 or 20 bytes) become the field's real prefix (at
	// most 5), written in place so that it ends the buffer of the bytes before it, then
	// the field itself as its own buffer.
	out := bufs[:last]
	from, pos, total := 0, start, 0
	for _, field := range saved {
		idx := bytes.Index(dst[pos:], vectorMarker)
		at := pos + idx - len(markerPrefix)
		if idx < 0 || at < pos || !bytes.Equal(dst[at:pos+idx], markerPrefix) {
			// Cannot happen with kmsg's encodings; copy rather than send a corrupt frame.
			bufs[last] = AppendResponse(dst[:start], corr, resp)
			return bufs
		}
		end := len(appendBytesLength(dst[:at], len(field), flexible))
		out = append(out, dst[from:end], field)
		total += end - max(from, start) + len(field)
		from, pos = pos+idx+len(vectorMarker), pos+idx+len(vectorMarker)
	}
	// The rest of the frame begins mid-array; appending to it continues in dst.
	out = append(out, dst[from:])
	total += len(dst) - from
	binary.BigEndian.PutUint32(dst[start:], uint32(total-4))
	return out
}

// appendLargeByteFields appends the byte fields of resp that AppendResponseVectored
// leaves out, in encoding order.
func appendLargeByteFields(fields []*[]byte, resp kmsg.Response) []*[]byte {
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
	return fields
}

// appendBytesLength appends the length prefix of a non-null bytes field of n bytes.
func appendBytesLength(dst []byte, n int, flexible bool) []byte {
	if flexible {
		return kbin.AppendUvarint(dst, uint32(n)+1)
	}
	return kbin.AppendInt32(dst, int32(n))
}
