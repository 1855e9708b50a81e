package node

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/topics"
)

// A DescribeCluster that arrives the moment the listener is bound is
// answered with the bound endpoint: the handler never reads the node's
// endpoints while Run is filling them in (run with -race; the window is
// short, hence the repetitions).
func TestDescribeClusterAtStartup(t *testing.T) {
	for i := 0; i < 20; i++ {
		describeClusterAtStartup(t)
	}
}

// singleVoter is the configuration of a one-voter quorum on a free port of
// 127.0.0.1, with its log in a fresh temp dir.
func singleVoter(t *testing.T) (*config.Config, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	p, err := config.ParseProperties(fmt.Sprintf("node.id=1\nprocess.roles=controller\n"+
		"listeners=CONTROLLER://127.0.0.1:%d\ncontroller.listener.names=CONTROLLER\n"+
		"controller.quorum.voters=1@127.0.0.1:%d\nlog.dirs=%s\n", port, port, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.New(p, false)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, port
}

func describeClusterAtStartup(t *testing.T) {
	cfg, port := singleVoter(t)
	n, err := New(cfg, Options{ClusterID: "MkU3OEVBNTcwNTJENDM2Qg", TopicName: topics.ClusterMetadata, ShutdownTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}

	// Dial until the listener is bound and send DescribeCluster at once,
	// without the ApiVersions round trip a client would make first.
	type result struct {
		resp *kmsg.DescribeClusterResponse
		err  error
	}
	answer := make(chan result, 1)
	go func() {
		var c net.Conn
		deadline := time.Now().Add(10 * time.Second)
		for c == nil {
			var err error
			if c, err = net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
				if time.Now().After(deadline) {
					answer <- result{err: err}
					return
				}
				c = nil
			}
		}
		defer c.Close()
		req := kmsg.NewPtrDescribeClusterRequest()
		req.Version, req.EndpointType = 1, 2
		if _, err := c.Write(protocol.AppendRequest(nil, 7, nil, req)); err != nil {
			answer <- result{err: err}
			return
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		frame, err := protocol.ReadFrame(bufio.NewReader(c), 1<<20, nil)
		if err != nil {
			answer <- result{err: err}
			return
		}
		resp, err := protocol.ParseResponse(frame, req.Key(), req.Version)
		if err != nil {
			answer <- result{err: err}
			return
		}
		answer <- result{resp: resp.(*kmsg.DescribeClusterResponse)}
	}()

	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- n.Run(ctx) }()
	r := <-answer
	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("run: %v", err)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.resp.Brokers) != 1 || r.resp.Brokers[0].Host != "127.0.0.1" || r.resp.Brokers[0].Port != int32(port) {
		t.Fatalf("brokers %+v, want 127.0.0.1:%d", r.resp.Brokers, port)
	}
}
