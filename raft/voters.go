package raft

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/protocol"
)

// localKey is this replica's key.
func (d *Driver) localKey() ReplicaKey {
	return ReplicaKey{ID: d.self(), DirectoryID: d.cfg.DirectoryID}
}

// kraftVersion is the finalized kraft.version at the log end.
func (d *Driver) kraftVersion() int16 { return d.kraft.latestVersion() }

// loadKRaftState reads the voter set and kraft.version history at start-up:
// the latest snapshot (the bootstrap snapshot 0-0 included), then the log
// from the snapshot's end.
func (d *Driver) loadKRaftState() error {
	static, err := staticVoterSet(d.cfg.Voters)
	if err != nil {
		return fmt.Errorf("raft: controller.quorum.voters: %w", err)
	}
	d.kraft = kraftState{static: static}
	if snap, ok := d.log.LatestSnapshot(); ok {
		if err := d.truncateToLatestSnapshot(snap); err != nil {
			return err
		}
		if err := d.loadSnapshotKRaftState(snap); err != nil {
			return err
		}
	}
	d.kraft.next = max(d.kraft.next, d.log.StartOffset())
	for end := d.log.EndOffset().Offset; d.kraft.next < end; {
		data, err := d.log.Read(d.kraft.next, d.cfg.MaxReadBytes)
		if err != nil {
			return fmt.Errorf("raft: read log at %d for voter records: %w", d.kraft.next, err)
		}
		changes, next, err := controlChanges(data, -2)
		if err == nil {
			err = d.kraft.check(changes)
		}
		if err == nil {
			err = d.kraft.apply(changes)
		}
		if err != nil {
			return fmt.Errorf("raft: log at offset %d: %w", d.kraft.next, err)
		}
		if next <= d.kraft.next {
			return fmt.Errorf("raft: log read at %d made no progress", d.kraft.next)
		}
		d.kraft.next = next
	}
	return nil
}

// truncateToLatestSnapshot drops a log that ends before the latest
// snapshot (a crash lost the truncation a snapshot install made), as Kafka's
// ReplicatedLog.truncateToLatestSnapshot does at start-up: the snapshot
// then starts the log and the histories it records are the log's.
func (d *Driver) truncateToLatestSnapshot(snap OffsetAndEpoch) error {
	end := d.log.EndOffset()
	if snap.Epoch < end.Epoch || (snap.Epoch == end.Epoch && snap.Offset <= end.Offset) {
		return nil
	}
	if err := d.log.TruncateToSnapshot(snap); err != nil {
		return fmt.Errorf("raft: truncate log to snapshot %d-%d: %w", snap.Offset, snap.Epoch, err)
	}
	d.lg.Info("log ended before the latest snapshot; truncated to it", zap.Int64("snapshotEndOffset", snap.Offset),
		zap.Int32("snapshotEpoch", snap.Epoch), zap.Int64("previousEnd", end.Offset))
	return nil
}

// loadSnapshotKRaftState replaces the histories with what snapshot id
// records, at its last contained offset.
func (d *Driver) loadSnapshotKRaftState(id OffsetAndEpoch) error {
	changes, err := d.snapshotControlChanges(id)
	if err != nil {
		return err
	}
	if err := d.kraft.resetTo(id.Offset, changes); err != nil {
		return fmt.Errorf("raft: snapshot %d-%d: %w", id.Offset, id.Epoch, err)
	}
	return nil
}

// snapshotControlChanges reads the control batches of snapshot id (only
// batch headers of the rest) and keeps the last KRaftVersion and Voters
// records: they all count at the snapshot's last contained offset.
func (d *Driver) snapshotControlChanges(id OffsetAndEpoch) ([]controlChange, error) {
	r, err := d.log.OpenSnapshot(id)
	if err != nil {
		return nil, fmt.Errorf("raft: open snapshot %d-%d: %w", id.Offset, id.Epoch, err)
	}
	defer r.Close()
	var voters, version *controlChange
	hdr := make([]byte, protocol.BatchHeaderSize)
	for pos, size := int64(0), r.Size(); pos+protocol.BatchHeaderSize <= size; {
		if _, err := r.ReadAt(hdr, pos); err != nil {
			return nil, fmt.Errorf("raft: read snapshot %d-%d at %d: %w", id.Offset, id.Epoch, pos, err)
		}
		h, err := protocol.ParseBatchHeader(hdr)
		if err != nil || pos+int64(h.Size()) > size {
			return nil, fmt.Errorf("raft: snapshot %d-%d: batch at byte %d: bad header (%v)", id.Offset, id.Epoch, pos, err)
		}
		if h.IsControl() {
			batch := make([]byte, h.Size())
			if _, err := r.ReadAt(batch, pos); err != nil {
				return nil, fmt.Errorf("raft: read snapshot %d-%d at %d: %w", id.Offset, id.Epoch, pos, err)
			}
			changes, _, err := controlChanges(batch, id.Offset-1)
			if err != nil {
				return nil, fmt.Errorf("raft: snapshot %d-%d: %w", id.Offset, id.Epoch, err)
			}
			for i := range changes {
				if changes[i].voters != nil {
					voters = &changes[i]
				} else {
					version = &changes[i]
				}
			}
		}
		pos += int64(h.Size())
	}
	var out []controlChange
	for _, c := range []*controlChange{version, voters} {
		if c != nil {
			out = append(out, *c)
		}
	}
	return out, nil
}

