package network

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/protocol"
)

const (
	readBufferSize = 64 << 10
	// flushThreshold: the writer writes out once this many response bytes are buffered
	// even if more responses are queued, so a burst is not held in memory.
	flushThreshold = 256 << 10
	// maxQueued bounds responses the reader itself queues (ApiVersions answers) ahead of
	// the writer, for a client that pipelines without reading.
	maxQueued = 256
	// maxScratch: a reused frame buffer larger than this is dropped rather than kept.
	maxScratch = 64 << 10
)

// outItem is one entry of a connection's write queue: a response, or the order to close
// once everything before it has been written.
type outItem struct {
	corr   int32
	resp   kmsg.Response
	close  bool
	reason string
}

// conn is one inbound connection: a reader goroutine (readLoop) and a writer goroutine
// (writeLoop).
//
// Invariant: at most one request of this connection is with the Handler (busy); the
// reader waits on unmute before reading the next frame, so responses are queued, and
// therefore written, in request order.
type conn struct {
	s    *Server
	info ConnInfo
	nc   net.Conn
	br   *bufio.Reader
	log  *zap.Logger

	closed    chan struct{} // closed by close
	closeOnce sync.Once
	unmute    chan struct{} // cap 1; respond -> reader
	wake      chan struct{} // cap 1; enqueue -> writer
	space     chan struct{} // cap 1; writer -> reader, the queue was drained

	mu       sync.Mutex
	queue    []outItem // responses waiting for the writer
	spare    []outItem // the writer's drained slice, reused
	shutdown bool      // Server.Shutdown began: read no further request
	stop     bool      // a close was queued: read no further request
	busy     bool      // a request is with the Handler

	scratch []byte       // frame buffer reused for requests the server answers itself
	live    atomic.Int32 // goroutines still running
}

func newConn(s *Server, listener string, nc net.Conn) *conn {
	c := &conn{
		s:      s,
		info:   ConnInfo{Listener: listener, Local: nc.LocalAddr(), Remote: nc.RemoteAddr()},
		nc:     nc,
		br:     bufio.NewReaderSize(nc, readBufferSize),
		closed: make(chan struct{}),
		unmute: make(chan struct{}, 1),
		wake:   make(chan struct{}, 1),
		space:  make(chan struct{}, 1),
	}
	c.log = s.log.With(zap.String("listener", listener), zap.Stringer("remote", nc.RemoteAddr()))
	c.live.Store(2)
	return c
}

// close closes the socket at once (queued responses are dropped). Safe to call many
// times and from any goroutine; only the first reason is logged.
func (c *conn) close(reason string) {
	c.closeOnce.Do(func() {
		if reason == reasonClientClosed {
			c.log.Debug("connection closed by the client")
		} else {
			c.log.Info("closing connection", zap.String("reason", reason))
		}
		close(c.closed)
		c.nc.Close()
	})
}

func (c *conn) goroutineDone() {
	c.s.connWG.Done()
	if c.live.Add(-1) == 0 {
		c.s.removeConn(c)
	}
}

