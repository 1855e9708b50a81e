package node

import (
	"fmt"
	"runtime/debug"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/kraftd/kraftd/raft"
)

// activity is what the loop is doing: "start", "poll", "step" (of msg),
// "tick", "append" (during a tick), "maintain" or "shutdown".
type activity struct {
	op  string
	msg raft.Message
}

// MarshalLogObject names the message being stepped: api, version,
// correlation id and sender of a request; api, peer and correlation of a
// response or a send error.
func (a activity) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("op", a.op)
	if a.op != "step" {
		return nil
	}
	m := a.msg
	switch {
	case m.Request != nil:
		enc.AddString("request", kmsg.NameForKey(m.Request.Key()))
		enc.AddInt16("api_key", m.Request.Key())
		enc.AddInt16("api_version", m.Request.GetVersion())
		if r, ok := m.Ref.(*reqRef); ok {
			enc.AddInt32("correlation_id", r.corr)
			enc.AddString("remote", r.remote)
		}
	case m.Response != nil:
		enc.AddString("response", kmsg.NameForKey(m.Response.Key()))
		enc.AddInt16("api_key", m.Response.Key())
		enc.AddInt16("api_version", m.Response.GetVersion())
	}
	if m.Request == nil {
		enc.AddInt32("peer", m.From)
		enc.AddUint64("correlation", m.Corr)
		if m.Err != nil {
			enc.AddString("send_error", m.Err.Error())
		}
	}
	return nil
}

// panicked turns a panic on the loop goroutine (in the driver, the log, the
// application or its listener callbacks) into one fatal line and Run's
// error, so the node stops and its process exits non-zero: no goroutine
// dump per crash, and no node that runs on without its loop. The state is
// the latest published: asking the driver that just panicked may panic
// again.
func (n *Node) panicked(r any) error {
	fields := []zap.Field{zap.Object("doing", n.doing)}
	if st, ok := n.Status(); ok {
		fields = append(fields, zap.Stringer("role", st.Role), zap.Int32("epoch", st.Epoch), zap.Int32("leader_id", st.LeaderID))
	}
	fields = append(fields, zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
	n.lg.Error("fatal: panic on the run loop; stopping the node", fields...)
	return fmt.Errorf("panic on the run loop (%s): %v", n.doing.op, r)
}
