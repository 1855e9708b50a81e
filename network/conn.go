package network

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/security"
)

const (
	// readBufferSize is small because every connection, idle or not, holds one: a
	// request of a raft client is a few hundred bytes, and a larger frame body is read
	// around the buffer straight into its own slice.
	readBufferSize = 4 << 10
	// maxScratch: a reused frame or write buffer larger than this is dropped after use
	// rather than kept by a connection that may then stay idle.
	maxScratch = 64 << 10
)

// reason says why a connection is closed. Remote reasons (the peer's fault) are logged
// through logging.Remote; why is the fixed part of the log message, so that the rate
// limit applies per kind of fault, detail the variable part.
type reason struct {
	why, detail string
	local       bool
	quiet       bool // logged already (a refusal): only at debug level
}

func remoteReason(why, detail string) reason { return reason{why: why, detail: detail} }
func localReason(why string) reason          { return reason{why: why, local: true} }

var reasonClientClosed = remoteReason("client closed the connection", "")

// outItem is one entry of a connection's write queue: a response, or the order to close
// once everything before it has been written.
type outItem struct {
	corr   int32
	resp   kmsg.Response
	close  bool
	reason reason
	// raw is a SASL token answered after SaslHandshake v0: a frame without a
	// Kafka header.
	raw   []byte
	isRaw bool
	// rest is the unwritten part of a response written inline (inline.go).
	rest net.Buffers
}

// conn is one inbound connection: a reader goroutine (readLoop) and a writer goroutine
// (writeLoop).
//
// Invariant: at most one request of this connection is in flight (busy), from the end
// of its frame until its response has been written; the reader waits on unmute before
// reading the next frame. So responses are written in request order, and a connection
// holds at most one request frame and one response, whatever its client does.
type conn struct {
	s     *Server
	info  ConnInfo
	stats *listenerStats
	ip    netip.Addr // per-IP quota key
	nc    net.Conn
	br    *bufio.Reader
	log   *zap.Logger // local events
	rlog  *zap.Logger // lines the client causes (logging.Remote)
	// auth authenticates a SASL listener's connection (nil: no SASL); only the
	// reader goroutine uses it.
	auth *security.Authenticator

	closed    chan struct{} // closed by close
	closeOnce sync.Once
	unmute    chan struct{} // cap 1; writer -> reader, the response was written
	wake      chan struct{} // cap 1; enqueue -> writer

	// raw is the socket for inline writes (inline.go); nil: the writer writes all.
	raw syscall.RawConn
	// inlineBuf is the encoding buffer of inline writes, used under writing.
	inlineBuf []byte

	mu       sync.Mutex
	queue    []outItem    // items waiting for the writer: a response and/or a close
	writing  bool         // a goroutine is writing to the socket (writer or inline)
	shutdown bool         // Server.Shutdown began: read no further request
	stop     bool         // a close was queued: read no further request
	busy     bool         // a request is in flight
	held     int64        // frame bytes of the admission share held; -1: none
	scratch  []byte       // frame buffer reused for requests the server answers itself
	live     atomic.Int32 // goroutines still running
}

func newConn(s *Server, listener string, nc net.Conn) *conn {
	c := &conn{
		s: s,
		info: ConnInfo{Listener: listener, Local: nc.LocalAddr(), Remote: nc.RemoteAddr(),
			Protocol: security.Plaintext, Principal: AnonymousPrincipal},
		stats:  s.stats[listener],
		nc:     nc,
		br:     bufio.NewReaderSize(nc, readBufferSize),
		closed: make(chan struct{}),
		unmute: make(chan struct{}, 1),
		wake:   make(chan struct{}, 1),
		held:   -1,
		raw:    inlineConn(nc),
	}
	c.info.conn = c
	fields := []zap.Field{zap.String("listener", listener), zap.Stringer("remote", nc.RemoteAddr())}
	c.log = s.log.With(fields...)
	c.rlog = s.rlog.With(fields...)
	c.live.Store(2)
	return c
}

