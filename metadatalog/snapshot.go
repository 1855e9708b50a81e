package metadatalog

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/vfs"
)

const (
	snapshotSuffix = ".checkpoint"
	partSuffix     = ".checkpoint.part"
)

// SnapshotFileName is Kafka's name for a snapshot:
// <end offset, 20 digits>-<epoch, 10 digits>.checkpoint.
func SnapshotFileName(id raft.OffsetAndEpoch) string { return snapshotName(id) }

func snapshotName(id raft.OffsetAndEpoch) string {
	return fmt.Sprintf("%020d-%010d%s", id.Offset, id.Epoch, snapshotSuffix)
}

func parseSnapshotName(name, suffix string) (raft.OffsetAndEpoch, bool) {
	if !strings.HasSuffix(name, suffix) || len(name) != 31+len(suffix) || name[20] != '-' {
		return raft.OffsetAndEpoch{}, false
	}
	off, err1 := strconv.ParseInt(name[:20], 10, 64)
	ep, err2 := strconv.ParseInt(name[21:31], 10, 32)
	if err1 != nil || err2 != nil || off < 0 || ep < 0 {
		return raft.OffsetAndEpoch{}, false
	}
	return raft.OffsetAndEpoch{Offset: off, Epoch: int32(ep)}, true
}

func snapshotLess(a, b raft.OffsetAndEpoch) bool {
	if a.Offset != b.Offset {
		return a.Offset < b.Offset
	}
	return a.Epoch < b.Epoch
}

func sortSnapshots(ids []raft.OffsetAndEpoch) {
	sort.Slice(ids, func(i, j int) bool { return snapshotLess(ids[i], ids[j]) })
}

func (l *Log) hasSnapshot(id raft.OffsetAndEpoch) bool {
	for _, s := range l.snapshots {
		if s == id {
			return true
		}
	}
	return false
}

// LatestSnapshot implements raft.Log.
func (l *Log) LatestSnapshot() (raft.OffsetAndEpoch, bool) {
	if len(l.snapshots) == 0 {
		return raft.OffsetAndEpoch{}, false
	}
	return l.snapshots[len(l.snapshots)-1], true
}

// EarliestSnapshot implements raft.Log.
func (l *Log) EarliestSnapshot() (raft.OffsetAndEpoch, bool) {
	if len(l.snapshots) == 0 {
		return raft.OffsetAndEpoch{}, false
	}
	return l.snapshots[0], true
}

// Snapshots lists the frozen snapshot ids, oldest first.
func (l *Log) Snapshots() []raft.OffsetAndEpoch {
	return append([]raft.OffsetAndEpoch(nil), l.snapshots...)
}

// SnapshotPath is the file of a frozen snapshot.
func (l *Log) SnapshotPath(id raft.OffsetAndEpoch) string {
	return filepath.Join(l.dir, snapshotName(id))
}

// OpenSnapshot implements raft.Log.
func (l *Log) OpenSnapshot(id raft.OffsetAndEpoch) (raft.SnapshotReader, error) {
	if !l.hasSnapshot(id) {
		return nil, fmt.Errorf("metadatalog: open snapshot %s: %w", snapshotName(id), raft.ErrSnapshotNotFound)
	}
	p := l.SnapshotPath(id)
	f, err := l.fs.OpenFile(p, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("metadatalog: open snapshot %s: %w", p, raft.ErrSnapshotNotFound)
		}
		return nil, fmt.Errorf("metadatalog: open snapshot %s: %w", p, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("metadatalog: open snapshot %s: %w", p, err)
	}
	return &snapshotReader{id: id, f: f, size: st.Size()}, nil
}

type snapshotReader struct {
	id   raft.OffsetAndEpoch
	f    vfs.File
	size int64
}

func (r *snapshotReader) ID() raft.OffsetAndEpoch                 { return r.id }
func (r *snapshotReader) Size() int64                             { return r.size }
func (r *snapshotReader) ReadAt(p []byte, off int64) (int, error) { return r.f.ReadAt(p, off) }
func (r *snapshotReader) Close() error                            { return r.f.Close() }

// CreateSnapshot implements raft.Log: bytes go to
// <name>-<random>.checkpoint.part until Freeze fsyncs it, makes it
// read-only and renames it (then fsyncs the dir).
func (l *Log) CreateSnapshot(id raft.OffsetAndEpoch) (raft.SnapshotWriter, error) {
	if err := l.checkWritable(); err != nil {
		return nil, err
	}
	if id.Offset < 0 || id.Epoch < 0 {
		return nil, fmt.Errorf("metadatalog: create snapshot %d-%d: negative id", id.Offset, id.Epoch)
	}
	if l.hasSnapshot(id) {
		return nil, fmt.Errorf("metadatalog: create snapshot %s: %w", snapshotName(id), ErrSnapshotExists)
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	name := strings.TrimSuffix(snapshotName(id), snapshotSuffix) + "-" + hex.EncodeToString(rnd[:]) + partSuffix
	p := filepath.Join(l.dir, name)
	f, err := l.fs.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("metadatalog: create snapshot %s: %w", p, err)
	}
	return &snapshotWriter{l: l, id: id, f: f, part: p}, nil
}

