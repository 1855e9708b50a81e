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
	if f.FailFlushAfter > 0 {
		f.FailFlushAfter--
		if f.FailFlushAfter == 0 {
			f.FailFlush = true
		}
		return f.Log.Flush()
	}
	if f.FailFlush {
		f.FlushFailures++
		return fmt.Errorf("rafttest: flush at %d: %w", f.Log.FlushedOffset(), ErrInjected)
	}
	return f.Log.Flush()
}
