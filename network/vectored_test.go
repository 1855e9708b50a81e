package network

import (
	"bytes"
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

// Fetch responses with large records, pipelined with small responses, reach a client
// intact through the vectored write path: 1 MiB of records (a write per response) and
// 20 KiB (several vectored responses in one write).
func TestServerWritesLargeFetchResponse(t *testing.T) {
	for _, n := range []int{1 << 20, 20 << 10} {
		records := filled(n, 3)
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
				if got := votePartition(c.recv(i, int16(kmsg.Vote), 1)); got != i {
					t.Fatalf("%d bytes: vote %d: %d", n, i, got)
				}
				continue
			}
			resp := c.recv(i, int16(kmsg.Fetch), int16(10+i)).(*kmsg.FetchResponse)
			p := resp.Topics[0].Partitions[0]
			if !bytes.Equal(p.RecordBatches, records) || p.HighWatermark != 42 {
				t.Fatalf("%d bytes: fetch %d: records or high watermark differ", n, i)
			}
		}
	}
}
