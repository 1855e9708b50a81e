package raft_test

// Storage under a simulated node: rafttest.MemLog (flushed vs unflushed
// kept apart, Crash drops the unflushed tail), or the real metadatalog.Log
// and quorum-state file on vfs.MemFS, where a crash is a power-loss
// image of the file system (synced data survives, a random part of the
// unsynced tail may too: torn writes) followed by a full recovery on open.

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/raft/rafttest"
	"github.com/kraftd/kraftd/uuid"
	"github.com/kraftd/kraftd/vfs"
)

// simDisk is a node's log as the simulator and checker see it.
type simDisk interface {
	raft.Log
	// BatchAt returns the batch holding offset.
	BatchAt(offset int64) (rafttest.BatchInfo, bool)
	// TakeLowestEnd reports the lowest log end a truncation or crash left
	// since the last call.
	TakeLowestEnd() (int64, bool)
	// Crash loses what a power cut would lose and reopens the storage.
	Crash(rng *rand.Rand) error
	// DeleteBeforeSnapshot applies retention below the latest snapshot.
	DeleteBeforeSnapshot(now time.Time) bool
	// TruncationCount counts truncations (log and snapshot installs).
	TruncationCount() int
}

// memDisk adapts rafttest.MemLog.
type memDisk struct{ *rafttest.MemLog }

func (m memDisk) Crash(*rand.Rand) error                     { m.MemLog.Crash(); return nil }
func (m memDisk) DeleteBeforeSnapshot(time.Time) bool        { return m.MemLog.DeleteBeforeSnapshot() }
func (m memDisk) TruncationCount() int                       { return m.Truncations }
func (m memDisk) BatchAt(o int64) (rafttest.BatchInfo, bool) { return m.MemLog.BatchAt(o) }

// fileDisk runs metadatalog.Log on a MemFS. The driver holds fileDisk (via
// FailingLog), so a crash swaps the Log underneath for the recovered one.
type fileDisk struct {
	*metadatalog.Log
	fs     *vfs.MemFS
	opts   metadatalog.Options
	lowest int64
	hasLow bool
	truncs int
}

const simPartitionDir = "/meta/__cluster_metadata-0"

func newFileDisk() (*fileDisk, error) {
	d := &fileDisk{fs: vfs.NewMemFS()}
	d.opts = metadatalog.Options{
		Dir:             simPartitionDir,
		FS:              d.fs,
		TopicID:         uuid.MetadataTopicID,
		SegmentMinBytes: 1024,
		SegmentBytes:    4096, // many segments: rolls, deletions, recovery across files
		RetentionBytes:  1,    // delete below the newest snapshot as soon as there are two
		RetentionMs:     -1,
	}
	l, err := metadatalog.Open(d.opts)
	if err != nil {
		return nil, err
	}
	d.Log = l
	return d, nil
}

func (d *fileDisk) store() raft.QuorumStateStore {
	return metadatalog.NewQuorumStateStore(d.fs, simPartitionDir)
}

func (d *fileDisk) noteEnd() {
	end := d.Log.EndOffset().Offset
	if !d.hasLow || end < d.lowest {
		d.lowest, d.hasLow = end, true
	}
}

func (d *fileDisk) TruncateTo(offset int64) error {
	before := d.Log.EndOffset().Offset
	err := d.Log.TruncateTo(offset)
	if d.Log.EndOffset().Offset < before {
		d.truncs++
		d.noteEnd()
	}
	return err
}

func (d *fileDisk) TruncateToSnapshot(id raft.OffsetAndEpoch) error {
	err := d.Log.TruncateToSnapshot(id)
	if err == nil {
		d.truncs++
		d.noteEnd()
	}
	return err
}

func (d *fileDisk) TakeLowestEnd() (int64, bool) {
	l, ok := d.lowest, d.hasLow
	d.hasLow = false
	return l, ok
}

func (d *fileDisk) TruncationCount() int { return d.truncs }

func (d *fileDisk) BatchAt(offset int64) (rafttest.BatchInfo, bool) {
	if offset < d.Log.StartOffset() || offset >= d.Log.EndOffset().Offset {
		return rafttest.BatchInfo{}, false
	}
	b, err := d.Log.Read(offset, 1)
	if err != nil || len(b) == 0 {
		return rafttest.BatchInfo{}, false
	}
	h, err := protocol.ParseBatchHeader(b)
	if err != nil || h.Size() > len(b) {
		return rafttest.BatchInfo{}, false
	}
	return rafttest.BatchInfo{BaseOffset: h.BaseOffset, LastOffset: h.LastOffset(), Epoch: h.PartitionLeaderEpoch, Data: b[:h.Size()]}, true
}

func (d *fileDisk) DeleteBeforeSnapshot(now time.Time) bool {
	ok, err := d.Log.MaybeClean(now)
	return ok && err == nil
}

// Crash takes the power-loss image of the file system and recovers the log
// from it, as a restarted process would.
func (d *fileDisk) Crash(rng *rand.Rand) error {
	d.Log.Close() // no flush: what was not synced is at the mercy of CrashClone
	d.fs = d.fs.CrashClone(rng)
	d.opts.FS = d.fs
	l, err := metadatalog.Open(d.opts)
	if err != nil {
		return fmt.Errorf("recover log after crash: %w", err)
	}
	d.Log = l
	d.noteEnd()
	return nil
}

// simStore wraps a node's quorum-state store: the checker sees every write
// (S1, S2) and the simulator can swap the store after a crash.
type simStore struct {
	inner   raft.QuorumStateStore
	writes  int
	onWrite func(raft.ElectionState)
}

func (s *simStore) Read() (raft.ElectionState, bool, error) { return s.inner.Read() }

func (s *simStore) Write(st raft.ElectionState) error {
	if err := s.inner.Write(st); err != nil {
		return err
	}
	s.writes++
	if s.onWrite != nil {
		s.onWrite(st)
	}
	return nil
}
