package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// captured is one request frame a Kafka node sent to the fake kraftd voter.
type captured struct {
	conn  int    // accept order of the connection it came on
	seq   int    // position on that connection
	frame []byte // the whole frame, size prefix included
	hdr   protocol.RequestHeader
	req   kmsg.Request // nil when err is set
	err   error        // kraftd's ParseRequest error
}

func (c captured) String() string {
	name := kmsg.NameForKey(c.hdr.APIKey)
	if c.err != nil {
		return fmt.Sprintf("conn %d #%d %s v%d: %v", c.conn, c.seq, name, c.hdr.APIVersion, c.err)
	}
	return fmt.Sprintf("conn %d #%d %s v%d %+v", c.conn, c.seq, name, c.hdr.APIVersion, c.req)
}

// fakeVoter is a kraftd voter reduced to kraftd's codec on a plain listener: it answers
// ApiVersions with kraftd's advertisement, grants every vote and acknowledges
// BeginQuorumEpoch / EndQuorumEpoch, and records every frame it receives.
type fakeVoter struct {
	t         *testing.T
	id        int32
	clusterID string
	ln        net.Listener    // plain listener mode
	srv       *network.Server // network.Server mode
	address   string

	mu     sync.Mutex
	epoch  int32 // highest epoch seen in a real vote or BeginQuorumEpoch
	frames []captured
	notify chan struct{} // signalled (non-blocking) on each frame
	conns  []net.Conn
	wg     sync.WaitGroup
}

// newFakeVoter starts the fake on 127.0.0.1. With useServer it is built on kraftd's
// network.Server (which answers ApiVersions itself); otherwise on a plain listener that keeps
// every raw frame for the byte-for-byte re-encoding check.
func newFakeVoter(t *testing.T, id int32, clusterID string, useServer bool) *fakeVoter {
	f := &fakeVoter{t: t, id: id, clusterID: clusterID, notify: make(chan struct{}, 1)}
	if useServer {
		seq := map[*network.ConnInfo]int{}
		conns := map[*network.ConnInfo]int{}
		var smu sync.Mutex
		h := network.HandlerFunc(func(c *network.ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
			smu.Lock()
			n, ok := conns[c]
			if !ok {
				n = len(conns)
				conns[c] = n
			}
			s := seq[c]
			seq[c]++
			smu.Unlock()
			f.record(captured{conn: n, seq: s, hdr: hdr, req: req})
			respond(f.answer(hdr, req))
		})
		srv, err := network.NewServer(network.ServerConfig{
			Apis:      node.Apis(),
			Listeners: []network.ListenerConfig{{Name: kafkatest.ControllerListener, Addr: "127.0.0.1:0"}},
		}, h)
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		f.srv = srv
		f.address = srv.Addrs()[kafkatest.ControllerListener].String()
		t.Cleanup(f.close)
		return f
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.ln = ln
	f.address = ln.Addr().String()
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(f.close)
	return f
}

func (f *fakeVoter) addr() string { return f.address }

func (f *fakeVoter) close() {
	if f.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := f.srv.Shutdown(ctx); err != nil {
			f.t.Logf("network server shutdown: %v", err)
		}
		return
	}
	f.ln.Close()
	f.mu.Lock()
	for _, c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

func (f *fakeVoter) accept() {
	defer f.wg.Done()
	for n := 0; ; n++ {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns = append(f.conns, c)
		f.mu.Unlock()
		f.wg.Add(1)
		go f.serve(n, c)
	}
}

func (f *fakeVoter) record(c captured) {
	f.mu.Lock()
	f.frames = append(f.frames, c)
	f.mu.Unlock()
	select {
	case f.notify <- struct{}{}:
	default:
	}
}

func (f *fakeVoter) snapshot() []captured {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]captured(nil), f.frames...)
}

func (f *fakeVoter) serve(n int, c net.Conn) {
	defer f.wg.Done()
	defer c.Close()
	var buf []byte
	for seq := 0; ; seq++ {
		// Bounded so a forgotten connection cannot outlive the test by much.
		if err := c.SetReadDeadline(time.Now().Add(60 * time.Second)); err != nil {
			return
		}
		frame, err := protocol.ReadFrame(c, protocol.DefaultMaxFrameSize, buf)
		if err != nil {
			return
		}
		buf = frame[:0]
		whole := make([]byte, 4+len(frame))
		copy(whole[4:], frame)
		whole[0], whole[1], whole[2], whole[3] = byte(len(frame)>>24), byte(len(frame)>>16), byte(len(frame)>>8), byte(len(frame))
		hdr, req, perr := node.Apis().ParseRequest(whole[4:])
		f.record(captured{conn: n, seq: seq, frame: whole, hdr: hdr, req: req, err: perr})
		var resp kmsg.Response
		switch {
		case perr != nil && hdr.APIKey == int16(kmsg.ApiVersions) && errors.Is(perr, protocol.ErrUnsupportedVersion):
			resp = node.Apis().ApiVersionsResponse(hdr.APIVersion) // UNSUPPORTED_VERSION, v0 body
		case perr != nil:
			return // Kafka closes on what it cannot parse; so does the fake
		default:
			resp = f.answer(hdr, req)
		}
		if resp == nil {
			return
		}
		if err := c.SetWriteDeadline(time.Now().Add(10 * time.Second)); err != nil {
			return
		}
		if _, err := c.Write(protocol.AppendResponse(nil, hdr.CorrelationID, resp)); err != nil {
			return
		}
	}
}

