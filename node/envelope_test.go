package node

import (
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

// fakeController is an active-capable application that answers every
// request it is served with an empty response, and lists no controllers.
type fakeController struct{ ignoreCommits }

func (fakeController) Tick(now time.Time, _ raft.Status, _ Writer) time.Time {
	return now.Add(time.Hour)
}
func (fakeController) Serve(_ time.Time, _ raft.Status, _ Writer, r ControllerRequest) {
	r.Respond(r.Req.ResponseKind())
}
func (fakeController) Active() bool                                                { return true }
func (fakeController) CanBeActive() bool                                           { return true }
func (fakeController) SetRegistration(*kmsg.ControllerRegistrationRequest)         {}
func (fakeController) FinalizedFeatures() (map[string]int16, int64)                { return nil, -1 }
func (fakeController) RegisteredControllers(string) ([]ControllerEndpoint, string) { return nil, "" }
func (fakeController) Prepare(kmsg.Request) any                                    { return nil }

// Envelope's checks come in Kafka's order, each answered on the envelope;
// a node without a controller answers NOT_CONTROLLER.
func TestEnvelopeChecks(t *testing.T) {
	n := testNode(t)
	n.ctrl, n.ctrlq = fakeController{}, make(chan ControllerRequest, 1)
	ci := &network.ConnInfo{Listener: "CONTROLLER", Remote: &net.TCPAddr{}}
	principal := (&kmsg.DefaultPrincipalData{Type: "User", Name: "ANONYMOUS"}).AppendTo(nil)
	inner := func(req kmsg.Request) []byte {
		b := protocol.AppendRequestHeader(nil, int16(req.Key()), req.GetVersion(), 7, nil)
		return req.AppendTo(b)
	}
	unregister := kmsg.NewPtrUnregisterBrokerRequest()
	unregister.BrokerID = 5
	heartbeat := kmsg.NewPtrBrokerHeartbeatRequest()
	for _, tc := range []struct {
		name      string
		principal []byte
		addr      []byte
		data      []byte
		want      int16
	}{
		{"no principal", nil, []byte{127, 0, 0, 1}, inner(unregister), kerr.PrincipalDeserializationFailure.Code},
		{"bad principal", []byte{0, 9}, []byte{127, 0, 0, 1}, inner(unregister), kerr.PrincipalDeserializationFailure.Code},
		{"bad address", principal, []byte{1, 2, 3}, inner(unregister), kerr.InvalidRequest.Code},
		{"bad inner", principal, []byte{127, 0, 0, 1}, []byte{0, 1}, kerr.UnsupportedVersion.Code},
		{"not forwardable", principal, []byte{127, 0, 0, 1}, inner(heartbeat), kerr.InvalidRequest.Code},
		{"forwarded", principal, []byte{127, 0, 0, 1}, inner(unregister), 0},
	} {
		env := kmsg.NewPtrEnvelopeRequest()
		env.RequestPrincipal, env.ClientHostAddress, env.RequestData = tc.principal, tc.addr, tc.data
		var got kmsg.Response
		n.envelope(ci, protocol.RequestHeader{APIKey: int16(kmsg.Envelope)}, env, func(r kmsg.Response) { got = r })
		select {
		case r := <-n.ctrlq: // the loop's part
			if !r.Forwarded {
				t.Errorf("%s: the inner request reached the controller not marked forwarded", tc.name)
			}
			fakeController{}.Serve(time.Time{}, raft.Status{}, nil, r)
		default:
		}
		resp, ok := got.(*kmsg.EnvelopeResponse)
		if !ok || resp.ErrorCode != tc.want {
			t.Errorf("%s: answered %+v", tc.name, got)
			continue
		}
		if tc.want == 0 {
			body := kmsg.NewPtrUnregisterBrokerResponse()
			if len(resp.ResponseData) < 5 || body.ReadFrom(resp.ResponseData[5:]) != nil || body.ErrorCode != 0 {
				t.Errorf("%s: inner response %x", tc.name, resp.ResponseData)
			}
		}
	}
	n.ctrl = nil
	var got kmsg.Response
	env := kmsg.NewPtrEnvelopeRequest()
	n.envelope(ci, protocol.RequestHeader{APIKey: int16(kmsg.Envelope)}, env, func(r kmsg.Response) { got = r })
	if resp, ok := got.(*kmsg.EnvelopeResponse); !ok || resp.ErrorCode != kerr.NotController.Code {
		t.Errorf("without a controller: %+v", got)
	}
}

// A request sent straight to the controller is not marked forwarded.
func TestDirectRequestNotForwarded(t *testing.T) {
	n := testNode(t)
	n.ctrl, n.ctrlq = fakeController{}, make(chan ControllerRequest, 1)
	ci := &network.ConnInfo{Listener: "CONTROLLER", Remote: &net.TCPAddr{}}
	n.toController(ci, protocol.RequestHeader{APIKey: int16(kmsg.UnregisterBroker)}, kmsg.NewPtrUnregisterBrokerRequest(), func(kmsg.Response) {})
	if r := <-n.ctrlq; r.Forwarded {
		t.Fatal("a direct request reached the controller marked forwarded")
	}
}
