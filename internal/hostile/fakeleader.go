package hostile

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
)

// Malformation is how FakeLeader spoils the batch it serves after a valid one.
type Malformation int

const (
	// NegativeDelta: LastOffsetDelta -5, with a CRC that matches.
	NegativeDelta Malformation = iota
	// Oversized: a well-formed batch of OversizeBytes, more than a segment holds.
	Oversized
	// EmptyWithDelta: RecordCount 0 and LastOffsetDelta 10.
	EmptyWithDelta
	// ZipBomb: a gzip batch whose records decompress to more than
	// protocol.MaxDecompressedBatchBytes.
	ZipBomb
)

func (m Malformation) String() string {
	switch m {
	case NegativeDelta:
		return "negative-last-offset-delta"
	case Oversized:
		return "larger-than-a-segment"
	case EmptyWithDelta:
		return "zero-records-positive-delta"
	case ZipBomb:
		return "gzip-bomb"
	}
	return fmt.Sprintf("malformation(%d)", int(m))
}

// FakeLeaderParams configures FakeLeader.
type FakeLeaderParams struct {
	Partition Partition
	// Listen is the address voters have for LeaderID: the fake listens there.
	Listen   string
	LeaderID int32 // the voter it impersonates
	VictimID int32 // the voter it captures (the one at the target address)
	Epoch    int32 // the epoch it claims at least; it claims above any epoch it hears of
	Kinds    []Malformation
	// OversizeBytes is the size of the Oversized batch (above the victim's segment size).
	OversizeBytes int
	Claims        int           // BeginQuorumEpoch requests sent to the victim, at most
	ClaimEvery    time.Duration // a claim is repeated when the victim has not fetched for this long
}

// FakeLeader impersonates voter LeaderID towards the follower at addr: it
// listens at p.Listen (the address the quorum has for LeaderID), claims
// leadership of an epoch above any it has heard of with BeginQuorumEpoch,
// and answers each Fetch of the victim with a valid batch at the fetch
// offset followed by a malformed one (p.Kinds, in turn). It answers
// ApiVersions to anyone and nothing else: the other voters' requests time
// out, as to a voter that is down. A follower that writes such a batch, or
// crashes or bloats on it, fails; one that refuses it and then finds the
// real leader again passes. FakeLeader returns when ctx ends.
func FakeLeader(ctx context.Context, addr string, p FakeLeaderParams) (Result, error) {
	ln, err := net.Listen("tcp", p.Listen)
	if err != nil {
		return Result{}, fmt.Errorf("hostile: fake leader: %w", err)
	}
	f := &fakeLeader{p: p}
	f.epoch.Store(p.Epoch - 1)
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		f.accept(ctx, ln)
	}()
	f.claim(ctx, addr)
	ln.Close()
	wg.Wait()
	return f.t.result(), nil
}

type fakeLeader struct {
	p         FakeLeaderParams
	t         tally
	epoch     atomic.Int32 // highest epoch heard of
	claimed   atomic.Int32 // epoch of the last claim
	lastFetch atomic.Int64 // unix nanos of the victim's last Fetch
	served    atomic.Int64 // Fetch answers sent, indexing p.Kinds
}

func (f *fakeLeader) heard(epoch int32) {
	for {
		cur := f.epoch.Load()
		if epoch <= cur || f.epoch.CompareAndSwap(cur, epoch) {
			return
		}
	}
}

// claim sends BeginQuorumEpoch to the victim whenever it has not fetched
// from the fake for ClaimEvery, up to Claims times, then waits for ctx.
func (f *fakeLeader) claim(ctx context.Context, addr string) {
	for n := 0; n < f.p.Claims; {
		if time.Since(time.Unix(0, f.lastFetch.Load())) >= f.p.ClaimEvery {
			epoch := f.epoch.Load() + 1
			f.claimed.Store(epoch)
			if resp := f.sendClaim(ctx, addr, epoch); resp != nil {
				for _, t := range resp.Topics {
					for _, p := range t.Partitions {
						f.heard(p.LeaderEpoch)
					}
				}
			}
			n++
		}
		if !sleep(ctx, f.p.ClaimEvery) {
			return
		}
	}
	<-ctx.Done()
}

func (f *fakeLeader) sendClaim(ctx context.Context, addr string, epoch int32) *kmsg.BeginQuorumEpochResponse {
	c, err := dial(ctx, addr, &f.t)
	if err != nil {
		return nil
	}
	defer c.Close()
	resp, err := roundTrip(c, 0, beginQuorumEpoch(f.p.Partition, f.p.LeaderID, epoch, f.p.VictimID), &f.t)
	if err != nil {
		return nil
	}
	r, _ := resp.(*kmsg.BeginQuorumEpochResponse)
	return r
}

func (f *fakeLeader) accept(ctx context.Context, ln net.Listener) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		f.t.conns.Add(1)
		stop := context.AfterFunc(ctx, func() { c.Close() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer stop()
			defer c.Close()
			f.serve(ctx, c)
		}()
	}
}

