package rafttest

import (
	"fmt"

	"github.com/kraftd/kraftd/raft"
)

// FailingLog wraps a raft.Log and fails writes on demand. After a failure
// the wrapped log is left untouched (nothing is appended or flushed), which
// is the most a caller may assume of a real disk.
type FailingLog struct {
	raft.Log
	// FailAppend and FailFlush, when set, make Append / Flush return an
	// error wrapping ErrInjected.
	FailAppend, FailFlush bool
	// FailAppendAfter, when > 0, lets that many more Appends succeed and then
	// sets FailAppend. FailFlushAfter does the same for Flush.
	FailAppendAfter, FailFlushAfter int
	// AppendFailures and FlushFailures count the injected failures.
	AppendFailures, FlushFailures int
}

var _ raft.Log = (*FailingLog)(nil)

// NewFailingLog wraps l.
func NewFailingLog(l raft.Log) *FailingLog { return &FailingLog{Log: l} }

func (f *FailingLog) Append(batches []byte) (int64, error) {
	if f.FailAppendAfter > 0 {
		f.FailAppendAfter--
		if f.FailAppendAfter == 0 {
			f.FailAppend = true
		}
		return f.Log.Append(batches)
	}
	if f.FailAppend {
		f.AppendFailures++
		return 0, fmt.Errorf("rafttest: append at %d: %w", f.Log.EndOffset().Offset, ErrInjected)
	}
	return f.Log.Append(batches)
}

func (f *FailingLog) Flush() error {
	if f.flushFails() {
		return fmt.Errorf("rafttest: flush at %d: %w", f.Log.FlushedOffset(), ErrInjected)
	}
	return f.Log.Flush()
}

// BeginFlush returns a job that fails like Flush, deciding when it runs
// (as a disk reports an fsync error): a failing job never runs the wrapped
// log's job.
func (f *FailingLog) BeginFlush() (raft.FlushJob, error) {
	job, err := f.Log.BeginFlush()
	if err != nil {
		return nil, err
	}
	return &failingFlush{f: f, job: job}, nil
}

// flushFails counts down FailFlushAfter and tells whether this flush fails.
func (f *FailingLog) flushFails() bool {
	if f.FailFlushAfter > 0 {
		f.FailFlushAfter--
		if f.FailFlushAfter == 0 {
			f.FailFlush = true
		}
		return false
	}
	if f.FailFlush {
		f.FlushFailures++
		return true
	}
	return false
}

type failingFlush struct {
	f   *FailingLog
	job raft.FlushJob
	ran bool
	err error
}

func (j *failingFlush) End() int64 { return j.job.End() }

// Run is not safe for concurrent use (FailingLog is not).
func (j *failingFlush) Run() error {
	if !j.ran {
		j.ran = true
		if j.f.flushFails() {
			j.err = fmt.Errorf("rafttest: flush to %d: %w", j.job.End(), ErrInjected)
		} else {
			j.err = j.job.Run()
		}
	}
	return j.err
}