// answer builds the fake's response through kmsg, as kraftd's raft layer would.
func (f *fakeVoter) answer(hdr protocol.RequestHeader, req kmsg.Request) kmsg.Response {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r := req.(type) {
	case *kmsg.ApiVersionsRequest:
		return node.Apis().ApiVersionsResponse(hdr.APIVersion)
	case *kmsg.VoteRequest:
		resp := r.ResponseKind().(*kmsg.VoteResponse)
		if r.ClusterID == nil || *r.ClusterID != f.clusterID {
			resp.ErrorCode = kerr.InconsistentClusterID.Code
			return resp
		}
		for _, tp := range r.Topics {
			rt := kmsg.NewVoteResponseTopic()
			rt.Topic = tp.Topic
			for _, p := range tp.Partitions {
				if !p.PreVote && p.CandidateEpoch > f.epoch {
					f.epoch = p.CandidateEpoch
				}
				rp := kmsg.NewVoteResponseTopicPartition()
				rp.Partition = p.Partition
				rp.LeaderID = -1
				rp.LeaderEpoch = f.epoch // a voter answers with its own epoch (pre-votes do not bump it)
				rp.VoteGranted = true
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.BeginQuorumEpochRequest:
		resp := r.ResponseKind().(*kmsg.BeginQuorumEpochResponse)
		for _, tp := range r.Topics {
			rt := kmsg.NewBeginQuorumEpochResponseTopic()
			rt.Topic = tp.Topic
			for _, p := range tp.Partitions {
				if p.LeaderEpoch > f.epoch {
					f.epoch = p.LeaderEpoch
				}
				rp := kmsg.NewBeginQuorumEpochResponseTopicPartition()
				rp.Partition, rp.LeaderID, rp.LeaderEpoch = p.Partition, p.LeaderID, p.LeaderEpoch
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.FetchRequest:
		// An unattached Kafka voter fetches from the other voters to discover the leader; the
		// fake leads nothing, so it answers as a voter without a leader.
		resp := r.ResponseKind().(*kmsg.FetchResponse)
		for _, tp := range r.Topics {
			rt := kmsg.NewFetchResponseTopic()
			rt.Topic, rt.TopicID = tp.Topic, tp.TopicID
			for _, p := range tp.Partitions {
				rp := kmsg.NewFetchResponseTopicPartition()
				rp.Partition = p.Partition
				rp.ErrorCode = kerr.NotLeaderForPartition.Code
				rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
				rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = -1, f.epoch
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.EndQuorumEpochRequest:
		resp := r.ResponseKind().(*kmsg.EndQuorumEpochResponse)
		for _, tp := range r.Topics {
			rt := kmsg.NewEndQuorumEpochResponseTopic()
			rt.Topic = tp.Topic
			for _, p := range tp.Partitions {
				rp := kmsg.NewEndQuorumEpochResponseTopicPartition()
				rp.Partition, rp.LeaderID, rp.LeaderEpoch = p.Partition, p.LeaderID, p.LeaderEpoch
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	return nil
}

// waitFor waits until some captured frame satisfies ok, or the deadline passes.
func (f *fakeVoter) waitFor(deadline time.Time, ok func(captured) bool) (captured, bool) {
	for {
		for _, c := range f.snapshot() {
			if ok(c) {
				return c, true
			}
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return captured{}, false
		}
		select {
		case <-f.notify:
		case <-time.After(min(wait, 200*time.Millisecond)):
		}
	}
}

// TestKafkaElectsWithKraftdVote: a real Kafka controller whose static voter set names a
// kraftd listener talks to it: ApiVersions gets kraftd's answer, the controller asks for
// votes, the granted vote makes it leader and it sends BeginQuorumEpoch (and EndQuorumEpoch
// when stopped). Every frame it sends decodes with kraftd's codec; on the plain listener each
// also re-encodes to the same bytes. The same exchange runs over kraftd's network.Server.
func TestKafkaElectsWithKraftdVote(t *testing.T) {
	t.Run("codec", func(t *testing.T) { testKafkaElectsWithKraftdVote(t, false) })
	t.Run("network.Server", func(t *testing.T) { testKafkaElectsWithKraftdVote(t, true) })
}

func testKafkaElectsWithKraftdVote(t *testing.T, useServer bool) {
	env := kafkatest.Require(t)
	clusterID := kafkatest.NewUUID()
	fake := newFakeVoter(t, 2, clusterID, useServer)
	port := kafkatest.FreePort(t)
	start := time.Now()
	ctrl := env.StartController(t, kafkatest.ControllerConfig{
		NodeID:    1,
		ClusterID: clusterID,
		Port:      port,
		Voters:    []string{kafkatest.Voter(1, "127.0.0.1:"+strconv.Itoa(port)), kafkatest.Voter(2, fake.addr())},
	})

	deadline := time.Now().Add(45 * time.Second)
	bqe, ok := fake.waitFor(deadline, func(c captured) bool {
		_, isBQE := c.req.(*kmsg.BeginQuorumEpochRequest)
		return isBQE
	})
	if !ok {
		t.Fatalf("no BeginQuorumEpoch from Kafka within 45s; frames received:\n%s", listFrames(fake.snapshot()))
	}
	if err := ctrl.WaitLog("Completed transition to Leader", 10*time.Second); err != nil {
		t.Error(err)
	}
	elected := time.Since(start)
	// A graceful shutdown of the leader tells the other voter (EndQuorumEpoch). Kafka then
	// waits up to its shutdown timeout for a successor the fake never becomes: kill it once
	// the EndQuorumEpoch has arrived.
	ctrl.Terminate()
	if _, ok := fake.waitFor(time.Now().Add(15*time.Second), func(c captured) bool {
		_, isEQE := c.req.(*kmsg.EndQuorumEpochRequest)
		return isEQE
	}); !ok {
		t.Errorf("no EndQuorumEpoch from the Kafka leader after SIGTERM")
	}
	ctrl.Kill()
	t.Logf("JVM started and elected (BeginQuorumEpoch received) after %v, stopped after %v", elected.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	frames := fake.snapshot()
	t.Logf("frames from Kafka %s:\n%s", kafkatest.KafkaVersion, listFrames(frames))

	var sawApiVersions, sawVote, sawPreVote bool
	firstOnConn := map[int]captured{}
	for _, c := range frames {
		if _, seen := firstOnConn[c.conn]; !seen {
			firstOnConn[c.conn] = c
		}
		if c.err != nil {
			// Only an ApiVersions version above kraftd's may fail (the client then downgrades).
			if !(c.hdr.APIKey == int16(kmsg.ApiVersions) && errors.Is(c.err, protocol.ErrUnsupportedVersion)) {
				t.Errorf("kraftd cannot decode a real frame: %v\nframe: %x", c.err, c.frame)
			}
			continue
		}
		if re := protocol.AppendRequest(nil, c.hdr.CorrelationID, c.hdr.ClientID, c.req); c.frame != nil && !bytes.Equal(re, c.frame) {
			t.Errorf("%s re-encodes differently:\nkafka:  %x\nkraftd: %x", c, c.frame, re)
		}
		switch r := c.req.(type) {
		case *kmsg.ApiVersionsRequest:
			sawApiVersions = true
		case *kmsg.VoteRequest:
			if r.ClusterID == nil || *r.ClusterID != clusterID {
				t.Errorf("Vote carries cluster id %v, want %s", r.ClusterID, clusterID)
			}
			for _, tp := range r.Topics {
				for _, p := range tp.Partitions {
					if tp.Topic != "__cluster_metadata" || p.Partition != 0 || p.CandidateID != 1 {
						t.Errorf("Vote for %s-%d from %d", tp.Topic, p.Partition, p.CandidateID)
					}
					if p.PreVote {
						sawPreVote = true
					} else {
						sawVote = true
					}
				}
			}
		}
	}
	for conn, c := range firstOnConn {
		// network.Server answers ApiVersions itself: its handler never sees it.
		if !useServer && c.hdr.APIKey != int16(kmsg.ApiVersions) {
			t.Errorf("connection %d opened with %s, not ApiVersions", conn, kmsg.NameForKey(c.hdr.APIKey))
		}
	}
	if (!useServer && !sawApiVersions) || !sawVote {
		t.Errorf("saw ApiVersions %v, Vote %v (pre-vote %v): Kafka did not go through kraftd's answer to an election", sawApiVersions, sawVote, sawPreVote)
	}
	b := bqe.req.(*kmsg.BeginQuorumEpochRequest)
	if b.ClusterID == nil || *b.ClusterID != clusterID || len(b.Topics) != 1 || len(b.Topics[0].Partitions) != 1 ||
		b.Topics[0].Partitions[0].LeaderID != 1 || b.Topics[0].Partitions[0].LeaderEpoch < 1 {
		t.Errorf("BeginQuorumEpoch %+v", b)
	}
}

// listFrames lists the frames, collapsing runs of the same api and version on a connection
// (an unattached Kafka voter polls with Fetch every few milliseconds).
func listFrames(cs []captured) string {
	var b bytes.Buffer
	for i := 0; i < len(cs); {
		j := i + 1
		for j < len(cs) && cs[j].conn == cs[i].conn && cs[j].hdr.APIKey == cs[i].hdr.APIKey &&
			cs[j].hdr.APIVersion == cs[i].hdr.APIVersion && (cs[j].err == nil) == (cs[i].err == nil) {
			j++
		}
		line := cs[i].String()
		if len(line) > 600 {
			line = line[:600] + "..."
		}
		if j-i > 1 {
			fmt.Fprintf(&b, "  %s (and %d more like it)\n", line, j-i-1)
		} else {
			fmt.Fprintf(&b, "  %s\n", line)
		}
		i = j
	}
	return b.String()
}
