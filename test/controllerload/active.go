package controllerload

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/topics"
)

// Finder knows which controller of a quorum is active, as a Kafka broker
// learns it: it asks the controllers (DescribeCluster with the controller
// endpoint type, whose ControllerId is the raft leader on both Kafka 4.4.0
// and kraftd) and trusts the answer until a request there fails with
// NOT_CONTROLLER or the connection breaks (Wrong).
type Finder struct {
	ctrls map[int32]string // node id -> host:port

	mu        sync.Mutex
	addr      string        // the active controller as last found; "" unknown
	id        int32         // its node id
	finding   chan struct{} // closed when the find under way ends; nil when none
	lastFind  time.Time
	clusterID string

	hw atomic.Int64 // the metadata log's high watermark, as last polled (PollHighWatermark)
}

// minFindGap spaces the finds: while no controller is active every caller
// asks again, and a find dials every controller.
const minFindGap = 25 * time.Millisecond

// NewFinder returns a finder over the controllers (node id -> host:port).
func NewFinder(ctrls map[int32]string) *Finder {
	f := &Finder{ctrls: ctrls}
	f.hw.Store(-1)
	return f
}

// Active returns the active controller's address and node id, finding it
// first when none is known (retrying until ctx ends).
func (f *Finder) Active(ctx context.Context) (string, int32, error) {
	for {
		f.mu.Lock()
		if f.addr != "" {
			addr, id := f.addr, f.id
			f.mu.Unlock()
			return addr, id, nil
		}
		if f.finding != nil {
			ch := f.finding
			f.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return "", -1, ctx.Err()
			}
		}
		ch := make(chan struct{})
		f.finding = ch
		wait := minFindGap - time.Since(f.lastFind)
		f.mu.Unlock()

		if wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
		}
		id, cluster := f.find(ctx)
		f.mu.Lock()
		f.lastFind = time.Now()
		if addr, ok := f.ctrls[id]; ok {
			f.addr, f.id = addr, id
		}
		if cluster != "" {
			f.clusterID = cluster
		}
		f.finding = nil
		close(ch)
		f.mu.Unlock()
		if ctx.Err() != nil {
			return "", -1, ctx.Err()
		}
	}
}

// Wrong tells the finder that addr answered NOT_CONTROLLER or could not be
// reached: the next Active asks the controllers again.
func (f *Finder) Wrong(addr string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.addr == addr {
		f.addr, f.id = "", -1
	}
}

// ClusterID is the cluster id the controllers reported ("" before a find).
func (f *Finder) ClusterID() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.clusterID
}

// Controllers are the quorum's controllers, node id -> host:port.
func (f *Finder) Controllers() map[int32]string { return f.ctrls }

// find asks every controller at once which node leads and returns the id
// most of them name (-1: none), and the cluster id.
func (f *Finder) find(ctx context.Context) (int32, string) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	type answer struct {
		leader  int32
		cluster string
	}
	answers := make(chan answer, len(f.ctrls))
	for _, addr := range f.ctrls {
		go func() {
			leader, cluster, err := describeCluster(ctx, addr)
			if err != nil {
				leader = -1
			}
			answers <- answer{leader, cluster}
		}()
	}
	votes := map[int32]int{}
	cluster := ""
	for range f.ctrls {
		a := <-answers
		if a.leader >= 0 {
			votes[a.leader]++
		}
		if a.cluster != "" {
			cluster = a.cluster
		}
	}
	ids := make([]int32, 0, len(votes))
	for id := range votes {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		return votes[ids[i]] > votes[ids[j]] || (votes[ids[i]] == votes[ids[j]] && ids[i] < ids[j])
	})
	if len(ids) == 0 {
		return -1, cluster
	}
	return ids[0], cluster
}

// describeCluster asks the controller at addr for the raft leader (as
// kafka-metadata-quorum --bootstrap-controller does) and the cluster id.
func describeCluster(ctx context.Context, addr string) (int32, string, error) {
	c, err := Dial(ctx, addr)
	if err != nil {
		return -1, "", err
	}
	defer c.Close()
	req := kmsg.NewPtrDescribeClusterRequest()
	req.EndpointType = 2 // controllers
	resp, err := c.Do(ctx, req)
	if err != nil {
		return -1, "", err
	}
	dc := resp.(*kmsg.DescribeClusterResponse)
	if dc.ErrorCode != 0 {
		return -1, "", kerr.ErrorForCode(dc.ErrorCode)
	}
	return dc.ControllerID, dc.ClusterID, nil
}

// HighWatermark is the metadata log's high watermark as last polled (-1
// before the first answer): what a caught-up broker has applied.
func (f *Finder) HighWatermark() int64 { return f.hw.Load() }

// PollHighWatermark asks the raft leader for the metadata log's high
// watermark (DescribeQuorum) every interval until ctx ends, on one
// connection of its own. The simulated brokers report it as their
// metadata offset: a broker fetching the log as an observer would have
// applied that much, and one poller costs the controller a request every
// interval instead of a Fetch per broker.
func (f *Finder) PollHighWatermark(ctx context.Context, every time.Duration) {
	var c *Conn
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	for ctx.Err() == nil {
		hw, conn, err := f.pollOnce(ctx, c)
		c = conn
		if err == nil && hw > f.hw.Load() {
			f.hw.Store(hw)
		}
		select {
		case <-time.After(every):
		case <-ctx.Done():
		}
	}
}

func (f *Finder) pollOnce(ctx context.Context, c *Conn) (int64, *Conn, error) {
	addr, _, err := f.Active(ctx)
	if err != nil {
		return -1, c, err
	}
	if c != nil && (c.Addr != addr || c.Broken()) {
		c.Close()
		c = nil
	}
	if c == nil {
		if c, err = Dial(ctx, addr); err != nil {
			f.Wrong(addr)
			return -1, nil, err
		}
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	hw, err := describeQuorumHW(rctx, c)
	if err != nil && !errors.Is(err, kerr.NotLeaderForPartition) {
		f.Wrong(addr)
	}
	return hw, c, err
}

func describeQuorumHW(ctx context.Context, c *Conn) (int64, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	t := kmsg.NewDescribeQuorumRequestTopic()
	t.Topic = topics.ClusterMetadata
	p := kmsg.NewDescribeQuorumRequestTopicPartition()
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	resp, err := c.Do(ctx, req)
	if err != nil {
		return -1, err
	}
	dq := resp.(*kmsg.DescribeQuorumResponse)
	if dq.ErrorCode != 0 {
		return -1, kerr.ErrorForCode(dq.ErrorCode)
	}
	if len(dq.Topics) != 1 || len(dq.Topics[0].Partitions) != 1 {
		return -1, fmt.Errorf("controllerload: DescribeQuorum answer without the metadata partition")
	}
	pt := dq.Topics[0].Partitions[0]
	if pt.ErrorCode != 0 {
		return -1, kerr.ErrorForCode(pt.ErrorCode)
	}
	return pt.HighWatermark, nil
}
