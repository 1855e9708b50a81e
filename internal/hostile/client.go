package hostile

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/protocol"
)

// Result is what an attack did.
type Result struct {
	Conns  int   // connections established
	Frames int   // frames sent, whole or in part
	Bytes  int64 // bytes written
	Closed int   // connections the target closed or reset (or dials it refused)
}

func (r Result) String() string {
	return fmt.Sprintf("%d conns, %d frames, %d bytes, %d closed by the target", r.Conns, r.Frames, r.Bytes, r.Closed)
}

// tally counts a Result from many goroutines.
type tally struct{ conns, frames, bytes, closed atomic.Int64 }

func (t *tally) result() Result {
	return Result{Conns: int(t.conns.Load()), Frames: int(t.frames.Load()), Bytes: t.bytes.Load(), Closed: int(t.closed.Load())}
}

// Partition names the raft partition an attack's requests are about.
type Partition struct {
	Topic     string
	TopicID   [16]byte
	Partition int32
	ClusterID *string // nil: null, which a KRaft node accepts
}

// clientID is the attack clients' header client id.
var clientID = "kraftd-hostile"

// ioTimeout bounds one write or read so a target that stops reading cannot
// hold an attack past its context by more than this.
const ioTimeout = 2 * time.Second

// dial opens one connection and counts it; a refused dial counts as closed.
func dial(ctx context.Context, addr string, t *tally) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		if ctx.Err() == nil {
			t.closed.Add(1)
		}
		return nil, err
	}
	t.conns.Add(1)
	// Closing the connection when ctx ends unblocks any read or write on it.
	stop := context.AfterFunc(ctx, func() { c.Close() })
	return &ctxConn{Conn: c, stop: stop}, nil
}

type ctxConn struct {
	net.Conn
	stop func() bool
}

func (c *ctxConn) Close() error {
	c.stop()
	return c.Conn.Close()
}

// write sends b with a deadline and counts it; false when the target closed
// the connection (or stopped reading for ioTimeout) or ctx ended.
func write(ctx context.Context, c net.Conn, b []byte, t *tally) bool {
	_ = c.SetWriteDeadline(time.Now().Add(ioTimeout))
	n, err := c.Write(b)
	t.bytes.Add(int64(n))
	if err != nil {
		if ctx.Err() == nil {
			t.closed.Add(1)
		}
		return false
	}
	return true
}

// frame encodes req at its own version as one request frame.
func frame(corr int32, req kmsg.Request) []byte {
	return protocol.AppendRequest(nil, corr, &clientID, req)
}

// roundTrip sends req (at its own version) on c and reads its answer.
func roundTrip(c net.Conn, corr int32, req kmsg.Request, t *tally) (kmsg.Response, error) {
	_ = c.SetDeadline(time.Now().Add(ioTimeout))
	n, err := c.Write(frame(corr, req))
	t.bytes.Add(int64(n))
	t.frames.Add(1)
	if err != nil {
		return nil, err
	}
	f, err := protocol.ReadFrame(c, protocol.DefaultMaxFrameSize, nil)
	if err != nil {
		return nil, err
	}
	got, err := protocol.ResponseCorrelationID(f)
	if err != nil {
		return nil, err
	}
	if got != corr {
		return nil, fmt.Errorf("hostile: response correlation id %d, sent %d", got, corr)
	}
	return protocol.ParseResponse(f, req.Key(), req.GetVersion())
}

// kraftdApis are the apis a kraftd node serves.
var kraftdApis = node.Apis()

// maxVersion is the highest version kraftd serves for key (also Kafka 4.4.0's).
func maxVersion(key int16) int16 {
	r, _ := kraftdApis.Versions(key)
	return r.Max
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}

// closedByPeer reports whether err from a read means the target closed the
// connection (not our deadline, not our context).
func closedByPeer(ctx context.Context, err error) bool {
	var ne net.Error
	return err != nil && ctx.Err() == nil && !(errors.As(err, &ne) && ne.Timeout())
}

// errNoConnection is returned by an attack none of whose dials succeeded.
var errNoConnection = errors.New("hostile: the target accepted no connection")

// finish is the common end of an attack: its Result, and errNoConnection
// when it never got to send anything.
func finish(t *tally, firstErr error) (Result, error) {
	r := t.result()
	if r.Conns == 0 {
		if firstErr != nil {
			return r, fmt.Errorf("%w: %v", errNoConnection, firstErr)
		}
		return r, errNoConnection
	}
	return r, nil
}