// beginShutdown makes the reader stop before the next request. A reader blocked waiting
// for a frame is woken through its read deadline; a request being served is let finish.
func (c *conn) beginShutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.shutdown = true
	if !c.busy {
		c.nc.SetReadDeadline(time.Now())
	}
	if len(c.queue) == 0 && !c.busy {
		// Nothing to finish: queue the close so the writer ends the connection even if
		// the reader is stuck in a read that ignores the deadline.
		c.queue = append(c.queue, outItem{close: true, reason: "server shutdown"})
		c.stop = true
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// enqueue hands an item to the writer. It never blocks.
func (c *conn) enqueue(it outItem) {
	c.mu.Lock()
	c.queue = append(c.queue, it)
	if it.close {
		c.stop = true
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// stopReading queues a close after the responses already queued and reports the reason.
func (c *conn) stopReading(reason string) {
	c.enqueue(outItem{close: true, reason: reason})
}

// setReadDeadline sets the socket's read deadline unless reading must stop, in which
// case it reports false. Holding mu orders it against beginShutdown's deadline.
func (c *conn) setReadDeadline(d time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shutdown || c.stop {
		return false
	}
	c.nc.SetReadDeadline(time.Now().Add(d))
	return true
}

func (c *conn) mustStop() (stop, shutdown bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stop || c.shutdown, c.shutdown
}

const reasonClientClosed = "client closed the connection"

// errStopped is returned by readFrame when reading stopped for shutdown or a queued close.
var errStopped = errors.New("network: connection stopping")

// frameError is a read failure with the reason to log.
type frameError struct {
	reason string
	err    error
}

func (e *frameError) Error() string { return e.reason + ": " + e.err.Error() }
func (e *frameError) Unwrap() error { return e.err }

// readFrame reads the next request frame. The wait for its first byte is bounded by the
// idle timeout, the rest of the frame by the partial-frame timeout. It peeks the api key
// so that ApiVersions frames can reuse a scratch buffer: every other request gets its own
// buffer because decoded kmsg byte fields alias the frame and the handler may keep them.
func (c *conn) readFrame() ([]byte, error) {
	cfg := &c.s.cfg
	if c.br.Buffered() == 0 {
		if !c.setReadDeadline(cfg.IdleTimeout) {
			return nil, errStopped
		}
		if _, err := c.br.Peek(1); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				if _, shutdown := c.mustStop(); shutdown {
					return nil, errStopped
				}
				return nil, &frameError{fmt.Sprintf("idle for %v", cfg.IdleTimeout), err}
			}
			return nil, err
		}
	}
	// A frame has started: the rest must arrive within PartialFrameTimeout. The deadline is
	// only set when the socket must be read, so pipelined frames already buffered cost no
	// deadline update.
	deadlineSet := false
	need := func(n int) bool {
		if c.br.Buffered() < n && !deadlineSet {
			deadlineSet = true
			return c.setReadDeadline(cfg.PartialFrameTimeout)
		}
		return true
	}
	wrap := func(err error) error {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if _, shutdown := c.mustStop(); shutdown {
				return errStopped
			}
			return &frameError{fmt.Sprintf("partial frame not completed within %v", cfg.PartialFrameTimeout), err}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return &frameError{"client closed the connection inside a frame", err}
		}
		return err
	}
	if !need(4) {
		return nil, errStopped
	}
	p, err := c.br.Peek(4)
	if err != nil {
		return nil, wrap(err)
	}
	size, err := protocol.FrameSize(p, cfg.MaxFrameSize)
	if err != nil {
		return nil, &frameError{"bad frame size" + sizeHint(p), err}
	}
	var buf []byte
	if size >= 2 {
		if !need(6) {
			return nil, errStopped
		}
		p, err = c.br.Peek(6)
		if err != nil {
			return nil, wrap(err)
		}
		if int16(binary.BigEndian.Uint16(p[4:])) == protocol.KeyApiVersions {
			buf = c.scratch
		}
	}
	if !need(4 + int(size)) {
		return nil, errStopped
	}
	frame, err := protocol.ReadFrame(c.br, cfg.MaxFrameSize, buf)
	if err != nil {
		return nil, wrap(err)
	}
	if buf != nil && cap(frame) > cap(c.scratch) && cap(frame) <= maxScratch {
		c.scratch = frame[:0]
	}
	return frame, nil
}

// sizeHint names the usual reasons for a nonsense size prefix (as franz-go does).
func sizeHint(p []byte) string {
	switch {
	case string(p) == "GET " || string(p) == "POST" || string(p) == "HTTP" || string(p) == "PUT ":
		return " (an HTTP client is talking to a Kafka port)"
	case p[0] == 0x16 && p[1] == 0x03:
		return " (a TLS handshake on a plaintext listener)"
	}
	return ""
}