// serve answers the requests of one inbound connection.
func (f *fakeLeader) serve(ctx context.Context, c net.Conn) {
	for ctx.Err() == nil {
		fr, err := protocol.ReadFrame(c, protocol.DefaultMaxFrameSize, nil)
		if err != nil {
			return
		}
		hdr, req, err := kraftdApis.ParseRequest(fr)
		if err != nil {
			return
		}
		var resp kmsg.Response
		switch r := req.(type) {
		case *kmsg.ApiVersionsRequest:
			resp = kraftdApis.ApiVersionsResponse(r.Version)
		case *kmsg.FetchRequest:
			resp = f.fetch(r)
		case *kmsg.VoteRequest:
			f.heardVote(r)
		case *kmsg.BeginQuorumEpochRequest:
			for _, t := range r.Topics {
				for _, p := range t.Partitions {
					f.heard(p.LeaderEpoch)
				}
			}
		}
		if resp == nil {
			continue
		}
		resp.SetVersion(req.GetVersion())
		if _, ok := resp.(*kmsg.ApiVersionsResponse); ok && resp.GetVersion() != req.GetVersion() {
			return
		}
		out := protocol.AppendResponse(nil, hdr.CorrelationID, resp)
		_ = c.SetWriteDeadline(time.Now().Add(ioTimeout))
		n, err := c.Write(out)
		f.t.bytes.Add(int64(n))
		f.t.frames.Add(1)
		if err != nil {
			return
		}
	}
}

func (f *fakeLeader) heardVote(r *kmsg.VoteRequest) {
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			f.heard(p.CandidateEpoch)
		}
	}
}

// fetch answers the victim's Fetch at the claimed epoch (others get nothing).
func (f *fakeLeader) fetch(r *kmsg.FetchRequest) kmsg.Response {
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		return nil
	}
	rp := r.Topics[0].Partitions[0]
	f.heard(rp.CurrentLeaderEpoch)
	epoch := f.claimed.Load()
	if r.ReplicaState.ID != f.p.VictimID && r.ReplicaID != f.p.VictimID || rp.CurrentLeaderEpoch != epoch {
		return nil
	}
	f.lastFetch.Store(time.Now().UnixNano())
	kind := f.p.Kinds[int(f.served.Add(1)-1)%len(f.p.Kinds)]
	records, err := poisonedBatches(rp.FetchOffset, epoch, kind, f.p.OversizeBytes)
	if err != nil {
		return nil
	}
	resp := kmsg.NewPtrFetchResponse()
	t := kmsg.NewFetchResponseTopic()
	t.Topic, t.TopicID = r.Topics[0].Topic, r.Topics[0].TopicID
	p := kmsg.NewFetchResponseTopicPartition()
	p.Partition = rp.Partition
	p.HighWatermark = rp.FetchOffset
	p.LogStartOffset = 0
	p.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
	p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = f.p.LeaderID, epoch
	p.RecordBatches = records
	t.Partitions = append(t.Partitions, p)
	resp.Topics = append(resp.Topics, t)
	return resp
}

// poisonedBatches is a valid one-record batch at offset followed by a batch
// spoiled as kind says, every CRC valid.
func poisonedBatches(offset int64, epoch int32, kind Malformation, oversize int) ([]byte, error) {
	now := time.Now().UnixMilli()
	rec := func(value []byte) []protocol.Record { return []protocol.Record{{Value: value}} }
	out := protocol.AppendBatch(nil, protocol.Batch{BaseOffset: offset, PartitionLeaderEpoch: epoch,
		BaseTimestamp: now, Records: rec([]byte("fake leader: a valid batch"))})
	next := protocol.Batch{BaseOffset: offset + 1, PartitionLeaderEpoch: epoch, BaseTimestamp: now}
	at := len(out)
	switch kind {
	case NegativeDelta:
		next.Records = rec([]byte("fake leader: last offset delta -5"))
		out = protocol.AppendBatch(out, next)
		binary.BigEndian.PutUint32(out[at+lastOffsetDeltaAt:], uint32(0xfffffffb))
	case Oversized:
		next.Records = rec(make([]byte, oversize))
		out = protocol.AppendBatch(out, next)
	case EmptyWithDelta:
		out = protocol.AppendBatch(out, next)
		binary.BigEndian.PutUint32(out[at+lastOffsetDeltaAt:], 10)
	case ZipBomb:
		next.Records = rec(make([]byte, protocol.MaxDecompressedBatchBytes+1<<20))
		plain := protocol.AppendBatch(nil, next)
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		if _, err := zw.Write(plain[protocol.BatchHeaderSize:]); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		out = append(out, plain[:protocol.BatchHeaderSize]...)
		out = append(out, z.Bytes()...)
		b := out[at:]
		binary.BigEndian.PutUint32(b[batchLengthAt:], uint32(len(b)-batchLengthAt-4))
		binary.BigEndian.PutUint16(b[attributesAt:], uint16(protocol.CompressionGzip))
	default:
		return nil, errors.New("hostile: unknown malformation")
	}
	b := out[at:]
	binary.BigEndian.PutUint32(b[crcAt:], protocol.CRC32C(b[attributesAt:]))
	return out, nil
}

// Byte positions in a v2 batch header (Kafka's DefaultRecordBatch).
const (
	batchLengthAt     = 8
	crcAt             = 17
	attributesAt      = 21 // the CRC covers the batch from here
	lastOffsetDeltaAt = 23
)
