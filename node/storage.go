package node

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/raft"
)

// openStorage opens (and recovers) the partition dir's segments and its
// quorum-state file.
func openStorage(partDir string, cfg *config.Config, topicID [16]byte, lg *zap.Logger) (*metadatalog.Log, raft.QuorumStateStore, error) {
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
		// Unlinking a large segment would stall the raft loop.
		BackgroundDelete: true,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("open log: %w", err)
	}
	end := l.EndOffset()
	lg.Info("log opened", zap.String("dir", partDir), zap.Int64("log_start_offset", l.StartOffset()),
		zap.Int64("log_end_offset", end.Offset), zap.Int32("last_epoch", end.Epoch), zap.Duration("took", time.Since(start)))
	return l, v0StateStore{metadatalog.NewQuorumStateStore(nil, partDir)}, nil
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

// lockDir takes an exclusive flock on dir/.lock, as Kafka does, so two
// processes never share a log dir.
func lockDir(dir string) (func(), error) {
	path := filepath.Join(dir, ".lock")
	fd, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(fd.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		fd.Close()
		return nil, fmt.Errorf("lock %s: %w (is another node using %s?)", path, err, dir)
	}
	return func() { fd.Close() }, nil
}
