package raft

import (
	"errors"
	"fmt"
	"time"
)

// accumulator batches the leader's appends. Offsets are assigned when
// records are added; a batch drains when the linger timer (started by the
// first record into an empty accumulator) expires, or as soon as it holds
// Config.AppendFlushBytes: linger bounds the wait of a lone record, and at
// high rates batches go out at the size that keeps replication streaming
// instead of one large batch per linger. One Append call never spans
// batches.
type accumulator struct {
	epoch      Epoch
	nextOffset int64 // offset the next appended record gets
	open       *pendingBatch
	completed  []*pendingBatch // full batches waiting for the drain
	linger     timer           // stopped while empty
}

type pendingBatch struct {
	base    int64
	records [][]byte
	bytes   int // encoded size estimate (upper bound)
}

// batchOverhead and recordOverhead bound the v2 encoding: a 61-byte batch
// header; per record a length varint, attributes, timestamp and offset
// deltas, null key, value length varint and header count.
const (
	batchOverhead  = 61
	recordOverhead = 5 + 1 + 10 + 5 + 1 + 5 + 1
)

func (a *accumulator) reset(next int64, epoch Epoch) {
	*a = accumulator{nextOffset: next, epoch: epoch}
}

// add queues records; uncommitted is what the leader wrote to its log and
// has not committed yet (bytes), which with what waits here is bounded by
// Config.MaxUncommittedBytes: an overloaded leader refuses appends
// (ErrBufferFull) rather than let its backlog, and so commit latency, grow
// without end. An append into an empty backlog is always taken.
func (a *accumulator) add(now time.Time, records [][]byte, cfg Config, uncommitted int) (int64, error) {
	if len(records) == 0 {
		return 0, errors.New("raft: append of zero records")
	}
	size := 0
	for _, r := range records {
		size += recordOverhead + len(r)
	}
	if size+batchOverhead > cfg.MaxBatchBytes {
		return 0, fmt.Errorf("%w: %d records of %d bytes, batch max %d", ErrRecordTooLarge, len(records), size, cfg.MaxBatchBytes)
	}
	if backlog := uncommitted + a.bytes(); cfg.MaxUncommittedBytes > 0 && backlog > 0 && backlog+size > cfg.MaxUncommittedBytes {
		return 0, fmt.Errorf("%w: %d bytes appended and not committed yet (at most %d)", ErrBufferFull, backlog, cfg.MaxUncommittedBytes)
	}
	if a.open != nil && a.open.bytes+size > cfg.MaxBatchBytes {
		if len(a.completed) >= cfg.MaxUndrainedBatches {
			return 0, fmt.Errorf("%w: %d batches wait for the drain", ErrBufferFull, len(a.completed))
		}
		a.completed = append(a.completed, a.open)
		a.open = nil
	}
	if a.open == nil {
		if !a.linger.armed() {
			a.linger.reset(now, cfg.AppendLinger)
		}
		a.open = &pendingBatch{base: a.nextOffset, bytes: batchOverhead}
	}
	a.open.records = append(a.open.records, records...)
	a.open.bytes += size
	a.nextOffset += int64(len(records))
	if cfg.AppendFlushBytes > 0 && a.open.bytes >= cfg.AppendFlushBytes {
		a.completed = append(a.completed, a.open)
		a.open = nil
	}
	return a.nextOffset - 1, nil
}

// bytes is the encoded size bound of everything accumulated.
func (a *accumulator) bytes() int {
	n := 0
	if a.open != nil {
		n = a.open.bytes
	}
	for _, b := range a.completed {
		n += b.bytes
	}
	return n
}

func (a *accumulator) empty() bool { return a.open == nil && len(a.completed) == 0 }

// shouldDrain: a full (or flush-sized) batch is waiting, or the linger
// time has passed.
func (a *accumulator) shouldDrain(now time.Time) bool {
	if a.empty() {
		return false
	}
	return len(a.completed) > 0 || a.linger.expired(now)
}

func (a *accumulator) drainDeadline() (time.Time, bool) {
	if a.empty() {
		return time.Time{}, false
	}
	if len(a.completed) > 0 {
		return time.Time{}.Add(1), true // immediately
	}
	return a.linger.deadline, true
}

// drain returns every batch, the open one included, and empties the
// accumulator.
func (a *accumulator) drain() []*pendingBatch {
	out := a.completed
	if a.open != nil {
		out = append(out, a.open)
	}
	a.completed, a.open, a.linger = nil, nil, timer{}
	return out
}