// close closes the socket at once (queued responses are dropped). Safe to call many
// times and from any goroutine; only the first reason is logged.
func (c *conn) close(r reason) {
	c.closeOnce.Do(func() {
		switch {
		case r == reasonClientClosed || r.quiet:
			c.rlog.Debug(r.why)
		case r.local:
			c.log.Info("closing connection: " + r.why)
		default:
			c.rlog.Info("closing connection: "+r.why, zap.String("reason", r.detail))
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
// for a frame is woken through its read deadline; a request in flight is let finish.
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
		c.queue = append(c.queue, outItem{close: true, reason: localReason("server shutdown")})
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
	if c.tryInline(it) {
		return
	}
	c.queue = append(c.queue, it)
	if it.close {
		c.stop = true
	}
	c.mu.Unlock()
	c.signalWriter()
}

func (c *conn) signalWriter() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// stopReading queues a close after the responses already queued.
func (c *conn) stopReading(r reason) {
	c.enqueue(outItem{close: true, reason: r})
}

// setReadDeadline sets the socket's read deadline (none for a negative d) unless reading
// must stop, in which case it reports false. Holding mu orders it against
// beginShutdown's deadline.
func (c *conn) setReadDeadline(d time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shutdown || c.stop {
		return false
	}
	var t time.Time
	if d >= 0 {
		t = time.Now().Add(d)
	}
	c.nc.SetReadDeadline(t)
	return true
}

func (c *conn) mustStop() (stop, shutdown bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stop || c.shutdown, c.shutdown
}

// hold records the admission share of the frame being read.
func (c *conn) hold(size int64) {
	c.mu.Lock()
	c.held = size
	c.mu.Unlock()
}

// releaseRequest returns the admission share, if one is held.
func (c *conn) releaseRequest() {
	c.mu.Lock()
	held := c.held
	c.held = -1
	c.mu.Unlock()
	if held >= 0 {
		c.s.admit.release(held)
	}
}

// beginRequest marks a request in flight; the reader then waits in awaitWritten.
func (c *conn) beginRequest() {
	c.mu.Lock()
	c.busy = true
	c.mu.Unlock()
}

// requestDone is called by the writer once the response is written: it frees the
// request's admission share and lets the reader read the next frame.
func (c *conn) requestDone() {
	c.releaseRequest()
	c.mu.Lock()
	c.busy = false
	c.mu.Unlock()
	select {
	case c.unmute <- struct{}{}:
	default:
	}
}

// awaitWritten waits until the response of the request in flight is written; false
// means the connection closed first.
func (c *conn) awaitWritten() bool {
	select {
	case <-c.unmute:
		return true
	case <-c.closed:
		return false
	}
}

// errStopped is returned by readFrame when reading stopped for shutdown or a queued close.
var errStopped = errors.New("network: connection stopping")

// frameError is a read failure with the reason to log.
type frameError struct {
	why string
	err error
}

func (e *frameError) Error() string { return e.why + ": " + e.err.Error() }
func (e *frameError) Unwrap() error { return e.err }

// readFrame reads the next request frame. The wait for its first byte is bounded by the
// idle timeout, the rest of the frame by the partial-frame timeout. Its size is checked
// against the frame limit, and its admission share taken, before any body byte is read.
// It peeks the api key so that ApiVersions frames can reuse a scratch buffer: every other
// request gets its own buffer because decoded kmsg byte fields alias the frame and the
// handler may keep them.
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
				return nil, &frameError{"idle", fmt.Errorf("idle for %v: %w", cfg.IdleTimeout, err)}
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
			return &frameError{"partial frame not completed", fmt.Errorf("within %v: %w", cfg.PartialFrameTimeout, err)}
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
	if err := c.checkSASLSize(p); err != nil {
		return nil, err
	}
	size, err := protocol.FrameSize(p, c.s.maxFrame)
	if err != nil {
		return nil, &frameError{"bad frame size" + sizeHint(p), err}
	}
	if !c.s.admit.acquire(int64(size), c.closed, c.s.quit) {
		return nil, errStopped
	}
	c.hold(int64(size))
	deadlineSet = false // the partial-frame time starts again after waiting for admission
	var buf []byte
	if size >= 2 {
		if !need(6) {
			return nil, errStopped
		}
		p, err = c.br.Peek(6)
		if err != nil {
			return nil, wrap(err)
		}
		if int16(binary.BigEndian.Uint16(p[4:])) == int16(kmsg.ApiVersions) {
			buf = c.scratch
		}
	}
	if !need(4 + int(size)) {
		return nil, errStopped
	}
	frame, err := protocol.ReadFrame(c.br, c.s.maxFrame, buf)
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

// readLoop reads, decodes and dispatches requests until the connection stops. After each
// request it waits until the response is written (Kafka keeps a connection muted until
// its response is sent), so a client that does not read its responses stops being read.
func (c *conn) readLoop() {
	defer c.goroutineDone()
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("panic serving connection", zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
			c.close(localReason("internal error"))
		}
	}()
	if !c.tlsHandshake() {
		return
	}
	for {
		if stop, shutdown := c.mustStop(); stop {
			if shutdown {
				c.stopReading(localReason("server shutdown"))
			}
			return
		}
		frame, err := c.readFrame()
		if err != nil {
			c.readFailed(err)
			return
		}
		c.stats.bytesIn.Add(4 + int64(len(frame)))
		if c.auth != nil {
			handled, queued, ok := c.serveSASL(frame)
			if !ok {
				return
			}
			if handled {
				if queued && !c.awaitWritten() {
					return
				}
				continue
			}
		}
		hdr, req, err := c.s.cfg.Apis.ParseRequest(frame)
		switch own := ownAnswer(hdr.APIKey); {
		case err != nil && hdr.APIKey == int16(kmsg.ApiVersions) && errors.Is(err, protocol.ErrUnsupportedVersion):
			// Kafka answers a too-new ApiVersions with its own range so the client
			// can retry with a version both know (KIP-511).
			c.answerSelf(hdr, c.s.cfg.Apis.ApiVersionsResponse(hdr.APIVersion))
		case err != nil:
			// A JVM server closes the connection for an api or version it does not
			// serve and for a body it cannot decode; clients never send those after
			// ApiVersions, so the close is logged as the peer's fault.
			c.stopReading(remoteReason("bad request", fmt.Sprintf("api key %d, version %d, correlation id %d: %v",
				hdr.APIKey, hdr.APIVersion, hdr.CorrelationID, err)))
			return
		case own != nil:
			c.answerSelf(hdr, own.answer(c, hdr, req))
		default:
			c.beginRequest()
			if !c.dispatch(hdr, req) {
				return
			}
		}
		if !c.awaitWritten() {
			return
		}
	}
}

// readFailed ends reading after a frame read error.
func (c *conn) readFailed(err error) {
	var fe *frameError
	switch {
	case errors.Is(err, errSASLRefused): // closed by the Authenticator's outcome
	case errors.Is(err, errStopped):
		if _, shutdown := c.mustStop(); shutdown || c.s.isClosing() {
			c.stopReading(localReason("server shutdown"))
		}
	case errors.As(err, &fe):
		c.close(remoteReason(fe.why, fe.err.Error()))
	case errors.Is(err, protocol.ErrFrameTooLarge) || errors.Is(err, protocol.ErrNegativeFrameSize):
		c.close(remoteReason("bad frame size", err.Error()))
	case errors.Is(err, io.EOF):
		c.stopReading(reasonClientClosed)
	default:
		c.close(remoteReason("read failed", err.Error()))
	}
}

// answerSelf queues a response the server produced itself.
func (c *conn) answerSelf(hdr protocol.RequestHeader, resp kmsg.Response) {
	c.beginRequest()
	c.enqueue(outItem{corr: hdr.CorrelationID, resp: resp})
	if c.s.cfg.OnRequest != nil {
		c.reportRequest(hdr.APIKey, resp, time.Now())
	}
}

// apiVersionsResponse answers a supported ApiVersions request with the server's apis,
// refusing invalid client software names and versions at v3+ with INVALID_REQUEST as
// Kafka does, and listing the finalized kraft.version when FinalizedKRaftVersion is set.
func (s *Server) apiVersionsResponse(req *kmsg.ApiVersionsRequest) kmsg.Response {
	resp := s.cfg.Apis.ApiVersionsResponse(req.Version)
	if req.Version >= 3 && (!validSoftwareString(req.ClientSoftwareName) || !validSoftwareString(req.ClientSoftwareVersion)) {
		resp.ErrorCode = kerr.InvalidRequest.Code
		resp.ApiKeys = nil
		resp.SupportedFeatures = nil
		return resp
	}
	if f := s.cfg.FinalizedKRaftVersion; f != nil && req.Version >= 3 {
		protocol.SetFinalizedKRaftVersion(resp, f())
	}
	if f := s.cfg.ControllerFeatures; f != nil && req.Version >= 3 {
		finalized, epoch := f()
		protocol.SetControllerFeatures(resp, req.Version, finalized, epoch)
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
			c.close(localReason("handler panic"))
			ok = false
		}
	}()
	c.s.h.Handle(&c.info, hdr, req, c.responder(hdr, time.Now()))
	return true
}

// responder returns the respond function of one request.
func (c *conn) responder(hdr protocol.RequestHeader, start time.Time) func(kmsg.Response) {
	var done atomic.Bool
	return func(resp kmsg.Response) {
		if !done.CompareAndSwap(false, true) {
			c.log.Error("respond called twice; ignoring", zap.Int16("api_key", hdr.APIKey),
				zap.Int32("correlation_id", hdr.CorrelationID))
			return
		}
		c.reportRequest(hdr.APIKey, resp, start)
		switch {
		case resp == nil:
			c.log.Debug("handler closes the connection", zap.Int16("api_key", hdr.APIKey),
				zap.Int32("correlation_id", hdr.CorrelationID))
			c.stopReading(localReason("handler closed the connection"))
		case resp.Key() != hdr.APIKey:
			c.log.Error("handler answered with the wrong api; closing", zap.Int16("api_key", hdr.APIKey),
				zap.Int16("response_key", resp.Key()))
			c.stopReading(localReason("handler answered with the wrong api"))
		default:
			resp.SetVersion(hdr.APIVersion)
			c.enqueue(outItem{corr: hdr.CorrelationID, resp: resp})
		}
	}
}

// writeLoop writes each queued response, then lets the reader read the next request.
// Large Fetch records and snapshot chunks are not copied into the write buffer: they go
// out as their own segments of a vectored write (protocol.AppendResponseVectored).
func (c *conn) writeLoop() {
	defer c.goroutineDone()
	// out is the next write: encoded bytes, and the large byte fields between them.
	// Its first buffer starts on the reused write buffer, its last is appended to.
	out := net.Buffers{nil}
	for {
		select {
		case <-c.wake:
		case <-c.closed:
			return
		}
		for {
			it, ok := c.next()
			if !ok {
				break
			}
			if it.close {
				c.close(it.reason)
				return
			}
			if it.rest != nil {
				if !c.writeRest(it.rest) {
					return
				}
				c.doneWriting()
				c.requestDone()
				continue
			}
			if it.isRaw {
				out[0] = binary.BigEndian.AppendUint32(out[0], uint32(len(it.raw)))
				out[0] = append(out[0], it.raw...)
			} else if vectoredWrites {
				out = protocol.AppendResponseVectored(out, it.corr, it.resp)
			} else {
				out[0] = protocol.AppendResponse(out[0], it.corr, it.resp)
			}
			if !c.write(&out) {
				return
			}
			c.doneWriting()
			c.requestDone()
		}
	}
}

// next takes the first queued item, unless an inline write is under way (it wakes the
// writer when done); the writer then holds the write side until doneWriting.
func (c *conn) next() (outItem, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) == 0 || c.writing {
		return outItem{}, false
	}
	c.writing = true
	it := c.queue[0]
	c.queue[0] = outItem{} // drop the reference for the GC
	c.queue = c.queue[1:]
	if len(c.queue) == 0 {
		c.queue = nil
	}
	return it, true
}

