package node

import (
	"net"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

// Every controller api kraftd does not serve is answered on the spot with
// NOT_CONTROLLER, naming the raft leader when it is another node; as leader
// kraftd is no active controller either. Nothing reaches the run loop.
func TestControllerApisAnsweredNotController(t *testing.T) {
	n := testNode(t) // node 1
	ci := &network.ConnInfo{Listener: "CONTROLLER", Remote: &net.TCPAddr{}}
	for _, c := range []struct {
		status *raft.Status
		msg    string
	}{
		{nil, "No controller appears to be active."},
		{&raft.Status{LeaderID: -1, Epoch: 3}, "No controller appears to be active."},
		{&raft.Status{LeaderID: 2, Epoch: 4}, "The active controller appears to be node 2."},
		{&raft.Status{LeaderID: 1, Epoch: 5}, "No controller appears to be active."},
	} {
		if c.status != nil {
			n.status.Store(c.status)
		}
		for _, a := range protocol.ControllerApis() {
			key := int16(a.Key)
			req := kmsg.RequestForKey(key)
			req.SetVersion(a.Versions.Max)
			var got kmsg.Response
			n.Handle(ci, protocolHeader(key), req, func(r kmsg.Response) { got = r })
			want := a.ErrorResponse(req, kerr.NotController.Code, c.msg)
			if got == nil || string(protocol.AppendResponse(nil, 1, got)) != string(protocol.AppendResponse(nil, 1, want)) {
				t.Errorf("status %+v, %s: answer %+v, want %+v", c.status, kmsg.NameForKey(key), got, want)
			}
		}
	}
	select {
	case m := <-n.inbox:
		t.Fatalf("a controller api reached the loop: %+v", m)
	default:
	}
}