// noteAppended feeds batches this node just appended (as leader or
// follower) to the histories; a follower checked them with checkAppend.
func (d *Driver) noteAppended(now time.Time, data []byte) {
	changes, next, err := controlChanges(data, -2)
	if err == nil {
		err = d.kraft.apply(changes)
	}
	if err != nil {
		d.fail(fmt.Errorf("raft: appended control records: %w", err))
		return
	}
	if next >= 0 {
		d.kraft.next = next
	}
	if len(changes) > 0 {
		d.refreshVoters(now)
	}
}

// checkAppend refuses leader data whose control records cannot follow the
// local history (an undecodable or non-overlapping voter set).
func (d *Driver) checkAppend(data []byte) error {
	changes, _, err := controlChanges(data, -2)
	if err == nil {
		err = d.kraft.check(changes)
	}
	return err
}

// truncateKRaftState follows a log truncation to end.
func (d *Driver) truncateKRaftState(now time.Time, end int64) {
	d.kraft.truncateNew(end)
	d.refreshVoters(now)
}

// refreshVoters makes the latest voter set the one in force: membership of
// this node, the leader's replica tracking and the peers' addresses follow.
func (d *Driver) refreshVoters(now time.Time) {
	vs, _ := d.kraft.latestVoters()
	was := d.isVoter
	d.voters = vs
	d.isVoter = d.self() >= 0 && vs.Contains(d.localKey())
	d.learnVoterEndpoints()
	if l := d.asLeader(); l != nil {
		l.updateVoters(vs)
	}
	if d.state == nil || was == d.isVoter {
		return
	}
	d.lg.Info("voter set changed this node's membership", zap.Bool("voter", d.isVoter),
		zap.Stringer("voters", vs), zap.Stringer("role", d.role()), zapEpoch("epoch", d.epoch))
	if u, ok := d.state.(*unattachedState); ok {
		u.membershipChanged(d, now)
	}
}

// learnVoterEndpoints gives the transport every other voter's address on
// this node's listener, as recorded by the voter set.
func (d *Driver) learnVoterEndpoints() {
	for _, v := range d.voters.Nodes() {
		if e, ok := v.endpoint(d.cfg.ListenerName); ok {
			d.learnEndpoint(v.Key.ID, e.Host, e.Port)
		}
	}
}

// updateVoters re-keys the leader's replica tracking to vs (Kafka's
// updateVoterAndObserverStates): a new voter keeps what the leader knew of
// it as an observer; a removed one becomes an observer.
func (l *leaderState) updateVoters(vs VoterSet) {
	old := l.voters
	l.voters = make(map[NodeID]*replicaState, vs.Len())
	for _, v := range vs.Nodes() {
		id := v.Key.ID
		r := old[id]
		if r == nil {
			if o := l.observers[id]; o != nil && v.isVoter(ReplicaKey{ID: id, DirectoryID: o.dir}) {
				r = o
			} else {
				r = &replicaState{id: id, endOffset: -1, prevLeaderEnd: -1}
			}
		}
		delete(old, id)
		delete(l.observers, id)
		r.dir = v.Key.DirectoryID
		l.voters[id] = r
	}
	// Left over in id order, so replays are deterministic.
	for _, id := range slices.Sorted(maps.Keys(old)) {
		if _, ok := l.observers[id]; !ok && len(l.observers) < maxObservers {
			l.observers[id] = old[id]
		}
	}
}

// SnapshotHeaderBatch is the first batch of a snapshot ending at id, as
// Kafka's snapshot writer lays it out: a control batch at base offset 0
// with the SnapshotHeader and, at kraft.version 1, the KRaftVersion and
// Voters records in force at the snapshot's last contained offset. The
// caller appends its data batches and the footer from offset next on.
func (d *Driver) SnapshotHeaderBatch(id OffsetAndEpoch, lastContainedMs, now int64) (batch []byte, next int64) {
	recs := []protocol.Record{protocol.ControlRecord(0, protocol.ControlSnapshotHeader,
		protocol.SnapshotHeaderRecord{LastContainedLogTimestamp: lastContainedMs}.AppendTo(nil))}
	version, _ := d.kraft.versions.At(id.Offset - 1)
	if version >= 1 {
		recs = append(recs, protocol.ControlRecord(1, protocol.ControlKRaftVersion,
			protocol.KRaftVersionRecord{KRaftVersion: version}.AppendTo(nil)))
		if vs, ok := d.kraft.voters.At(id.Offset - 1); ok {
			vr := vs.Record()
			recs = append(recs, protocol.ControlRecord(2, protocol.ControlKRaftVoters, vr.AppendTo(nil)))
		}
	}
	batch = protocol.AppendBatch(nil, protocol.Batch{
		PartitionLeaderEpoch: id.Epoch, Control: true, BaseTimestamp: now, MaxTimestamp: now, Records: recs,
	})
	return batch, int64(len(recs))
}