// write writes out within WriteTimeout and resets it to the write buffer; on failure it
// closes the connection and reports false. A client that reads too slowly for one
// response in WriteTimeout is cut off.
func (c *conn) write(out *net.Buffers) bool {
	wbuf := (*out)[0]
	c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
	var (
		n   int64
		err error
	)
	if len(*out) == 1 {
		var w int
		w, err = c.nc.Write(wbuf)
		n = int64(w)
	} else {
		bufs := *out
		n, err = bufs.WriteTo(c.nc) // writev; consumes bufs
	}
	c.nc.SetWriteDeadline(time.Time{}) // inline writes (inline.go) have none
	c.stats.bytesOut.Add(n)
	clear(*out) // drop references to records
	if cap(wbuf) > maxScratch {
		wbuf = nil
	}
	*out = append((*out)[:0], wbuf[:0])
	if err != nil {
		c.close(remoteReason("write failed", "write: "+err.Error()))
		return false
	}
	return true
}

func (c *conn) doneWriting() {
	c.mu.Lock()
	c.writing = false
	c.mu.Unlock()
}

// writeRest finishes a response begun inline, within WriteTimeout.
func (c *conn) writeRest(rest net.Buffers) bool {
	c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
	n, err := rest.WriteTo(c.nc)
	c.nc.SetWriteDeadline(time.Time{})
	c.stats.bytesOut.Add(n)
	if err != nil {
		c.close(remoteReason("write failed", "write: "+err.Error()))
		return false
	}
	return true
}

// vectoredWrites lets large byte fields bypass the write buffer (off only in
// benchmarks, for comparison).
var vectoredWrites = true
