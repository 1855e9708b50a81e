package metadatalog

import (
	"fmt"
	"io"
	"math"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/vfs"
)

// AppendAsLeader stamps batches (whole v2 batches, offsets arbitrary) with
// consecutive offsets from the log end and with epoch, in place, then
// appends them. The CRC covers neither field, so the batches stay valid.
func (l *Log) AppendAsLeader(batches []byte, epoch int32) (int64, error) {
	next := l.endOffset()
	for b := batches; len(b) > 0; {
		h, err := protocol.ParseBatchHeader(b)
		if err != nil || len(b) < h.Size() || h.LastOffsetDelta < 0 {
			return 0, fmt.Errorf("%w: append as leader at offset %d: malformed batch: %v", ErrInvalidAppend, next, err)
		}
		protocol.SetBaseOffset(b, next)
		protocol.SetPartitionLeaderEpoch(b, epoch)
		next += int64(h.LastOffsetDelta) + 1
		b = b[h.Size():]
	}
	return l.Append(batches)
}

// Append implements raft.Log. Every batch is checked first
// (protocol.ValidateBatch within the batch and segment size limits, base
// offset == expected, epoch >= previous); on any problem nothing is written
// and the error wraps ErrInvalidAppend. A write
// error leaves the log failed (raft must stop) after trying to cut the
// partial write off.
func (l *Log) Append(batches []byte) (int64, error) {
	if err := l.checkWritable(); err != nil {
		return 0, err
	}
	if len(batches) == 0 {
		return 0, fmt.Errorf("%w: no batches", ErrInvalidAppend)
	}
	type item struct {
		h   protocol.BatchHeader
		off int
	}
	items := make([]item, 0, 4)
	expect := l.endOffset()
	// The floor is the last batch's epoch, or the snapshot's when the log
	// is empty after one.
	lastEpoch := l.lastEpoch()
	maxBytes := min(l.opts.MaxBatchBytes, int(min(l.opts.SegmentBytes, math.MaxInt32)))
	for off := 0; off < len(batches); {
		h, err := protocol.ValidateBatch(batches[off:], maxBytes)
		if err != nil {
			return 0, fmt.Errorf("%w: batch at offset %d (byte %d of the append): %v", ErrInvalidAppend, expect, off, err)
		}
		switch {
		case h.BaseOffset != expect:
			return 0, fmt.Errorf("%w: batch base offset %d is not the expected offset %d (log end offset %d)", ErrInvalidAppend, h.BaseOffset, expect, l.endOffset())
		case h.PartitionLeaderEpoch < lastEpoch:
			return 0, fmt.Errorf("%w: batch at offset %d has epoch %d, below the log's last epoch %d", ErrInvalidAppend, h.BaseOffset, h.PartitionLeaderEpoch, lastEpoch)
		}
		items = append(items, item{h, off})
		expect = h.NextOffset()
		lastEpoch = h.PartitionLeaderEpoch
		off += h.Size()
	}

	// Write runs of batches that go to the same segment with one write each.
	for i := 0; i < len(items); {
		s := l.active()
		if l.shouldRoll(s, items[i].h) {
			if err := l.roll(items[i].h.BaseOffset); err != nil {
				return 0, err
			}
			s = l.active()
		}
		j := i
		size, firstTS := s.size, s.firstMaxTS
		if firstTS < 0 && size == 0 {
			firstTS = items[i].h.MaxTimestamp
		}
		for j < len(items) {
			h := items[j].h
			if j > i && l.shouldRollAt(s.base, size, firstTS, h) {
				break
			}
			size += int64(h.Size())
			j++
		}
		from, to := items[i].off, len(batches)
		if j < len(items) {
			to = items[j].off
		}
		if err := l.writeSegment(s, batches[from:to]); err != nil {
			return 0, err
		}
		gen, mem, inMem := l.mem.add(batches[from:to])
		if !inMem {
			gen = 0
		}
		pos := s.size
		for k := i; k < j; k++ {
			h := items[k].h
			s.noteBatch(pos, h.BaseOffset, h.NextOffset(), h.Size(), h.MaxTimestamp)
			l.noteTail(batchPos{seg: s, base: h.BaseOffset, next: h.NextOffset(), pos: pos,
				memGen: gen, mem: mem + items[k].off - from})
			if l.epochs.assign(h.PartitionLeaderEpoch, h.BaseOffset) {
				l.epochsDirty = true
			}
			pos += int64(h.Size())
		}
		i = j
	}
	return l.endOffset() - 1, nil
}

func (l *Log) shouldRoll(s *segment, h protocol.BatchHeader) bool {
	return l.shouldRollAt(s.base, s.size, s.firstMaxTS, h)
}

// shouldRollAt applies Kafka's roll rules to a segment of the given base,
// size and first-batch timestamp receiving batch h.
func (l *Log) shouldRollAt(base, size, firstMaxTS int64, h protocol.BatchHeader) bool {
	if size == 0 {
		return false
	}
	return size+int64(h.Size()) > l.opts.SegmentBytes ||
		(firstMaxTS >= 0 && h.MaxTimestamp-firstMaxTS > l.opts.SegmentMs) ||
		h.LastOffset()-base > 1<<31-1
}

func (l *Log) writeSegment(s *segment, data []byte) error {
	n, err := s.f.WriteAt(data, s.size)
	if err == nil && n != len(data) {
		err = io.ErrShortWrite
	}
	if err != nil {
		werr := fmt.Errorf("metadatalog: append at offset %d: write %s at position %d: %w", s.next, s.path, s.size, err)
		s.dirty = true
		// Cut the partial write so the file stays a valid prefix even if the
		// process goes on reading it.
		if n > 0 {
			if terr := s.f.Truncate(s.size); terr != nil {
				werr = fmt.Errorf("%w (and truncating the partial write failed: %v)", werr, terr)
			}
		}
		return l.fail(werr)
	}
	s.dirty = true
	return nil
}

// roll fsyncs the active segment and starts a new one at base. Fsyncing at
// roll keeps every non-last segment complete on disk, so recovery may treat
// damage there as corruption rather than a torn tail.
func (l *Log) roll(base int64) error {
	// A pending flush job counts the active segment clean already: run it
	// first, or the segment could be left behind torn.
	if err := l.settleFlush(); err != nil {
		return err
	}
	s := l.active()
	if s.dirty {
		if err := s.f.Sync(); err != nil {
			return l.fail(fmt.Errorf("metadatalog: roll at offset %d: fsync %s: %w", base, s.path, err))
		}
		s.dirty = false
	}
	if err := l.createSegment(base); err != nil {
		return l.fail(fmt.Errorf("metadatalog: roll at offset %d: %w", base, err))
	}
	l.logger.Info("rolled segment", zap.Int64("base_offset", base))
	return nil
}

func (l *Log) writeEpochCheckpoint() error {
	if err := l.writeEpochCheckpointBytes(l.epochs.encode()); err != nil {
		return err
	}
	l.epochsDirty = false
	return nil
}

// writeEpochCheckpointBytes replaces leader-epoch-checkpoint; it reads only
// the log's fixed fields, so a flush job may call it off the driver's
// goroutine.
func (l *Log) writeEpochCheckpointBytes(b []byte) error {
	return vfs.WriteFileAtomic(l.fs, filepath.Join(l.dir, LeaderEpochCheckpointFile), b)
}
