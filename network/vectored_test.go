package network

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
)

func fetchResponse(version int16, records ...[]byte) *kmsg.FetchResponse {
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = version
	resp.SessionID = 7
	t := kmsg.NewFetchResponseTopic()
	t.Topic = "__cluster_metadata"
	t.TopicID = [16]byte{15: 1}
	for i, r := range records {
		p := kmsg.NewFetchResponseTopicPartition()
		p.Partition = int32(i)
		p.HighWatermark = 42
		p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = 1, 3
		p.RecordBatches = r
		t.Partitions = append(t.Partitions, p)
	}
	resp.Topics = append(resp.Topics, t)
	if version >= 16 {
		b := kmsg.NewFetchResponseBroker()
		b.NodeID, b.Host, b.Port = 1, "localhost", 9093
		resp.Brokers = append(resp.Brokers, b)
	}
	return resp
}

func filled(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

// The three pieces of a split Fetch response are byte for byte the normal encoding, at
// every version and around the length-encoding boundaries.
func TestSplitFetchResponseMatchesEncoding(t *testing.T) {
	sizes := []int{vectoredMinRecords + 1, 1<<21 - 2, 1 << 21}
	bigs := map[int][]byte{}
	for _, n := range sizes {
		bigs[n] = filled(n, byte(n))
	}
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
					sanitizeResponse(resp)
					want := protocol.AppendResponse(nil, 99, resp)
					head, recs, tail, ok := splitFetchResponse(99, resp)
					if !ok {
						t.Fatal("not split")
					}
					if &recs[0] != &big[0] {
						t.Fatal("records were copied")
					}
					got := append(append(append([]byte(nil), head...), recs...), tail...)
					if !bytes.Equal(got, want) {
						t.Fatalf("split encoding differs (len %d vs %d)", len(got), len(want))
					}
					if len(resp.Topics[0].Partitions) > 0 && !bytes.Equal(resp.Topics[0].Partitions[map[string]int{"one": 0, "small-before": 1, "small-after": 0}[shape]].RecordBatches, big) {
						t.Fatal("response records not restored")
					}
				})
			}
		}
	}
	// Not applicable: small records, or two large partitions.
	if _, _, _, ok := splitFetchResponse(1, fetchResponse(17, filled(100, 0))); ok {
		t.Error("small records split")
	}
	if _, _, _, ok := splitFetchResponse(1, fetchResponse(17, filled(vectoredMinRecords, 0), filled(vectoredMinRecords, 1))); ok {
		t.Error("two large partitions split")
	}
}

// A Fetch response with 1 MiB of records, pipelined with small responses, reaches a
// client intact through the vectored write path.
func TestServerWritesLargeFetchResponse(t *testing.T) {
	records := filled(1<<20, 3)
	h := HandlerFunc(func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
		switch r := req.(type) {
		case *kmsg.FetchRequest:
			respond(fetchResponse(r.Version, records))
		case *kmsg.VoteRequest:
			respond(voteResponseFor(r))
		}
	})
	_, addr := startServer(t, ServerConfig{}, h)
	c := dialRaw(t, addr)
	for i := range int32(6) {
		if i%2 == 0 {
			c.send(i, voteRequest(i))
			continue
		}
		f := kmsg.NewPtrFetchRequest()
		f.Version = int16(10 + i)
		c.send(i, f)
	}
	for i := range int32(6) {
		if i%2 == 0 {
			if got := votePartition(c.recv(i, protocol.KeyVote, 1)); got != i {
				t.Fatalf("vote %d: %d", i, got)
			}
			continue
		}
		resp := c.recv(i, protocol.KeyFetch, int16(10+i)).(*kmsg.FetchResponse)
		p := resp.Topics[0].Partitions[0]
		if !bytes.Equal(p.RecordBatches, records) || p.HighWatermark != 42 {
			t.Fatalf("fetch %d: records or high watermark differ", i)
		}
	}
}
