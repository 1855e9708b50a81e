package raft

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"go.uber.org/zap"
)

// Driver runs one raft replica: the role state machine, the request manager,
// the fetch purgatory and the listeners. It is not safe for concurrent use:
// exactly one goroutine calls it. It starts no goroutines, reads no clock and
// uses only the rng it is given.
type Driver struct {
	cfg   Config
	log   Log
	store QuorumStateStore
	tr    Transport
	rng   *rand.Rand
	lg    *zap.Logger

	role     Role
	epoch    int32
	leaderID int32 // -1 when unknown
	votedID  int32 // -1 when no vote
	votedDir [16]byte
	hw       int64 // -1 while unknown

	fatal error // first log/store failure; every later call returns it
}

// NewDriver builds a driver from the persisted quorum state and the log, and
// writes the chosen initial state back (kraft-state-machine.md section 3).
func NewDriver(cfg Config, log Log, store QuorumStateStore, transport Transport,
	rng *rand.Rand, logger *zap.Logger, now time.Time) (*Driver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil || store == nil || transport == nil || rng == nil {
		return nil, errors.New("raft: log, store, transport and rng are required")
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	d := &Driver{
		cfg: cfg, log: log, store: store, tr: transport, rng: rng, lg: logger,
		leaderID: -1, votedID: -1, hw: -1,
	}
	st, ok, err := store.Read()
	if err != nil {
		return nil, fmt.Errorf("raft: read quorum state: %w", err)
	}
	if ok {
		d.epoch, d.leaderID, d.votedID, d.votedDir = st.Epoch, st.LeaderID, st.VotedID, st.VotedDirectoryID
	}
	return d, nil
}

// Step handles one Message. A non-nil error is fatal (log or quorum-state
// write failed): the caller stops the node and exits non-zero.
func (d *Driver) Step(now time.Time, m Message) error {
	return d.fatal
}

// Poll runs due timers (elections, fetches, linger, purgatory expiry, check
// quorum) and returns the time it next needs to be polled.
func (d *Driver) Poll(now time.Time) (time.Time, error) {
	return now.Add(d.cfg.ElectionTimeout), d.fatal
}

// Append (leader only) queues records for the next batch and returns the
// offset the last record will get.
func (d *Driver) Append(now time.Time, epoch int32, records [][]byte) (int64, error) {
	return 0, ErrNotLeader
}

// Register adds a listener; it is told the current leader on the next round.
func (d *Driver) Register(l Listener) {}

// Resign makes the leader of epoch step down. Older epochs are ignored.
func (d *Driver) Resign(now time.Time, epoch int32) error { return ErrNotLeader }

// Shutdown begins graceful shutdown; Done reports when it has finished.
func (d *Driver) Shutdown(now time.Time) {}

// Done reports whether a graceful shutdown has finished.
func (d *Driver) Done() bool { return true }

// Status returns the replica's current quorum view.
func (d *Driver) Status() Status {
	return Status{
		NodeID: d.cfg.NodeID, Role: d.role, Epoch: d.epoch, LeaderID: d.leaderID,
		HighWatermark: d.hw, LogEndOffset: d.log.EndOffset().Offset, VotedID: d.votedID,
	}
}
