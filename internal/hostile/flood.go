package hostile

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
)

// FetchFloodParams configures FetchFlood.
type FetchFloodParams struct {
	Partition Partition
	Conns     int   // connections, opened at once
	PerConn   int   // requests written back to back on each; no answer is ever read
	Offset    int64 // fetch offset (0: the whole log is the answer)
	ReplicaID int32 // of the first connection; the next ones count up (observers)
	// Snapshot sends FetchSnapshot requests for the snapshot SnapshotID (its
	// whole content from position 0) instead of Fetch.
	Snapshot   bool
	SnapshotID kmsg.FetchSnapshotRequestTopicPartitionSnapshotID
}

// FetchFlood pipelines Fetch (or FetchSnapshot) requests whose answers are as
// large as the target allows, on Conns connections that never read: the
// answers pile up in the target unless it bounds what it queues per client.
// Each connection is held open, unread, until ctx ends.
func FetchFlood(ctx context.Context, addr string, p FetchFloodParams) (Result, error) {
	var t tally
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for i := 0; i < p.Conns; i++ {
		wg.Add(1)
		go func(replica int32) {
			defer wg.Done()
			c, err := dial(ctx, addr, &t)
			if err != nil {
				once.Do(func() { firstErr = err })
				return
			}
			defer c.Close()
			req := fetchFloodRequest(p, replica)
			for corr := int32(0); corr < int32(p.PerConn); corr++ {
				t.frames.Add(1)
				if !write(ctx, c, frame(corr, req), &t) {
					return
				}
			}
			<-ctx.Done()
		}(p.ReplicaID + int32(i))
	}
	wg.Wait()
	return finish(&t, firstErr)
}

func fetchFloodRequest(p FetchFloodParams, replica int32) kmsg.Request {
	if p.Snapshot {
		req := kmsg.NewPtrFetchSnapshotRequest()
		req.Version = maxVersion(int16(kmsg.FetchSnapshot))
		req.ClusterID = p.Partition.ClusterID
		req.ReplicaID = replica
		req.MaxBytes = math.MaxInt32
		t := kmsg.NewFetchSnapshotRequestTopic()
		t.Topic = p.Partition.Topic
		sp := kmsg.NewFetchSnapshotRequestTopicPartition()
		sp.Partition = p.Partition.Partition
		sp.CurrentLeaderEpoch = -1
		sp.SnapshotID = p.SnapshotID
		t.Partitions = append(t.Partitions, sp)
		req.Topics = append(req.Topics, t)
		return req
	}
	req := kmsg.NewPtrFetchRequest()
	req.Version = maxVersion(int16(kmsg.Fetch))
	req.ClusterID = p.Partition.ClusterID
	req.ReplicaID = replica
	req.ReplicaState.ID = replica
	req.ReplicaState.Epoch = -1
	req.MaxBytes = math.MaxInt32
	t := kmsg.NewFetchRequestTopic()
	t.Topic = p.Partition.Topic
	t.TopicID = p.Partition.TopicID
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition = p.Partition.Partition
	fp.CurrentLeaderEpoch = -1
	fp.FetchOffset = p.Offset
	fp.LastFetchedEpoch = -1
	fp.PartitionMaxBytes = math.MaxInt32
	t.Partitions = append(t.Partitions, fp)
	req.Topics = append(req.Topics, t)
	return req
}

// SlowFrameParams configures SlowFrame.
type SlowFrameParams struct {
	Conns    int
	Announce int32 // the frame size written in the prefix
	Rate     int   // body bytes per second trickled on each connection (at least 1)
}

// SlowFrame opens Conns connections, writes on each a size prefix announcing
// Announce bytes and a valid Fetch request header, then trickles zero bytes
// at Rate per second until the frame is complete, the target closes the
// connection or ctx ends: a target that allocates the announced size up
// front, or waits for the body without a deadline, is bloated or pinned.
func SlowFrame(ctx context.Context, addr string, p SlowFrameParams) (Result, error) {
	rate := max(p.Rate, 1)
	tick := 100 * time.Millisecond
	chunk := max(rate/10, 1)
	if rate < 10 {
		tick, chunk = time.Second/time.Duration(rate), 1
	}
	head := binary.BigEndian.AppendUint32(nil, uint32(p.Announce))
	head = protocol.AppendRequestHeader(head, int16(kmsg.Fetch), maxVersion(int16(kmsg.Fetch)), 0, &clientID)
	return each(ctx, addr, p.Conns, func(c net.Conn, t *tally) {
		t.frames.Add(1)
		if !write(ctx, c, head, t) {
			return
		}
		zeros := make([]byte, chunk)
		for sent := int64(len(head) - 4); sent < int64(p.Announce); sent += int64(chunk) {
			if !sleep(ctx, tick) || !write(ctx, c, zeros[:min(int64(chunk), int64(p.Announce)-sent)], t) {
				return
			}
		}
		<-ctx.Done()
	})
}

