package network

import (
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kraftd/kraftd/protocol"
)

// Requests written by the goroutine that sends them.
//
// Send normally starts the peer's run goroutine to write a request: a goroutine start and,
// on a quiet node, a thread wake-up per request. When the peer is connected over
// plaintext and nothing else is being written, Send writes the request itself with one
// non-blocking write. It never waits for the socket (what it does not take goes to the
// run goroutine, which finishes it within RequestTimeout) and never runs a callback on
// the caller's goroutine (a request it cannot send goes the usual way; a write failure
// fails the connection on a goroutine of its own).

// sendInline writes c at once when the write side is free; false means it did not (the
// caller queues c). Called with pr.mu held, which it releases during the write.
func (pr *peer) sendInline(c *call) bool {
	pc := pr.conn
	if pr.running || len(pr.queue) > 0 || pr.wantConn || pc == nil || pc.raw == nil {
		return false
	}
	pr.running = true // the write side is this goroutine's until running is settled below
	pr.mu.Unlock()
	rest, sent := pc.writeInline(c)
	pr.mu.Lock()
	if pr.stopped != nil {
		// Closed or forgotten meanwhile: stop failed the connection (and c with it,
		// once in flight) and nothing more is written.
		pr.running = false
		if !sent {
			go c.finish(nil, pr.stopped)
		}
		return true
	}
	if !sent {
		pr.running = false
		return false
	}
	if rest != nil {
		pr.rest, pr.restConn = rest, pc
	}
	if rest != nil || len(pr.queue) > 0 || pr.wantConn {
		pr.p.wg.Add(1)
		go pr.run()
	} else {
		pr.running = false
	}
	return true
}

// writeInline registers c in flight and writes it with one non-blocking write. It
// returns the bytes the socket did not take, or sent false when c was not written (it
// cannot be encoded, or the connection died): nothing of c went out then.
func (pc *peerConn) writeInline(c *call) (rest []byte, sent bool) {
	v, err := pc.versionFor(c.req)
	if err != nil {
		return nil, false
	}
	buf, err := protocol.EncodeRequest(pc.wbuf[:0], pc.corr, pc.pr.p.clientID, c.req, v)
	if err != nil {
		return nil, false
	}
	pc.mu.Lock()
	if pc.dead {
		pc.mu.Unlock()
		return nil, false
	}
	c.corr, c.key, c.version = pc.nextCorr(), c.req.Key(), v
	c.conn.Store(pc)
	pc.inflight = append(pc.inflight, c)
	pc.mu.Unlock()
	n, err := writeOnce(pc.raw, net.Buffers{buf})
	if err != nil {
		go pc.fail(fmt.Errorf("network: write to node %d: %w (%w)", pc.pr.id, err, kerr.BrokerNotAvailable))
		return nil, true
	}
	if n < len(buf) {
		pc.wbuf = nil // the rest is written from it
		return buf[n:], true
	}
	if cap(buf) <= peerWriteBufferMax {
		pc.wbuf = buf[:0]
	}
	return nil, true
}

// writeRest finishes an inline send, within RequestTimeout.
func (pc *peerConn) writeRest(rest []byte) {
	pc.nc.SetWriteDeadline(time.Now().Add(pc.pr.p.cfg.RequestTimeout))
	if _, err := pc.nc.Write(rest); err != nil {
		pc.fail(fmt.Errorf("network: write to node %d: %w (%w)", pc.pr.id, err, kerr.BrokerNotAvailable))
	}
	pc.nc.SetWriteDeadline(time.Time{})
}
