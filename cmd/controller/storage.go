package main

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

type storage struct {
	log   *metadatalog.Log
	store raft.QuorumStateStore
	close func() error
}

// openStorage opens (and recovers) the partition dir's segments and its
// quorum-state file.
func openStorage(partDir string, cfg *config.Config, topicID [16]byte, lg *zap.Logger) (*storage, error) {
	start := time.Now()
	l, err := metadatalog.Open(metadatalog.Options{
		Dir:             partDir,
		Logger:          lg,
		TopicID:         topicID,
		SegmentBytes:    cfg.SegmentBytes,
		SegmentMinBytes: cfg.SegmentMinBytes,
		SegmentMs:       cfg.SegmentMs,
		RetentionBytes:  cfg.MaxRetentionBytes,
		RetentionMs:     cfg.MaxRetentionMs,
	})
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	end := l.EndOffset()
	lg.Info("log opened", zap.String("dir", partDir), zap.Int64("log_start_offset", l.StartOffset()),
		zap.Int64("log_end_offset", end.Offset), zap.Int32("last_epoch", end.Epoch), zap.Duration("took", time.Since(start)))
	return &storage{log: l, store: v0StateStore{metadatalog.NewQuorumStateStore(nil, partDir)}, close: l.Close}, nil
}

// v0StateStore drops the voted directory id when the state is written in
// data_version 0 (static voters, kraft.version 0), as Kafka's
// ElectionState.toQuorumStateData does for that version: the format has no
// field for it and metadatalog refuses to lose it silently.
type v0StateStore struct{ raft.QuorumStateStore }

func (s v0StateStore) Write(st raft.ElectionState) error {
	if st.Voters != nil {
		st.VotedDirectoryID = [16]byte{}
	}
	return s.QuorumStateStore.Write(st)
}

// writeEmptySnapshot writes a snapshot holding no data records: the
// SnapshotHeader and SnapshotFooter control batches Kafka's snapshot writer
// puts around the state (the raft performance test has no state).
func writeEmptySnapshot(l *metadatalog.Log, id raft.OffsetAndEpoch, lastContainedMs int64) (err error) {
	if latest, ok := l.LatestSnapshot(); ok && latest.Offset >= id.Offset {
		return nil
	}
	w, err := l.CreateSnapshot(id)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := w.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	now := time.Now().UnixMilli()
	var b []byte
	b = protocol.AppendControlBatch(b, 0, id.Epoch, now, protocol.ControlSnapshotHeader,
		protocol.SnapshotHeaderRecord{Version: 0, LastContainedLogTimestamp: lastContainedMs}.AppendTo(nil))
	b = protocol.AppendControlBatch(b, 1, id.Epoch, now, protocol.ControlSnapshotFooter,
		protocol.SnapshotFooterRecord{Version: 0}.AppendTo(nil))
	if _, err := w.Write(b); err != nil {
		return err
	}
	if err := w.Freeze(); err != nil {
		return err
	}
	return nil
}
