package protocol

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// recordBytes returns n bytes of valid record batches (each batch ~16 KiB).
func recordBytes(tb testing.TB, n int) []byte {
	tb.Helper()
	var out []byte
	value := bytes.Repeat([]byte{0x5a}, 1024)
	for off := int64(0); len(out) < n; off += 16 {
		recs := make([]Record, 16)
		for i := range recs {
			recs[i] = Record{Value: value}
		}
		out = AppendBatch(out, Batch{BaseOffset: off, PartitionLeaderEpoch: 3, BaseTimestamp: goldenTS, Records: recs})
	}
	return out
}

func fetchResponse(version int16, records ...[]byte) *kmsg.FetchResponse {
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(version)
	t := kmsg.NewFetchResponseTopic()
	t.Topic = "__cluster_metadata"
	t.TopicID = [16]byte{15: 1}
	for i, r := range records {
		p := kmsg.NewFetchResponseTopicPartition()
		p.Partition = int32(i)
		p.HighWatermark = 100
		p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = 1, 3
		p.RecordBatches = r
		t.Partitions = append(t.Partitions, p)
	}
	resp.Topics = []kmsg.FetchResponseTopic{t}
	return resp
}

func TestAppendResponseVectored(t *testing.T) {
	big := recordBytes(t, 1<<20)
	small := recordBytes(t, 100)[:100]
	for _, v := range []int16{4, 11, 12, 13, 16, 17} {
		for _, recs := range [][][]byte{{big}, {small}, {big, small, big[:VectoredMinBytes]}, {nil}} {
			resp := fetchResponse(v, recs...)
			want := AppendResponse(nil, 77, resp)
			bufs := AppendResponseVectored([]byte("junk"), 77, resp)
			var got []byte
			for _, b := range bufs {
				got = append(got, b...)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("v%d %d partitions: vectored frame differs (%d vs %d bytes)", v, len(recs), len(got), len(want))
			}
			// Large record slices are passed through, not copied.
			for _, r := range recs {
				if len(r) < VectoredMinBytes {
					continue
				}
				found := false
				for _, b := range bufs {
					if len(b) == len(r) && &b[0] == &r[0] {
						found = true
					}
				}
				if !found {
					t.Fatalf("v%d: %d-byte records were copied", v, len(r))
				}
			}
			// The response is left as it was.
			for i, r := range recs {
				if p := resp.Topics[0].Partitions[i]; len(p.RecordBatches) != len(r) || (len(r) > 0 && &p.RecordBatches[0] != &r[0]) {
					t.Fatalf("v%d: partition %d records not restored", v, i)
				}
			}
			// And the frame decodes, with records aliasing the frame instead of a copy.
			back, err := ParseResponse(got[4:], KeyFetch, v)
			if err != nil {
				t.Fatal(err)
			}
			fr := back.(*kmsg.FetchResponse)
			if !bytes.Equal(fr.Topics[0].Partitions[0].RecordBatches, recs[0]) {
				t.Fatalf("v%d: records differ after decoding", v)
			}
		}
	}
	// FetchSnapshot chunks are vectored the same way.
	snap := kmsg.NewPtrFetchSnapshotResponse()
	snap.SetVersion(1)
	st := kmsg.NewFetchSnapshotResponseTopic()
	st.Topic = "__cluster_metadata"
	sp := kmsg.NewFetchSnapshotResponseTopicPartition()
	sp.Bytes = big
	sp.Size = int64(len(big))
	st.Partitions = []kmsg.FetchSnapshotResponseTopicPartition{sp}
	snap.Topics = []kmsg.FetchSnapshotResponseTopic{st}
	want := AppendResponse(nil, 5, snap)
	bufs := AppendResponseVectored(nil, 5, snap)
	var got []byte
	for _, b := range bufs {
		got = append(got, b...)
	}
	if !bytes.Equal(got, want) || len(bufs) != 4 || &bufs[2][0] != &big[0] {
		t.Fatalf("fetch snapshot: equal %v, %d buffers", bytes.Equal(got, want), len(bufs))
	}
	// Other responses come back whole.
	if bufs := AppendResponseVectored(nil, 1, NewApiVersionsResponse(3)); len(bufs) != 1 {
		t.Fatalf("%d buffers", len(bufs))
	}
}

func TestParseRequestHeaderZeroAlloc(t *testing.T) {
	for _, g := range loadGoldenFrames(t) {
		if !g.request {
			continue
		}
		if n := testing.AllocsPerRun(100, func() { _, _, _ = ParseRequestHeader(g.frame) }); n != 0 {
			t.Fatalf("%s: %v allocations", g.file, n)
		}
	}
}
