package metadatalog

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/vfs"
)

// TruncateTo implements raft.Log. The cut happens at a batch boundary: when
// offset falls inside a batch, that whole batch goes (as in Kafka). It is
// refused below the high watermark or the log start. Removed segment files
// and the cut are fsynced before returning, so truncated data cannot come
// back after a crash.
func (l *Log) TruncateTo(offset int64) error {
	if err := l.checkWritable(); err != nil {
		return err
	}
	end := l.endOffset()
	if offset >= end {
		return nil
	}
	if offset < l.hw {
		return fmt.Errorf("metadatalog: truncate to %d: below the high watermark %d", offset, l.hw)
	}
	if err := l.settleFlush(); err != nil {
		return err
	}
	if offset < l.startOffset {
		return fmt.Errorf("metadatalog: truncate to %d: below the log start offset %d", offset, l.startOffset)
	}
	s := l.segmentFor(offset)
	pos, newEnd := int64(0), s.base
	if offset > s.base {
		p, h, err := s.locate(offset, l.scratch[:])
		if err != nil {
			return fmt.Errorf("metadatalog: truncate to %d: %w", offset, err)
		}
		pos, newEnd = p, h.base
	}
	if newEnd < l.hw {
		return fmt.Errorf("metadatalog: truncate to %d: the batch containing it starts at %d, below the high watermark %d", offset, newEnd, l.hw)
	}
	idx := 0
	for l.segs[idx] != s {
		idx++
	}
	if err := l.dropSegmentsAfter(idx); err != nil {
		return l.fail(fmt.Errorf("metadatalog: truncate to %d: %w", offset, err))
	}
	if err := s.f.Truncate(pos); err != nil {
		return l.fail(fmt.Errorf("metadatalog: truncate to %d: truncate %s to %d: %w", offset, s.path, pos, err))
	}
	if err := s.f.Sync(); err != nil {
		return l.fail(fmt.Errorf("metadatalog: truncate to %d: fsync %s: %w", offset, s.path, err))
	}
	s.dirty = false
	s.size, s.next = pos, newEnd
	s.truncateIndex(pos)
	if l.flushed.Load() > newEnd {
		l.flushed.Store(newEnd)
	}
	l.forgetTail(nil)
	if l.epochs.truncateFromEnd(newEnd) {
		if err := l.writeEpochCheckpoint(); err != nil {
			return l.fail(fmt.Errorf("metadatalog: truncate to %d: %w", offset, err))
		}
	}
	l.logger.Info("truncated log", zap.Int64("offset", offset), zap.Int64("log_end_offset", newEnd))
	return nil
}

// dropSegmentsAfter deletes segments after index i, newest first (a crash
// midway leaves a contiguous log), then fsyncs the dir.
func (l *Log) dropSegmentsAfter(i int) error {
	if i >= len(l.segs)-1 {
		return nil
	}
	for j := len(l.segs) - 1; j > i; j-- {
		s := l.segs[j]
		s.f.Close()
		if err := l.discard(s.path); err != nil {
			return err
		}
		l.segs = l.segs[:j]
	}
	return vfs.SyncDir(l.fs, l.dir)
}

// TruncateToSnapshot implements raft.Log: the whole log is replaced by an
// empty one starting at id.Offset, which must be a frozen snapshot at or
// above the high watermark; older snapshots are deleted.
func (l *Log) TruncateToSnapshot(id raft.OffsetAndEpoch) error {
	if err := l.checkWritable(); err != nil {
		return err
	}
	if !l.hasSnapshot(id) {
		return fmt.Errorf("metadatalog: truncate to snapshot %s: %w", snapshotName(id), raft.ErrSnapshotNotFound)
	}
	if id.Offset < l.hw {
		return fmt.Errorf("metadatalog: truncate to snapshot %s: offset %d is below the high watermark %d", snapshotName(id), id.Offset, l.hw)
	}
	if err := l.settleFlush(); err != nil {
		return err
	}
	if err := l.truncateFullyAndStartAt(id); err != nil {
		return l.fail(fmt.Errorf("metadatalog: truncate to snapshot %s: %w", snapshotName(id), err))
	}
	return nil
}

func (l *Log) truncateFullyAndStartAt(id raft.OffsetAndEpoch) error {
	if err := l.dropSegmentsAfter(-1); err != nil {
		return err
	}
	l.segs = nil
	if err := l.createSegment(id.Offset); err != nil {
		return err
	}
	l.startOffset = id.Offset
	l.flushed.Store(id.Offset)
	l.forgetTail(nil)
	l.epochs.entries = nil
	if err := l.writeEpochCheckpoint(); err != nil {
		return err
	}
	return l.forgetSnapshotsBefore(id)
}
