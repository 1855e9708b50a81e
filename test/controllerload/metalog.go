package controllerload

import (
	"fmt"
	"os"
	"time"

	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/raft"
)

// LogFollower replays a controller's metadata log from its files while the
// controller runs (kraftd and Kafka 4.4.0 both write Kafka's format), for
// what the wire does not tell: which partitions a storm left leaderless,
// when each got a leader, how many records a step wrote.
type LogFollower struct {
	dir  string // the __cluster_metadata-0 directory
	ld   *image.Loader
	next int64
	// OnBatch, when set, sees every data batch replayed.
	OnBatch func(Batch)
}

// Batch is a replayed data batch.
type Batch struct {
	BaseOffset int64
	Appended   time.Time // the leader's append time (the batch's base timestamp)
	Records    []metadata.Record
	Image      *image.Image // the image after the batch
}

// FollowLog follows the metadata log in partitionDir from its start (or its
// newest snapshot when the log no longer starts at 0).
func FollowLog(partitionDir string) *LogFollower {
	return &LogFollower{dir: partitionDir, ld: image.NewLoader(image.Options{})}
}

// Image is the image of everything replayed so far.
func (f *LogFollower) Image() *image.Image { return f.ld.Image() }

// Next is the offset after the last record replayed.
func (f *LogFollower) Next() int64 { return f.next }

// Poll replays what was written since the last Poll.
func (f *LogFollower) Poll() error {
	l, err := metadatalog.OpenReadOnly(f.dir)
	if err != nil {
		return err
	}
	defer l.Close()
	if l.StartOffset() > f.next {
		// Retention removed what was not replayed yet: start again from the
		// newest snapshot.
		if err := f.loadNewestSnapshot(l); err != nil {
			return err
		}
	}
	var values [][]byte
	return l.Batches(f.next, func(raw []byte) error {
		h, err := protocol.ParseBatchHeader(raw)
		if err != nil {
			return err
		}
		if h.LastOffset() < f.next {
			return nil
		}
		_, values, _, err = protocol.DecodeValues(raw, values[:0])
		if err != nil {
			return fmt.Errorf("controllerload: batch at %d: %w", h.BaseOffset, err)
		}
		cb := raft.CommittedBatch{BaseOffset: h.BaseOffset, LastOffset: h.LastOffset(), Epoch: h.PartitionLeaderEpoch, Control: h.IsControl(), Records: values}
		if skip := f.next - h.BaseOffset; skip > 0 { // a snapshot ending inside the batch
			if cb.Control || skip > int64(len(values)) {
				f.next = h.NextOffset()
				return nil
			}
			cb.BaseOffset, cb.Records = f.next, values[skip:]
		}
		if err := f.ld.HandleCommit(cb); err != nil {
			return fmt.Errorf("controllerload: replay batch at %d: %w", h.BaseOffset, err)
		}
		f.next = h.NextOffset()
		if f.OnBatch != nil && !cb.Control {
			b := Batch{BaseOffset: cb.BaseOffset, Appended: time.UnixMilli(h.BaseTimestamp), Image: f.ld.Image()}
			for _, v := range cb.Records {
				rec, _, err := metadata.Decode(v)
				if err != nil {
					return fmt.Errorf("controllerload: batch at %d: %w", h.BaseOffset, err)
				}
				b.Records = append(b.Records, rec)
			}
			f.OnBatch(b)
		}
		return nil
	})
}

// loadNewestSnapshot starts the replay again from the log's newest snapshot.
func (f *LogFollower) loadNewestSnapshot(l *metadatalog.Log) error {
	var snap raft.OffsetAndEpoch
	for _, s := range l.Snapshots() {
		if s.Offset > snap.Offset {
			snap = s
		}
	}
	if snap.Offset == 0 {
		return fmt.Errorf("controllerload: %s starts at %d without a snapshot", f.dir, l.StartOffset())
	}
	file, err := os.Open(l.SnapshotPath(snap))
	if err != nil {
		return err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return err
	}
	f.ld = image.NewLoader(image.Options{})
	if err := f.ld.LoadSnapshot(snap, snapshotFile{file, snap, st.Size()}); err != nil {
		return fmt.Errorf("controllerload: %s: %w", l.SnapshotPath(snap), err)
	}
	f.next = snap.Offset
	return nil
}

// snapshotFile is a snapshot file as the loader reads one.
type snapshotFile struct {
	*os.File
	id   raft.OffsetAndEpoch
	size int64
}

func (s snapshotFile) ID() raft.OffsetAndEpoch { return s.id }
func (s snapshotFile) Size() int64             { return s.size }