// readLoop reads, decodes and dispatches requests until the connection stops.
func (c *conn) readLoop() {
	defer c.goroutineDone()
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("panic serving connection", zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
			c.close("internal error")
		}
	}()
	for {
		if stop, shutdown := c.mustStop(); stop {
			if shutdown {
				c.stopReading("server shutdown")
			}
			return
		}
		frame, err := c.readFrame()
		if err != nil {
			c.readFailed(err)
			return
		}
		hdr, req, err := protocol.ParseRequest(frame)
		if err != nil {
			if hdr.APIKey == protocol.KeyApiVersions && errors.Is(err, protocol.ErrUnsupportedVersion) {
				// Kafka answers a too-new ApiVersions with its own range so the client
				// can retry with a version both know (KIP-511).
				c.answerSelf(hdr, protocol.NewApiVersionsResponse(hdr.APIVersion))
				continue
			}
			// A JVM server closes the connection for an api or version it does not
			// serve and for a body it cannot decode; clients never send those after
			// ApiVersions, so the close is logged as the peer's fault.
			c.stopReading(fmt.Sprintf("bad request (api key %d, version %d, correlation id %d): %v",
				hdr.APIKey, hdr.APIVersion, hdr.CorrelationID, err))
			return
		}
		if hdr.APIKey == protocol.KeyApiVersions {
			c.answerSelf(hdr, apiVersionsResponse(req.(*kmsg.ApiVersionsRequest)))
			continue
		}
		c.mu.Lock()
		c.busy = true
		c.mu.Unlock()
		if !c.dispatch(hdr, req) {
			return
		}
		select {
		case <-c.unmute:
		case <-c.closed:
			return
		}
	}
}

// readFailed ends reading after a frame read error.
func (c *conn) readFailed(err error) {
	var fe *frameError
	switch {
	case errors.Is(err, errStopped):
		if _, shutdown := c.mustStop(); shutdown {
			c.stopReading("server shutdown")
		}
	case errors.As(err, &fe):
		c.close(fe.Error())
	case errors.Is(err, protocol.ErrFrameTooLarge) || errors.Is(err, protocol.ErrNegativeFrameSize):
		c.close(err.Error())
	case errors.Is(err, io.EOF):
		c.stopReading(reasonClientClosed)
	default:
		c.close("read: " + err.Error())
	}
}

// answerSelf queues a response the server produced itself, waiting while the client has
// maxQueued unwritten responses (a client that pipelines without reading).
func (c *conn) answerSelf(hdr protocol.RequestHeader, resp kmsg.Response) {
	c.mu.Lock()
	c.queue = append(c.queue, outItem{corr: hdr.CorrelationID, resp: resp})
	full := len(c.queue) >= maxQueued
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	if full {
		select {
		case <-c.space:
		case <-c.closed:
		}
	}
}

// apiVersionsResponse answers a supported ApiVersions request, refusing invalid client
// software names and versions at v3+ with INVALID_REQUEST as Kafka does.
func apiVersionsResponse(req *kmsg.ApiVersionsRequest) kmsg.Response {
	resp := protocol.NewApiVersionsResponse(req.Version)
	if req.Version >= 3 && (!validSoftwareString(req.ClientSoftwareName) || !validSoftwareString(req.ClientSoftwareVersion)) {
		resp.ErrorCode = kerr.InvalidRequest.Code
		resp.ApiKeys = nil
		resp.SupportedFeatures = nil
	}
	return resp
}

// validSoftwareString matches Kafka's [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?.
func validSoftwareString(s string) bool {
	if s == "" {
		return false
	}
	alnum := func(b byte) bool {
		return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
	}
	if !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if b := s[i]; !alnum(b) && b != '-' && b != '.' {
			return false
		}
	}
	return true
}