type snapshotWriter struct {
	l      *Log
	id     raft.OffsetAndEpoch
	f      vfs.File
	part   string
	size   int64
	done   bool
	failed error
	// syncFailed is Sync's fsync error, which Freeze or Close (on the
	// loop) makes the log's as Freeze's own fsync error is: Sync runs off
	// the loop and cannot fail the log itself.
	syncFailed error
}

func (w *snapshotWriter) ID() raft.OffsetAndEpoch { return w.id }
func (w *snapshotWriter) Size() int64             { return w.size }

func (w *snapshotWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("metadatalog: write to snapshot %s after freeze or close", snapshotName(w.id))
	}
	if w.failed != nil {
		return 0, w.failed
	}
	n, err := w.f.Write(p)
	w.size += int64(n)
	if err != nil {
		w.failed = fmt.Errorf("metadatalog: write snapshot %s at position %d: %w", w.part, w.size, err)
		return n, w.failed
	}
	return n, nil
}

// Sync writes the snapshot's bytes to disk. Unlike Freeze it touches only
// the snapshot's own file, so the node calls it off its loop, and the
// fsync in Freeze then finds nothing left to write. An error fails the
// snapshot; Freeze or Close then fails the log with it, as for Freeze's
// own fsync.
func (w *snapshotWriter) Sync() error {
	if w.done {
		return fmt.Errorf("metadatalog: sync snapshot %s after freeze or close", snapshotName(w.id))
	}
	if w.failed != nil {
		return w.failed
	}
	if err := w.f.Sync(); err != nil {
		w.syncFailed = fmt.Errorf("metadatalog: freeze snapshot: fsync %s: %w", w.part, err)
		w.failed = w.syncFailed
		return w.failed
	}
	return nil
}

func (w *snapshotWriter) Freeze() error {
	if w.done {
		return fmt.Errorf("metadatalog: freeze snapshot %s: already frozen or closed", snapshotName(w.id))
	}
	if w.syncFailed != nil {
		return w.l.fail(w.syncFailed)
	}
	if w.failed != nil {
		return w.failed
	}
	final := w.l.SnapshotPath(w.id)
	if err := w.f.Sync(); err != nil {
		return w.l.fail(fmt.Errorf("metadatalog: freeze snapshot: fsync %s: %w", w.part, err))
	}
	// Read-only like Kafka's frozen snapshots; failing to chmod does not
	// endanger the content, so it is not an error.
	w.f.Chmod(0o444)
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("metadatalog: freeze snapshot: close %s: %w", w.part, err)
	}
	w.done = true
	if err := w.l.fs.Rename(w.part, final); err != nil {
		w.l.fs.Remove(w.part)
		return fmt.Errorf("metadatalog: freeze snapshot: rename %s to %s: %w", w.part, final, err)
	}
	if err := vfs.SyncDir(w.l.fs, w.l.dir); err != nil {
		return w.l.fail(fmt.Errorf("metadatalog: freeze snapshot %s: %w", final, err))
	}
	if !w.l.hasSnapshot(w.id) {
		w.l.snapshots = append(w.l.snapshots, w.id)
		sortSnapshots(w.l.snapshots)
	}
	return nil
}

// Close discards an unfrozen snapshot.
func (w *snapshotWriter) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	w.f.Close()
	if err := w.l.fs.Remove(w.part); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("metadatalog: discard snapshot %s: %w", w.part, err)
	}
	if w.syncFailed != nil {
		return w.l.fail(w.syncFailed)
	}
	return nil
}

// forgetSnapshotsBefore deletes the snapshots older than id.
func (l *Log) forgetSnapshotsBefore(id raft.OffsetAndEpoch) error {
	var keep []raft.OffsetAndEpoch
	for _, s := range l.snapshots {
		if snapshotLess(s, id) {
			if err := l.fs.Remove(l.SnapshotPath(s)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("delete snapshot %s: %w", l.SnapshotPath(s), err)
			}
			l.logger.Info("deleted snapshot", zap.String("snapshot", snapshotName(s)))
			continue
		}
		keep = append(keep, s)
	}
	l.snapshots = keep
	return nil
}

