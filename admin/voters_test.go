package admin

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/protocol"
)

// voterHandler leads (per DescribeCluster) and answers AddRaftVoter with
// NOT_CONTROLLER for the first notController requests, then with code;
// RemoveRaftVoter always with code.
type voterHandler struct {
	quorumHandler
	notController int32
	code          int16
	calls         *atomic.Int32
	got           chan kmsg.Request
}

func (h voterHandler) Handle(c *network.ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	switch r := req.(type) {
	case *kmsg.AddRaftVoterRequest:
		resp := r.ResponseKind().(*kmsg.AddRaftVoterResponse)
		resp.ErrorCode = h.code
		if h.calls.Add(1) <= h.notController {
			resp.ErrorCode = kerr.NotController.Code
		} else if h.code != 0 {
			resp.ErrorMessage = kmsg.StringPtr("voter 4 is already a voter")
		}
		h.got <- r
		respond(resp)
	case *kmsg.RemoveRaftVoterRequest:
		resp := r.ResponseKind().(*kmsg.RemoveRaftVoterResponse)
		resp.ErrorCode = h.code
		h.got <- r
		respond(resp)
	default:
		h.quorumHandler.Handle(c, hdr, req, respond)
	}
}

func startVoterServer(t *testing.T, notController int32, code int16) (string, chan kmsg.Request) {
	got := make(chan kmsg.Request, 10)
	addr := startServer(t, func(port int32) network.Handler {
		return voterHandler{quorumHandler: quorumHandler{port: port}, notController: notController, code: code, calls: new(atomic.Int32), got: got}
	})
	return addr, got
}

// AddRaftVoter finds the leader, retries NOT_CONTROLLER and sends what
// Kafka's admin client sends: no cluster id, AckWhenCommitted.
func TestAddRaftVoter(t *testing.T) {
	addr, got := startVoterServer(t, 1, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l := kmsg.NewAddRaftVoterRequestListener()
	l.Name, l.Host, l.Port = "CONTROLLER", "127.0.0.1", 9095
	dir := [16]byte{0x40, 15: 4}
	if err := AddRaftVoter(ctx, Bootstrap{Addrs: []string{addr}}, 4, dir, []kmsg.AddRaftVoterRequestListener{l}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d AddRaftVoter requests, want 2 (NOT_CONTROLLER, then success)", len(got))
	}
	<-got
	r := (<-got).(*kmsg.AddRaftVoterRequest)
	if r.VoterID != 4 || r.VoterDirectoryID != dir || len(r.Listeners) != 1 || r.Listeners[0].Name != l.Name || r.Listeners[0].Host != l.Host || r.Listeners[0].Port != l.Port ||
		r.ClusterID != nil || !r.AckWhenCommitted || r.TimeoutMillis <= 0 || r.TimeoutMillis > 30000 {
		t.Fatalf("request %+v", r)
	}
}

// An error code other than NOT_CONTROLLER is final and keeps the server's
// message; no message stays nil.
func TestVoterChangeErrors(t *testing.T) {
	addr, got := startVoterServer(t, 0, kerr.DuplicateVoter.Code)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b := Bootstrap{Addrs: []string{addr}, Brokers: true}
	err := AddRaftVoter(ctx, b, 4, [16]byte{1}, nil)
	var re *ResponseError
	if !errors.As(err, &re) || !errors.Is(err, kerr.DuplicateVoter) || re.Message == nil || *re.Message != "voter 4 is already a voter" || len(got) != 1 {
		t.Fatalf("AddRaftVoter: %v (%d requests)", err, len(got))
	}
	<-got
	err = RemoveRaftVoter(ctx, b, 4, [16]byte{1})
	if !errors.As(err, &re) || !errors.Is(err, kerr.DuplicateVoter) || re.Message != nil {
		t.Fatalf("RemoveRaftVoter: %v", err)
	}
	if r := (<-got).(*kmsg.RemoveRaftVoterRequest); r.VoterID != 4 || r.VoterDirectoryID != [16]byte{1} {
		t.Fatalf("request %+v", r)
	}
}
