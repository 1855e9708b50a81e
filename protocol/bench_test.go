package protocol

import (
	"io"
	"net"
	"os"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func readGoldenFrame(b *testing.B, name string) []byte {
	data, err := os.ReadFile(goldenDir + "/" + name)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkParseRequestHeader: header parsing alone (target: 0 allocs/op).
func BenchmarkParseRequestHeader(b *testing.B) {
	frame := readGoldenFrame(b, "fetch-v17-request.bin")
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ParseRequestHeader(frame); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFetchRequestDecodeEncode: a Fetch v17 request as the JVM sends it, decoded and
// re-encoded into a reused buffer.
func BenchmarkFetchRequestDecodeEncode(b *testing.B) {
	frame := readGoldenFrame(b, "fetch-v17-request.bin")
	buf := make([]byte, 0, 4096)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		hdr, req, err := testApis.ParseRequest(frame)
		if err != nil {
			b.Fatal(err)
		}
		buf = AppendRequest(buf[:0], hdr.CorrelationID, hdr.ClientID, req)
	}
}

func benchFetchResponseFrame(b *testing.B) ([]byte, *kmsg.FetchResponse) {
	resp := fetchResponse(17, recordBytes(b, 1<<20))
	return AppendResponse(nil, 9, resp)[4:], resp
}

// BenchmarkFetchResponseDecode: decoding a Fetch v17 response with 1 MiB of record batches
// (the records alias the frame).
func BenchmarkFetchResponseDecode(b *testing.B) {
	frame, _ := benchFetchResponseFrame(b)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseResponse(frame, int16(kmsg.Fetch), 17); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFetchResponseEncodeCopy: encoding it with AppendResponse, which copies the
// records into the frame buffer.
func BenchmarkFetchResponseEncodeCopy(b *testing.B) {
	_, resp := benchFetchResponseFrame(b)
	buf := make([]byte, 0, 2<<20)
	b.SetBytes(int64(len(resp.Topics[0].Partitions[0].RecordBatches)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendResponse(buf[:0], 9, resp)
	}
}

// BenchmarkFetchResponseEncodeVectored: encoding it with AppendResponseVectored, which
// leaves the records where they are (writev-ready net.Buffers).
func BenchmarkFetchResponseEncodeVectored(b *testing.B) {
	_, resp := benchFetchResponseFrame(b)
	bufs := net.Buffers{make([]byte, 0, 4096)}
	b.SetBytes(int64(len(resp.Topics[0].Partitions[0].RecordBatches)))
	b.ReportAllocs()
	for b.Loop() {
		bufs = AppendResponseVectored(append(bufs[:0], bufs[0][:0]), 9, resp)
	}
}

// BenchmarkFetchResponseDecodeEncodeVectored: the full round trip a relaying node would
// do: decode the 1 MiB response, encode it vectored and write it (to io.Discard).
func BenchmarkFetchResponseDecodeEncodeVectored(b *testing.B) {
	frame, _ := benchFetchResponseFrame(b)
	arena := make([]byte, 0, 4096)
	var bufs net.Buffers
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		resp, err := ParseResponse(frame, int16(kmsg.Fetch), 17)
		if err != nil {
			b.Fatal(err)
		}
		bufs = AppendResponseVectored(append(bufs[:0], arena[:0]), 9, resp)
		arena = bufs[0]
		w := bufs // WriteTo consumes its receiver
		if _, err := w.WriteTo(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
