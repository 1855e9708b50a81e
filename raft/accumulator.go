package raft

import (
	"errors"
	"fmt"
	"time"
)

// accumulator batches the leader's appends. Offsets are assigned when
// records are added; a batch drains when the linger timer (started by the
// first record into an empty accumulator) expires or when it is full.
// One Append call never spans batches.
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

func (a *accumulator) add(now time.Time, records [][]byte, cfg Config) (int64, error) {
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
	return a.nextOffset - 1, nil
}

func (a *accumulator) empty() bool { return a.open == nil && len(a.completed) == 0 }

// shouldDrain: a full batch is waiting, or the linger time has passed.
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
