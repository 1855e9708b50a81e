package node

import (
	"fmt"
	"io"
	"slices"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/security"
)

// Listener and peer security, built from the resolved config (package security).
//
// SCRAM credentials: as a Kafka 4.4 controller, kraftd verifies SCRAM logins
// against the UserScramCredentialRecords of the metadata log. At start the
// store is filled from the latest snapshot on disk (the bootstrap 0-0 that
// kafka-storage format --add-scram writes, or a later one fetched from a
// leader), before the listeners accept; once the driver runs, scramListener
// replaces the store at each snapshot it loads and applies each committed
// record. A user added after the latest snapshot is known once the node
// sees its record committed. A Kafka 4.4 controller differs at start: it
// reads the bootstrap credentials only from the log, once the first active
// JVM controller has written its bootstrap records there and it has caught
// up, refusing every SCRAM login until then; kraftd, which writes no
// bootstrap records of its own, honours the bootstrap snapshot's at once
// (the same operator-written credentials, earlier).

// buildSecurity loads each listener's TLS material and SASL configuration and
// those of the outbound connections. Without any SASL listener using SCRAM the
// returned store is nil.
func (n *Node) buildSecurity() (map[string]*security.ServerSide, *security.ClientSide, *security.ScramStore, error) {
	logf := func(format string, args ...any) { n.lg.Named("security").Info(fmt.Sprintf(format, args...)) }
	var scram *security.ScramStore
	for _, ls := range n.cfg.ListenerSecurity {
		if ls.SASL != nil && slices.ContainsFunc(ls.SASL.EnabledMechanisms, isScram) {
			scram = security.NewScramStore()
			break
		}
	}
	if scram != nil {
		if err := n.loadScram(scram); err != nil {
			return nil, nil, nil, err
		}
	}
	sides := make(map[string]*security.ServerSide, len(n.cfg.ListenerSecurity))
	for name, ls := range n.cfg.ListenerSecurity {
		if ls.Protocol == security.Plaintext {
			continue
		}
		s, err := security.NewServerSide(ls, scram, logf)
		if err != nil {
			return nil, nil, nil, err
		}
		sides[name] = s
	}
	var client *security.ClientSide
	if out := n.cfg.OutboundSecurity; out != nil && out.Protocol != security.Plaintext {
		c, err := security.NewClientSide(out, logf)
		if err != nil {
			return nil, nil, nil, err
		}
		client = c
	}
	return sides, client, scram, nil
}

func isScram(m string) bool { return m == security.MechScramSHA256 || m == security.MechScramSHA512 }

// loadScram fills store from the latest snapshot on disk, if any.
func (n *Node) loadScram(store *security.ScramStore) error {
	id, ok := n.log.LatestSnapshot()
	if !ok {
		n.lg.Warn("SCRAM is enabled but the metadata log has no snapshot: no SCRAM user can log in until its UserScramCredentialRecord commits")
		return nil
	}
	r, err := n.log.OpenSnapshot(id)
	if err != nil {
		return fmt.Errorf("read SCRAM credentials: %w", err)
	}
	defer r.Close()
	count, err := applySnapshot(store, r)
	if err != nil {
		return fmt.Errorf("read SCRAM credentials from snapshot %v: %w", id, err)
	}
	n.lg.Info("SCRAM credentials loaded", zap.Int("records", count), zap.Int64("snapshot_offset", id.Offset))
	return nil
}

func applySnapshot(store *security.ScramStore, r raft.SnapshotReader) (int, error) {
	data, err := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
	if err != nil {
		return 0, err
	}
	return store.ApplyBatches(data)
}

// scramListener keeps the SCRAM store current with the committed metadata.
type scramListener struct {
	store *security.ScramStore
	lg    *zap.Logger // rate-limited
}

func (s scramListener) HandleCommit(batches []raft.CommittedBatch) {
	for _, b := range batches {
		if b.Control {
			continue
		}
		for _, v := range b.Records {
			if _, err := s.store.ApplyMetadataRecord(v); err != nil {
				s.lg.Warn("unreadable metadata record ignored by the SCRAM store", zap.Int64("batch_offset", b.BaseOffset), zap.Error(err))
			}
		}
	}
}

func (s scramListener) HandleLoadSnapshot(id raft.OffsetAndEpoch, r raft.SnapshotReader) {
	fresh := security.NewScramStore()
	if _, err := applySnapshot(fresh, r); err != nil {
		// Keep what is known rather than lock every SCRAM user out.
		s.lg.Warn("SCRAM credentials of snapshot not loaded", zap.Int64("snapshot_offset", id.Offset), zap.Error(err))
		return
	}
	s.store.ReplaceWith(fresh)
}

func (scramListener) HandleLeaderChange(raft.LeaderAndEpoch) {}
func (scramListener) BeginShutdown()                         {}
