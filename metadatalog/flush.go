package metadatalog

import (
	"errors"
	"fmt"
	"sync"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/vfs"
)

// Flush implements raft.Log: fsync every segment written since the last
// flush, then the epoch checkpoint if it changed. An fsync error is final:
// retrying could report data durable that the kernel dropped.
func (l *Log) Flush() error {
	if err := l.checkWritable(); err != nil {
		return err
	}
	if err := l.settleFlush(); err != nil {
		return err
	}
	j := l.prepareFlush()
	if err := j.sync(); err != nil {
		return l.fail(err)
	}
	l.noteFlushed(j.end)
	return nil
}

// BeginFlush implements raft.Log: the job syncs the segment files written
// since the last flush and then the epoch checkpoint, as Flush does, on
// whichever goroutine runs it; the driver's goroutine may append meanwhile
// (a write and an fsync of one file may overlap: the fsync covers what was
// written before it began, which includes everything below End).
func (l *Log) BeginFlush() (raft.FlushJob, error) {
	if err := l.checkWritable(); err != nil {
		return nil, err
	}
	if err := l.settleFlush(); err != nil {
		return nil, err
	}
	j := l.prepareFlush()
	l.pending = j
	return j, nil
}

// prepareFlush captures what a flush must sync and counts it clean: bytes
// written afterwards mark their segment dirty again.
func (l *Log) prepareFlush() *flushJob {
	j := &flushJob{l: l, end: l.endOffset(), done: make(chan struct{})}
	for _, s := range l.segs {
		if s.dirty {
			j.files = append(j.files, s.f)
			j.paths = append(j.paths, s.path)
			s.dirty = false
		}
	}
	if l.epochsDirty {
		j.checkpoint = l.epochs.encode()
		l.epochsDirty = false
	}
	return j
}

// settleFlush runs the pending job, or waits for the goroutine running it,
// before anything that cuts, removes or closes a segment file or writes
// the epoch checkpoint. Its error fails the log.
func (l *Log) settleFlush() error {
	j := l.pending
	if j == nil {
		return nil
	}
	l.pending = nil
	if err := j.Run(); err != nil {
		return l.fail(err)
	}
	return nil
}

// abandonFlush, for Close: a job not yet started never runs (Close does
// not flush); one running is waited for, so no fsync outlives the files.
func (l *Log) abandonFlush() {
	if j := l.pending; j != nil {
		l.pending = nil
		j.abandon()
	}
}

// noteFlushed raises the flushed offset; a job's goroutine may call it.
func (l *Log) noteFlushed(end int64) {
	for {
		cur := l.flushed.Load()
		if end <= cur || l.flushed.CompareAndSwap(cur, end) {
			return
		}
	}
}

var errFlushAbandoned = errors.New("metadatalog: flush abandoned: the log was closed")

// flushJob is a flush prepared on the driver's goroutine and run once,
// on any goroutine. It touches only what it captured, the file system and
// the flushed offset (atomic).
type flushJob struct {
	l          *Log
	end        int64
	files      []vfs.File
	paths      []string
	checkpoint []byte // epoch checkpoint to write, nil when unchanged

	mu      sync.Mutex
	started bool
	done    chan struct{} // closed once the job ran or was abandoned
	err     error         // set before done is closed
}

func (j *flushJob) End() int64 { return j.end }

// Run implements raft.FlushJob.
func (j *flushJob) Run() error {
	if j.claim() {
		j.err = j.sync()
		if j.err == nil {
			j.l.noteFlushed(j.end)
		}
		close(j.done)
	}
	<-j.done
	return j.err
}

func (j *flushJob) abandon() {
	if j.claim() {
		j.err = errFlushAbandoned
		close(j.done)
	}
	<-j.done
}

// claim marks the job started and tells whether the caller came first
// (and so runs or abandons it).
func (j *flushJob) claim() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	first := !j.started
	j.started = true
	return first
}

// sync is the flush itself: the segments, then the epoch checkpoint.
func (j *flushJob) sync() error {
	start := j.l.opts.Now()
	defer func() {
		if took := j.l.opts.Now().Sub(start); j.l.opts.SlowFlush > 0 && took > j.l.opts.SlowFlush {
			j.l.logger.Warn("slow flush", zap.Duration("took", took), zap.Int64("end_offset", j.end), zap.Int("files", len(j.files)))
		}
	}()
	for i, f := range j.files {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("metadatalog: flush to offset %d: fsync %s: %w", j.end, j.paths[i], err)
		}
	}
	if j.checkpoint != nil {
		if err := j.l.writeEpochCheckpointBytes(j.checkpoint); err != nil {
			return fmt.Errorf("metadatalog: flush: %w", err)
		}
	}
	return nil
}