func (l *Log) snapshotSize(id raft.OffsetAndEpoch) (int64, error) {
	st, err := l.fs.Stat(l.SnapshotPath(id))
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// snapshotTimestamp reads LastContainedLogTimestamp from the snapshot's
// header batch (a SnapshotHeader control record: version int16, timestamp
// int64).
func (l *Log) snapshotTimestamp(id raft.OffsetAndEpoch) (int64, error) {
	r, err := l.OpenSnapshot(id)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var hdr [protocol.BatchHeaderSize]byte
	if _, err := r.ReadAt(hdr[:], 0); err != nil {
		return 0, fmt.Errorf("snapshot %s: read header: %w", snapshotName(id), err)
	}
	h, err := protocol.ParseBatchHeader(hdr[:])
	if err != nil || !h.IsControl() || int64(h.Size()) > r.Size() || h.Size() > 1<<20 {
		return 0, fmt.Errorf("snapshot %s: first batch is not a snapshot header: %v", snapshotName(id), err)
	}
	buf := make([]byte, h.Size())
	if _, err := r.ReadAt(buf, 0); err != nil {
		return 0, fmt.Errorf("snapshot %s: read header: %w", snapshotName(id), err)
	}
	b, _, err := protocol.DecodeBatch(buf)
	if err != nil || len(b.Records) == 0 {
		return 0, fmt.Errorf("snapshot %s: header batch: %v", snapshotName(id), err)
	}
	rec := b.Records[0]
	if len(rec.Key) != 4 || binary.BigEndian.Uint16(rec.Key[2:]) != 3 || len(rec.Value) < 10 {
		return 0, fmt.Errorf("snapshot %s: first record is not a SnapshotHeader", snapshotName(id))
	}
	return int64(binary.BigEndian.Uint64(rec.Value[2:])), nil
}

// MaybeClean applies metadata.max.retention.bytes and .ms as Kafka's
// KafkaMetadataLog.maybeClean does (the raft layer calls it periodically,
// Kafka every 60 s): while at least two snapshots exist and the oldest one
// breaks a limit (log bytes + snapshot bytes above RetentionBytes, or its
// header timestamp older than RetentionMs), the log start moves to the next
// snapshot, whole segments below it are deleted with the older snapshot. The
// newest snapshot is never deleted and the log start never passes the high
// watermark. Reports whether anything was deleted.
func (l *Log) MaybeClean(now time.Time) (bool, error) {
	if err := l.checkWritable(); err != nil {
		return false, err
	}
	cleaned := false
	if l.opts.RetentionBytes >= 0 {
		sizes := map[raft.OffsetAndEpoch]int64{}
		var total int64
		for _, id := range l.snapshots {
			n, err := l.snapshotSize(id)
			if err != nil {
				return cleaned, fmt.Errorf("metadatalog: clean: %w", err)
			}
			sizes[id] = n
			total += n
		}
		for len(l.snapshots) >= 2 && l.Size()+total > l.opts.RetentionBytes {
			oldest := l.snapshots[0]
			ok, err := l.deleteBeforeSnapshot(l.snapshots[1])
			if err != nil || !ok {
				return cleaned, err
			}
			total -= sizes[oldest]
			cleaned = true
			l.logger.Info("deleted log and snapshot below a snapshot: retention bytes exceeded", zap.String("snapshot", snapshotName(oldest)), zap.Int64("retention_bytes", l.opts.RetentionBytes))
		}
	}
	if l.opts.RetentionMs >= 0 {
		for len(l.snapshots) >= 2 {
			oldest := l.snapshots[0]
			ts, err := l.snapshotTimestamp(oldest)
			if err != nil {
				return cleaned, fmt.Errorf("metadatalog: clean: %w", err)
			}
			if now.UnixMilli()-ts <= l.opts.RetentionMs {
				break
			}
			ok, err := l.deleteBeforeSnapshot(l.snapshots[1])
			if err != nil || !ok {
				return cleaned, err
			}
			cleaned = true
			l.logger.Info("deleted log and snapshot below a snapshot: retention time exceeded", zap.String("snapshot", snapshotName(oldest)), zap.Int64("retention_ms", l.opts.RetentionMs))
		}
	}
	return cleaned, nil
}

// deleteBeforeSnapshot moves the log start to id (a snapshot at or below
// the latest, above the current start, at or below the high watermark),
// deletes whole segments below it and snapshots older than id.
func (l *Log) deleteBeforeSnapshot(id raft.OffsetAndEpoch) (bool, error) {
	latest, ok := l.LatestSnapshot()
	if !ok || !l.hasSnapshot(id) || id.Offset <= l.startOffset || id.Offset > latest.Offset || id.Offset > l.hw || id.Offset > l.endOffset() {
		return false, nil
	}
	if err := l.settleFlush(); err != nil {
		return false, err
	}
	l.startOffset = id.Offset
	l.noteFlushed(id.Offset)
	if l.epochs.truncateFromStart(id.Offset) {
		l.epochsDirty = true
	}
	if err := l.deleteSegmentsBelow(id.Offset); err != nil {
		return false, l.fail(fmt.Errorf("metadatalog: %w", err))
	}
	if err := l.forgetSnapshotsBefore(id); err != nil {
		return false, l.fail(fmt.Errorf("metadatalog: %w", err))
	}
	return true, nil
}

// deleteSegmentsBelow deletes the segments wholly below offset (a segment
// goes when the next one starts at or below offset) and fsyncs the dir.
func (l *Log) deleteSegmentsBelow(offset int64) error {
	n := 0
	for n+1 < len(l.segs) && l.segs[n+1].base <= offset {
		n++
	}
	for _, s := range l.segs[:n] {
		s.f.Close()
		if err := l.discard(s.path); err != nil {
			return err
		}
		l.forgetTail(s)
	}
	l.segs = l.segs[n:]
	if n > 0 {
		if err := vfs.SyncDir(l.fs, l.dir); err != nil {
			return fmt.Errorf("delete segments below %d: %w", offset, err)
		}
	}
	return nil
}
