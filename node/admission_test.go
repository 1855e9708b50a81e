package node

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/topics"
)

// parkingController keeps every request it is served unanswered until release, as the
// active controller keeps a heartbeat until what it appended before has committed.
type parkingController struct {
	fakeController
	mu     sync.Mutex
	parked []ControllerRequest
}

func (p *parkingController) Serve(_ time.Time, _ raft.Status, _ Writer, r ControllerRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.parked = append(p.parked, r)
}

func (p *parkingController) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.parked)
}

func (p *parkingController) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.parked {
		r.Respond(r.Req.ResponseKind())
	}
	p.parked = nil
}

// Requests the controller took and keeps waiting do not count against
// queued.max.requests: with the bound at 2 and more requests parked than that, other
// connections' requests are still read, controller apis and raft apis alike (a leader's
// parked heartbeats once kept its followers' Fetches unread until it resigned).
func TestParkedRequestsLeaveTheQueue(t *testing.T) {
	cfg, port := singleVoter(t)
	cfg.QueuedMaxRequests = 2
	app := &parkingController{}
	n, err := New(cfg, Options{ClusterID: "MkU3OEVBNTcwNTJENDM2Qg", TopicName: topics.ClusterMetadata, App: app, ShutdownTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- n.Run(ctx) }()
	t.Cleanup(func() {
		app.release()
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	dial := func() net.Conn {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err == nil {
				t.Cleanup(func() { c.Close() })
				return c
			}
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
		}
	}
	send := func(c net.Conn, req kmsg.Request) {
		t.Helper()
		if _, err := c.Write(protocol.AppendRequest(nil, 1, nil, req)); err != nil {
			t.Fatal(err)
		}
	}
	const parked = 4
	for i := range parked {
		hb := kmsg.NewPtrBrokerHeartbeatRequest()
		hb.Version, hb.BrokerID = 1, int32(i)
		send(dial(), hb)
	}
	for deadline := time.Now().Add(10 * time.Second); app.count() < parked; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d controller requests reached the controller with queued.max.requests 2", app.count(), parked)
		}
	}
	c := dial()
	dq := kmsg.NewPtrDescribeQuorumRequest()
	dq.Version = 2
	tp := kmsg.NewDescribeQuorumRequestTopic()
	tp.Topic = topics.ClusterMetadata
	tp.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	dq.Topics = []kmsg.DescribeQuorumRequestTopic{tp}
	send(c, dq)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	frame, err := protocol.ReadFrame(bufio.NewReader(c), 1<<20, nil)
	if err != nil {
		t.Fatalf("DescribeQuorum beside %d parked requests: %v", parked, err)
	}
	if _, err := protocol.ParseResponse(frame, int16(kmsg.DescribeQuorum), dq.Version); err != nil {
		t.Fatal(err)
	}
}
