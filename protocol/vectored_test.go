package protocol

import (
	"bytes"
	"fmt"
	"net"
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

// concat joins the buffers of a vectored frame.
func concat(bufs net.Buffers) []byte { return bytes.Join(bufs, nil) }

// passedThrough reports whether field is one of bufs itself, not a copy.
func passedThrough(bufs net.Buffers, field []byte) bool {
	for _, b := range bufs {
		if len(b) == len(field) && &b[0] == &field[0] {
			return true
		}
	}
	return false
}

func TestAppendResponseVectored(t *testing.T) {
	big := recordBytes(t, 1<<20)
	small := recordBytes(t, 100)[:100]
	for _, v := range []int16{4, 11, 12, 13, 16, 17} {
		for _, recs := range [][][]byte{{big}, {small}, {big, small, big[:VectoredMinBytes]}, {nil}} {
			resp := fetchResponse(v, recs...)
			want := append([]byte("junk"), AppendResponse(nil, 77, resp)...)
			bufs := AppendResponseVectored(net.Buffers{[]byte("junk")}, 77, resp)
			got := concat(bufs)
			if !bytes.Equal(got, want) {
				t.Fatalf("v%d %d partitions: vectored frame differs (%d vs %d bytes)", v, len(recs), len(got), len(want))
			}
			// Large record slices are passed through, not copied.
			for _, r := range recs {
				if len(r) >= VectoredMinBytes && !passedThrough(bufs, r) {
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
			back, err := ParseResponse(got[len("junk")+4:], int16(kmsg.Fetch), v)
			if err != nil {
				t.Fatal(err)
			}
			fr := back.(*kmsg.FetchResponse)
			if !bytes.Equal(fr.Topics[0].Partitions[0].RecordBatches, recs[0]) {
				t.Fatalf("v%d: records differ after decoding", v)
			}
		}
	}
	// FetchSnapshot chunks are vectored the same way: the bytes before the chunk (its
	// length prefix included), the chunk, the bytes after it.
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
	if got := concat(bufs); !bytes.Equal(got, want) || len(bufs) != 3 || &bufs[1][0] != &big[0] {
		t.Fatalf("fetch snapshot: equal %v, %d buffers", bytes.Equal(got, want), len(bufs))
	}
	// Other responses come back whole.
	if bufs := AppendResponseVectored(nil, 1, testApis.ApiVersionsResponse(3)); len(bufs) != 1 {
		t.Fatalf("%d buffers", len(bufs))
	}
}

// filled returns n bytes of a pattern that differs per seed.
func filled(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

// The buffers of a vectored Fetch response are byte for byte the normal encoding, at
// every version, around the length-encoding boundaries and with out-of-version broker
// endpoints set; later frames appended to the last buffer follow intact.
func TestAppendResponseVectoredMatchesEncoding(t *testing.T) {
	sizes := []int{VectoredMinBytes + 1, 1<<21 - 2, 1 << 21}
	bigs := map[int][]byte{}
	for _, n := range sizes {
		bigs[n] = filled(n, byte(n))
	}
	brokers := []kmsg.FetchResponseBroker{{NodeID: 1, Host: "localhost", Port: 9093}}
	// Versions: non-flexible (4, 11), first flexible (12), topic ids (13), ReplicaState
	// era (15), broker endpoints tag (16, 17).
	for _, v := range []int16{4, 11, 12, 13, 15, 16, 17} {
		for _, n := range sizes {
			for _, shape := range []string{"one", "small-before", "small-after"} {
				t.Run(fmt.Sprintf("v%d/%d/%s", v, n, shape), func(t *testing.T) {
					big := bigs[n]
					var resp *kmsg.FetchResponse
					switch shape {
					case "one":
						resp = fetchResponse(v, big)
					case "small-before":
						resp = fetchResponse(v, filled(100, 1), big)
					case "small-after":
						resp = fetchResponse(v, big, nil, filled(5, 2))
					}
					resp.SessionID = 7
					resp.Brokers = brokers
					want := AppendResponse(nil, 99, resp)
					bufs := AppendResponseVectored(nil, 99, resp)
					if !passedThrough(bufs, big) {
						t.Fatal("records were copied")
					}
					if got := concat(bufs); !bytes.Equal(got, want) {
						t.Fatalf("vectored encoding differs (len %d vs %d)", len(got), len(want))
					}
					if !bytes.Equal(resp.Topics[0].Partitions[map[string]int{"one": 0, "small-before": 1, "small-after": 0}[shape]].RecordBatches, big) {
						t.Fatal("response records not restored")
					}
					if len(resp.Brokers) != 1 {
						t.Fatal("response broker endpoints reset")
					}
					next := AppendResponseVectored(bufs, 100, testApis.ApiVersionsResponse(3))
					if got := concat(next); !bytes.Equal(got, append(want, AppendResponse(nil, 100, testApis.ApiVersionsResponse(3))...)) {
						t.Fatal("a frame appended after the vectored one differs")
					}
				})
			}
		}
	}
	// Small records are copied: one buffer. Two large partitions are both passed through.
	if bufs := AppendResponseVectored(nil, 1, fetchResponse(17, filled(100, 0))); len(bufs) != 1 {
		t.Errorf("small records: %d buffers", len(bufs))
	}
	a, b := filled(VectoredMinBytes, 0), filled(VectoredMinBytes, 1)
	two := fetchResponse(17, a, b)
	if bufs := AppendResponseVectored(nil, 1, two); !passedThrough(bufs, a) || !passedThrough(bufs, b) ||
		!bytes.Equal(concat(bufs), AppendResponse(nil, 1, two)) {
		t.Error("two large partitions not both passed through")
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
