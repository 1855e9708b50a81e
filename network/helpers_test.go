package network

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

// testTimeout bounds every wait in these tests.
const testTimeout = 10 * time.Second

func observedLogger() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.DebugLevel)
	return zap.New(core), logs
}

// waitLog waits until a log entry whose message or "reason" field contains substr.
func waitLog(t *testing.T, logs *observer.ObservedLogs, substr string) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for time.Now().Before(deadline) {
		for _, e := range logs.All() {
			if strings.Contains(e.Message, substr) {
				return
			}
			for _, f := range e.Context {
				if strings.Contains(f.String, substr) {
					return
				}
				if err, ok := f.Interface.(error); ok && strings.Contains(err.Error(), substr) {
					return
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	var all []string
	for _, e := range logs.All() {
		all = append(all, e.Message+" "+contextString(e.Context))
	}
	t.Fatalf("no log entry containing %q; have:\n%s", substr, strings.Join(all, "\n"))
}

func contextString(fs []zapcore.Field) string {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range fs {
		f.AddTo(enc)
	}
	var b strings.Builder
	for k, v := range enc.Fields {
		b.WriteString(k)
		b.WriteString("=")
		b.WriteString(strings.TrimSpace(strings.ReplaceAll(fmtAny(v), "\n", " ")))
		b.WriteString(" ")
	}
	return b.String()
}

func fmtAny(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if e, ok := v.(error); ok {
		return e.Error()
	}
	return "?"
}

// startServer starts a server with one listener "CONTROLLER" on a random loopback port
// and shuts it down at the end of the test.
// testApis are the apis of the test servers and clients: the server's own and the raft
// driver's.
var testApis = protocol.MustTable(Apis(), raft.Apis())

func startServer(t *testing.T, cfg ServerConfig, h Handler) (*Server, string) {
	t.Helper()
	if cfg.Apis == nil {
		cfg.Apis = testApis
	}
	if cfg.Listeners == nil {
		cfg.Listeners = []ListenerConfig{{Name: "CONTROLLER", Addr: "127.0.0.1:0"}}
	}
	s, err := NewServer(cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s, s.Addrs()["CONTROLLER"].String()
}

// rawClient speaks frames directly, for byte-level control.
type rawClient struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(testTimeout))
	t.Cleanup(func() { nc.Close() })
	return &rawClient{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (c *rawClient) write(b []byte) {
	c.t.Helper()
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *rawClient) send(corr int32, req kmsg.Request) {
	c.t.Helper()
	id := "test"
	c.write(protocol.AppendRequest(nil, corr, &id, req))
}

// recv reads one response frame and decodes it for key/version, checking corr.
func (c *rawClient) recv(corr int32, key, version int16) kmsg.Response {
	c.t.Helper()
	frame, err := protocol.ReadFrame(c.br, protocol.DefaultMaxFrameSize, nil)
	if err != nil {
		c.t.Fatalf("read response to correlation id %d: %v", corr, err)
	}
	got, err := protocol.ResponseCorrelationID(frame)
	if err != nil {
		c.t.Fatal(err)
	}
	if got != corr {
		c.t.Fatalf("correlation id %d, want %d", got, corr)
	}
	resp, err := protocol.ParseResponse(frame, key, version)
	if err != nil {
		c.t.Fatalf("decode response %d: %v", corr, err)
	}
	return resp
}

// expectClosed asserts that the server closes the connection within d (reads may first
// return responses that were already queued; those are skipped).
func (c *rawClient) expectClosed(d time.Duration) time.Duration {
	c.t.Helper()
	start := time.Now()
	c.nc.SetReadDeadline(start.Add(d))
	buf := make([]byte, 4096)
	for {
		_, err := c.br.Read(buf)
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) || isReset(err) {
			return time.Since(start)
		}
		c.t.Fatalf("connection not closed by the server within %v: %v", d, err)
	}
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe"))
}

// apiVersionsRoundTrip checks that the connection is served.
func (c *rawClient) apiVersionsRoundTrip(corr int32) {
	c.t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "test", "1.0"
	c.send(corr, req)
	resp := c.recv(corr, int16(kmsg.ApiVersions), 3).(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
		c.t.Fatalf("ApiVersions: error %d, %d keys", resp.ErrorCode, len(resp.ApiKeys))
	}
}

// voteRequest builds a Vote v1 request whose partition index carries i.
func voteRequest(i int32) *kmsg.VoteRequest {
	req := kmsg.NewPtrVoteRequest()
	req.Version = 1
	t := kmsg.NewVoteRequestTopic()
	t.Topic = "__cluster_metadata"
	p := kmsg.NewVoteRequestTopicPartition()
	p.Partition = i
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

// voteResponseFor echoes the request's partition index.
func voteResponseFor(req *kmsg.VoteRequest) *kmsg.VoteResponse {
	resp := kmsg.NewPtrVoteResponse()
	t := kmsg.NewVoteResponseTopic()
	t.Topic = req.Topics[0].Topic
	p := kmsg.NewVoteResponseTopicPartition()
	p.Partition = req.Topics[0].Partitions[0].Partition
	t.Partitions = append(t.Partitions, p)
	resp.Topics = append(resp.Topics, t)
	return resp
}

func votePartition(resp kmsg.Response) int32 {
	return resp.(*kmsg.VoteResponse).Topics[0].Partitions[0].Partition
}

// echoHandler answers Vote requests at once with voteResponseFor.
var echoHandler = HandlerFunc(func(c *ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	if v, ok := req.(*kmsg.VoteRequest); ok {
		respond(voteResponseFor(v))
		return
	}
	respond(nil)
})