// dispatch hands a request to the Handler. A panic in the handler closes this connection
// only (as net/http does); it reports false then.
func (c *conn) dispatch(hdr protocol.RequestHeader, req kmsg.Request) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("handler panic", zap.Int16("api_key", hdr.APIKey),
				zap.Int32("correlation_id", hdr.CorrelationID), zap.Any("panic", r),
				zap.ByteString("stack", debug.Stack()))
			c.close("handler panic")
			ok = false
		}
	}()
	c.s.h.Handle(&c.info, hdr, req, c.responder(hdr))
	return true
}

// responder returns the respond function of one request.
func (c *conn) responder(hdr protocol.RequestHeader) func(kmsg.Response) {
	var done atomic.Bool
	return func(resp kmsg.Response) {
		if !done.CompareAndSwap(false, true) {
			c.log.Error("respond called twice; ignoring", zap.Int16("api_key", hdr.APIKey),
				zap.Int32("correlation_id", hdr.CorrelationID))
			return
		}
		switch {
		case resp == nil:
			c.stopReading(fmt.Sprintf("handler closed the connection (api key %d, correlation id %d)",
				hdr.APIKey, hdr.CorrelationID))
		case resp.Key() != hdr.APIKey:
			c.log.Error("handler answered with the wrong api; closing", zap.Int16("api_key", hdr.APIKey),
				zap.Int16("response_key", resp.Key()))
			c.stopReading("handler answered with the wrong api")
		default:
			resp.SetVersion(hdr.APIVersion)
			c.enqueue(outItem{corr: hdr.CorrelationID, resp: resp})
		}
		c.mu.Lock()
		c.busy = false
		c.mu.Unlock()
		select {
		case c.unmute <- struct{}{}:
		default:
		}
	}
}

// writeLoop encodes queued responses into one buffer and writes it when the queue is
// empty (or the buffer is large), so pipelined responses share a write syscall. Large
// Fetch records and snapshot chunks are not copied: they go out as their own segments
// of a vectored write (protocol.AppendResponseVectored).
func (c *conn) writeLoop() {
	defer c.goroutineDone()
	// out is the next write: encoded bytes, and the large byte fields between them.
	// Its first buffer starts on the reused write buffer, its last is appended to.
	out := net.Buffers{nil}
	flush := func() bool {
		if len(out) == 1 && len(out[0]) == 0 {
			return true
		}
		wbuf := out[0]
		c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
		var err error
		if len(out) == 1 {
			_, err = c.nc.Write(wbuf)
		} else {
			bufs := out
			_, err = bufs.WriteTo(c.nc) // writev; consumes bufs
		}
		clear(out) // drop references to records
		if cap(wbuf) > 4*flushThreshold {
			wbuf = nil
		}
		out = append(out[:0], wbuf[:0])
		if err != nil {
			c.close("write: " + err.Error())
			return false
		}
		return true
	}
	for {
		select {
		case <-c.wake:
		case <-c.closed:
			return
		}
		for {
			c.mu.Lock()
			items := c.queue
			c.queue = c.spare[:0]
			c.spare = nil
			c.mu.Unlock()
			if len(items) == 0 {
				break
			}
			select {
			case c.space <- struct{}{}:
			default:
			}
			for i := range items {
				it := items[i]
				items[i] = outItem{} // drop the reference for the GC
				if it.close {
					if flush() {
						c.close(it.reason)
					}
					return
				}
				if vectoredWrites {
					out = protocol.AppendResponseVectored(out, it.corr, it.resp)
				} else {
					out[len(out)-1] = protocol.AppendResponse(out[len(out)-1], it.corr, it.resp)
				}
				if buffered(out) >= flushThreshold && !flush() {
					return
				}
			}
			c.mu.Lock()
			c.spare = items[:0]
			more := len(c.queue) > 0
			c.mu.Unlock()
			if !more {
				break
			}
		}
		if !flush() {
			return
		}
	}
}

// vectoredWrites lets large byte fields bypass the write buffer (off only in
// benchmarks, for comparison).
var vectoredWrites = true

// buffered returns the bytes in bufs.
func buffered(bufs net.Buffers) int {
	n := 0
	for _, b := range bufs {
		n += len(b)
	}
	return n
}