// SlowlorisParams configures Slowloris.
type SlowlorisParams struct {
	Conns    int
	Interval time.Duration // between two bytes on one connection
}

// Slowloris opens Conns connections, each sending the first bytes of a
// frame's size prefix and then one byte per Interval: a frame that never
// completes, on as many connections as the target accepts.
func Slowloris(ctx context.Context, addr string, p SlowlorisParams) (Result, error) {
	// A 4-byte prefix of 64 bytes, then the header of an ApiVersions request:
	// every byte is valid, the frame just never ends in time.
	f := binary.BigEndian.AppendUint32(nil, 64)
	f = protocol.AppendRequestHeader(f, int16(kmsg.ApiVersions), 0, 0, &clientID)
	f = append(f, make([]byte, 68-len(f))...)
	return each(ctx, addr, p.Conns, func(c net.Conn, t *tally) {
		t.frames.Add(1)
		if !write(ctx, c, f[:2], t) {
			return
		}
		for i := 2; i < len(f); i++ {
			if !sleep(ctx, p.Interval) || !write(ctx, c, f[i:i+1], t) {
				return
			}
		}
		<-ctx.Done()
	})
}

// each runs fn on n connections at once, each closed when fn returns.
func each(ctx context.Context, addr string, n int, fn func(net.Conn, *tally)) (Result, error) {
	var t tally
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dial(ctx, addr, &t)
			if err != nil {
				once.Do(func() { firstErr = err })
				return
			}
			defer c.Close()
			fn(c, &t)
		}()
	}
	wg.Wait()
	return finish(&t, firstErr)
}

// ConnectStormParams configures ConnectStorm.
type ConnectStormParams struct {
	Total int // connections opened in all
	Rate  int // connections opened per second, at most
	Open  int // connections kept open at once; the oldest is closed first (0: close at once)
}

// ConnectStorm opens Total connections at up to Rate per second, each
// sending nothing; at most Open stay open at once and all are closed when it
// returns. A target that spends much per accepted connection, or keeps
// something per connection after it closed, is stalled or bloated.
func ConnectStorm(ctx context.Context, addr string, p ConnectStormParams) (Result, error) {
	var t tally
	var firstErr error
	var open []net.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	start := time.Now()
	for i := 0; i < p.Total && ctx.Err() == nil; i++ {
		if p.Rate > 0 {
			due := start.Add(time.Duration(i) * time.Second / time.Duration(p.Rate))
			if d := time.Until(due); d > 0 && !sleep(ctx, d) {
				break
			}
		}
		c, err := dial(ctx, addr, &t)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		open = append(open, c)
		if len(open) > p.Open {
			open[0].Close()
			open = open[1:]
		}
	}
	return finish(&t, firstErr)
}

// GarbageParams configures Garbage.
type GarbageParams struct {
	Frames  int    // frames sent, each on its own connection
	MaxBody int    // body bytes, at most (random length)
	Seed    uint64 // of the garbage
	// Keys are the api keys headers name, each at a version the target
	// serves; nil: every raft api and DescribeQuorum.
	Keys []int16
}

// Garbage sends frames whose request header is valid (a served api key and
// version) and whose body is random bytes, each on a new connection (a
// target closes a connection after an undecodable request) and waits a
// moment for an answer or the close.
func Garbage(ctx context.Context, addr string, p GarbageParams) (Result, error) {
	keys := p.Keys
	if keys == nil {
		keys = []int16{int16(kmsg.Fetch), int16(kmsg.Vote), int16(kmsg.BeginQuorumEpoch),
			int16(kmsg.EndQuorumEpoch), int16(kmsg.DescribeQuorum), int16(kmsg.FetchSnapshot)}
	}
	rng := rand.New(rand.NewPCG(p.Seed, 0x686f7374696c65))
	var t tally
	var firstErr error
	for i := 0; i < p.Frames && ctx.Err() == nil; i++ {
		key := keys[rng.IntN(len(keys))]
		r, _ := kraftdApis.Versions(key)
		v := r.Min + int16(rng.IntN(int(r.Max-r.Min)+1))
		f := binary.BigEndian.AppendUint32(nil, 0)
		f = protocol.AppendRequestHeader(f, key, v, int32(i), &clientID)
		body := make([]byte, rng.IntN(max(p.MaxBody, 1)+1))
		for j := range body {
			body[j] = byte(rng.Uint32())
		}
		f = append(f, body...)
		binary.BigEndian.PutUint32(f, uint32(len(f)-4))
		c, err := dial(ctx, addr, &t)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		t.frames.Add(1)
		if write(ctx, c, f, &t) {
			// The answer (an error) or the close; either way the frame was handled.
			_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			if _, err := protocol.ReadFrame(c, protocol.DefaultMaxFrameSize, nil); closedByPeer(ctx, err) {
				t.closed.Add(1)
			}
		}
		c.Close()
	}
	return finish(&t, firstErr)
}
