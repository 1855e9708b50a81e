package node

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kraftd/kraftd/logging"
	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/raft"
)

// Refusals of a wrong cluster id from ever new remote addresses are logged
// a bounded number of times, whatever the number of addresses.
func TestClusterIDRefusalLinesBounded(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	n := testNodeWith(t, zap.New(core))
	for i := 0; i < 1000; i++ {
		ref := &reqRef{respond: func(kmsg.Response) {}, remote: fmt.Sprintf("10.0.%d.%d:5000", i/256, i%256), clusterID: "other"}
		resp := kmsg.NewPtrVoteResponse()
		resp.ErrorCode = kerr.InconsistentClusterID.Code
		transport{n}.Reply(ref, resp)
	}
	if got := logs.Len(); got != logging.RemoteBurst {
		t.Fatalf("%d log lines for 1000 refused remotes, want %d", got, logging.RemoteBurst)
	}
}

// A request that finds the loop's inbox full closes its connection at once
// instead of holding the connection goroutine until the loop catches up.
func TestFullInboxRefusesRequest(t *testing.T) {
	n := testNode(t)
	for len(n.inbox) < cap(n.inbox) {
		n.inbox <- raft.Message{}
	}
	ci := &network.ConnInfo{Listener: "CONTROLLER", Remote: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 5000}}
	answered := make(chan kmsg.Response, 1)
	go n.Handle(ci, protocolHeader(52), kmsg.NewPtrVoteRequest(), func(r kmsg.Response) { answered <- r })
	select {
	case r := <-answered:
		if r != nil {
			t.Fatalf("answer %+v, want the connection closed", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a request to a full inbox blocked its connection goroutine")
	}
}
