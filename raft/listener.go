package raft

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/protocol"
)

// listenerCtx tracks one listener's progress.
type listenerCtx struct {
	l Listener
	// next is the next offset to deliver, -1 until set (first snapshot
	// load or offset 0). Invariant: every offset below next was delivered
	// exactly once (or covered by a loaded snapshot).
	next       int64
	lastLeader LeaderAndEpoch
	fired      bool
	dead       bool // panicked: detached
}

// call runs a listener callback, isolating a panic: the listener is logged
// and detached, replication goes on.
func (lc *listenerCtx) call(d *Driver, what string, fn func()) {
	if lc.dead {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			lc.dead = true
			d.lg.Error("listener panicked; detached", zap.String("callback", what), zap.String("panic", fmt.Sprint(r)))
		}
	}()
	fn()
}

// pollListeners applies registrations, delivers committed data and leader
// changes.
func (d *Driver) pollListeners(now time.Time) {
	for _, l := range d.pendingRegs {
		d.listeners = append(d.listeners, &listenerCtx{l: l, next: -1})
	}
	d.pendingRegs = d.pendingRegs[:0]
	if len(d.listeners) == 0 {
		return
	}
	for _, lc := range d.listeners {
		if lc.dead || d.fatal != nil {
			continue
		}
		// Leadership news first: a listener must learn it no longer leads
		// before it is handed a snapshot or data from the new leader. The
		// local leadership itself is announced after delivery, once the
		// listener has caught up to the epoch start.
		d.maybeFireLeaderChange(lc)
		if d.hw >= 0 {
			d.deliver(lc)
		}
		d.maybeFireLeaderChange(lc)
	}
	live := d.listeners[:0]
	for _, lc := range d.listeners {
		if !lc.dead {
			live = append(live, lc)
		}
	}
	clear(d.listeners[len(live):])
	d.listeners = live
}

// maybeFireLeaderChange: for a non-leader when the epoch grows or the
// leader becomes known; for the local leader only once the listener has
// consumed everything before the epoch; never while Resigned.
func (d *Driver) maybeFireLeaderChange(lc *listenerCtx) {
	if lc.dead {
		return
	}
	cur := LeaderAndEpoch{LeaderID: int32(d.leaderID), Epoch: int32(d.epoch)}
	switch s := d.state.(type) {
	case *resignedState:
		return
	case *leaderState:
		if lc.next <= s.epochStartOffset {
			return
		}
	default:
		if d.leaderID == d.self() && d.self() >= 0 {
			cur.LeaderID = -1 // leader id kept from an earlier role; not leading now
		}
	}
	if lc.fired && (cur == lc.lastLeader || cur.Epoch < lc.lastLeader.Epoch ||
		(cur.Epoch == lc.lastLeader.Epoch && cur.LeaderID < 0)) {
		return
	}
	lc.fired, lc.lastLeader = true, cur
	lc.call(d, "HandleLeaderChange", func() { lc.l.HandleLeaderChange(cur) })
}

// deliver hands the listener committed batches (below the HW), loading the
// latest snapshot first when it starts or has fallen behind the log start.
func (d *Driver) deliver(lc *listenerCtx) {
	start := d.log.StartOffset()
	if lc.next < 0 || lc.next < start {
		if snap, ok := d.log.LatestSnapshot(); ok && (lc.next < 0 || lc.next < start) && snap.Offset >= start {
			r, err := d.log.OpenSnapshot(snap)
			if err != nil {
				d.lg.Error("listener: open snapshot failed", zap.Int64("endOffset", snap.Offset), zap.Error(err))
				return
			}
			lc.call(d, "HandleLoadSnapshot", func() { lc.l.HandleLoadSnapshot(snap, r) })
			_ = r.Close()
			lc.next = snap.Offset
		} else if lc.next < 0 {
			lc.next = start
		} else {
			d.lg.Error("listener is behind the log start and no snapshot covers it",
				zap.Int64("next", lc.next), zap.Int64("logStart", start))
			return
		}
	}
	for !lc.dead && lc.next < d.hw {
		data, err := d.log.Read(lc.next, d.cfg.MaxReadBytes)
		if err != nil {
			d.lg.Error("listener: log read failed", zap.Int64("offset", lc.next), zap.Error(err))
			return
		}
		var out []CommittedBatch
		for len(data) > 0 {
			if h, err := protocol.ParseBatchHeader(data); err == nil && h.LastOffset() >= d.hw {
				break // not committed yet (HW lands on batch ends)
			}
			// The values alias the log's bytes, which never change (Log.Read).
			h, values, rest, err := protocol.DecodeValues(data, nil)
			if err != nil {
				if len(out) > 0 {
					break // a trailing partial batch
				}
				// Replication refuses such batches (protocol.ValidateBatch),
				// so this one was damaged on disk or written by an older
				// version. Nothing past it can be delivered: stop the node,
				// as Kafka's listener fails the controller.
				d.fail(fmt.Errorf("raft: committed batch at offset %d does not decode: %w", lc.next, err))
				return
			}
			data = rest
			last := h.LastOffset()
			if last < lc.next {
				continue
			}
			cb := CommittedBatch{BaseOffset: h.BaseOffset, LastOffset: last, Epoch: h.PartitionLeaderEpoch, Control: h.IsControl(),
				Records: values, MaxTimestamp: h.MaxTimestamp}
			if h.BaseOffset < lc.next { // resume inside a batch
				cb.Records = values[lc.next-h.BaseOffset:]
				cb.BaseOffset = lc.next
			}
			if l := d.asLeader(); l != nil {
				if t, ok := l.appendTimes[h.BaseOffset]; ok {
					cb.AppendTimeNanos = t
				}
			}
			out = append(out, cb)
			lc.next = last + 1
		}
		if len(out) == 0 {
			return
		}
		lc.call(d, "HandleCommit", func() { lc.l.HandleCommit(out) })
	}
}

// pruneAppendTimes drops append times every listener has passed.
func (d *Driver) pruneAppendTimes() {
	l := d.asLeader()
	if l == nil || len(l.appendTimes) == 0 {
		return
	}
	low := d.hw
	for _, lc := range d.listeners {
		if !lc.dead && lc.next < low {
			low = lc.next
		}
	}
	for off := range l.appendTimes {
		if off < low {
			delete(l.appendTimes, off)
		}
	}
}
