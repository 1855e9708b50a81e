package main

import (
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/raft/rafttest"
)

type storage struct {
	log   raft.Log
	store raft.QuorumStateStore
	close func() error
}

// openStorage opens the partition dir's log and quorum-state.
// For now the log and the quorum state live in memory (nothing survives a
// restart); metadatalog's on-disk log replaces this.
func openStorage(partDir string, cfg *Config, lg *zap.Logger) (*storage, error) {
	lg.Warn("the log and quorum state are kept in memory in this build: nothing survives a restart", zap.String("dir", partDir))
	l := rafttest.NewMemLog()
	return &storage{log: l, store: rafttest.NewMemStateStore(), close: l.Close}, nil
}
