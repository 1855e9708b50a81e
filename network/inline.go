package network

import (
	"net"
	"syscall"

	"github.com/kraftd/kraftd/protocol"
)

// Answers written by the goroutine that produces them.
//
// A response normally goes through the connection's writer goroutine, which then lets the
// reader go on: two goroutine hand-offs per answer, and on a quiet node each one wakes a
// sleeping thread. When nothing is queued and no write is under way, the responder (the
// raft loop) writes a plaintext connection's response of up to maxInlineBytes itself,
// with one non-blocking writev. It never waits for the socket: whatever the socket does
// not take goes to the writer, first in the queue, and the writer finishes it under
// WriteTimeout as usual.

// inlineConn returns the raw socket of a plaintext TCP connection, or nil (TLS and other
// connections always go through the writer).
func inlineConn(nc net.Conn) syscall.RawConn {
	if cc, ok := nc.(*countedConn); ok {
		nc = cc.Conn
	}
	tc, ok := nc.(*net.TCPConn)
	if !ok || !inlineWrites {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// tryInline writes it at once if the write side is idle; false means it was not
// attempted (the caller queues it). Called with c.mu held; returns with it released
// when it reports true.
func (c *conn) tryInline(it outItem) bool {
	if c.raw == nil || it.resp == nil || it.close || it.isRaw || c.writing || c.stop || len(c.queue) > 0 {
		return false
	}
	c.writing = true
	c.mu.Unlock()

	out := protocol.AppendResponseVectored(net.Buffers{c.inlineBuf[:0]}, it.corr, it.resp)
	first := out[0]
	var (
		n   int
		err error
	)
	if size(out) <= maxInlineBytes {
		n, err = writeOnce(c.raw, out)
		c.stats.bytesOut.Add(int64(n))
		out = consumed(out, n)
	}
	if err == nil && len(out) == 0 && cap(first) <= maxScratch {
		c.inlineBuf = first[:0] // nothing queued holds a part of it
	} else {
		c.inlineBuf = nil
	}

	c.mu.Lock()
	c.writing = false
	switch {
	case err != nil:
		// Nothing more is written: the connection is closing.
	case len(out) > 0:
		// The rest goes first: the writer finishes this response, then what was queued.
		c.queue = append([]outItem{{rest: out}}, c.queue...)
	}
	wake := len(c.queue) > 0
	c.mu.Unlock()
	if err != nil {
		c.close(remoteReason("write failed", "write: "+err.Error()))
		return true
	}
	if wake {
		c.signalWriter()
	}
	if len(out) == 0 {
		c.requestDone()
	}
	return true
}

// maxInlineBytes bounds the answers written inline. Copying a large one into the
// socket (on loopback, the receiver's processing too) would hold up the raft loop,
// while the writer does it in parallel; the hand-off is cheap beside such a write.
const maxInlineBytes = 64 << 10

func size(bufs net.Buffers) int {
	n := 0
	for _, b := range bufs {
		n += len(b)
	}
	return n
}

// consumed drops the first n bytes of bufs.
func consumed(bufs net.Buffers, n int) net.Buffers {
	for n > 0 && len(bufs) > 0 {
		if n < len(bufs[0]) {
			bufs[0] = bufs[0][n:]
			return bufs
		}
		n -= len(bufs[0])
		bufs = bufs[1:]
	}
	for len(bufs) > 0 && len(bufs[0]) == 0 {
		bufs = bufs[1:]
	}
	return bufs
}
