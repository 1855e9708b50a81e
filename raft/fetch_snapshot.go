package raft

// FetchSnapshot (key 59): v0-v1 (KIP-630).
//
// Behavior (leader):
//   - cluster id (tag 0) mismatch -> top INCONSISTENT_CLUSTER_ID;
//   - topics count != 1 and partitions count != 1 -> top INVALID_REQUEST;
//     wrong topic name/partition -> partition UNKNOWN_TOPIC_OR_PARTITION;
//   - leader-only check on CurrentLeaderEpoch -> partition epoch errors;
//   - unknown snapshot id, a negative one (checkFetchSnapshot), or the bootstrap id
//     0-0 -> SNAPSHOT_NOT_FOUND;
//   - Position < 0 or >= size -> POSITION_OUT_OF_RANGE;
//   - else raw snapshot bytes [Position, Position+min(MaxBytes, 8 MiB)),
//     Size, SnapshotId and CurrentLeader; counts toward check quorum.
//
// Behavior (follower): downloads the snapshot the leader named in a Fetch
// answer, resuming at the bytes already written; when complete it freezes
// the file, truncates the log to it and tells listeners to load it.
// SNAPSHOT_NOT_FOUND drops the partial file and goes back to Fetch.
//
// Version notes: v1 adds ReplicaDirectoryId and the response NodeEndpoints.

import (
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/protocol"
)

var fetchSnapshotAPI = rpc[*kmsg.FetchSnapshotRequest, *kmsg.FetchSnapshotResponse]{
	versions:  protocol.VersionRange{Min: 0, Max: 1},
	clusterID: func(r *kmsg.FetchSnapshotRequest) *string { return r.ClusterID },
	topError:  func(r *kmsg.FetchSnapshotResponse) *int16 { return &r.ErrorCode },
	partitionError: func(r *kmsg.FetchSnapshotResponse) int16 {
		return protocol.FirstNonZero(r.Topics, fetchSnapshotPartitions, func(p *kmsg.FetchSnapshotResponseTopicPartition) int16 { return p.ErrorCode })
	},
	// The shape has Kafka's rule of its own (checkFetchSnapshot).
	checkClusterID: true,
	check:          (*Driver).checkFetchSnapshot,
	handle:         (*Driver).handleFetchSnapshot,
	answer: func(d *Driver, r *kmsg.FetchSnapshotRequest, code int16) *kmsg.FetchSnapshotResponse {
		return d.fetchSnapshotAnswer(r, code, true)
	},
	checkResponse: func(r *kmsg.FetchSnapshotResponse) string {
		return protocol.FirstNonZero(r.Topics, fetchSnapshotPartitions, checkSnapshotChunk)
	},
	onResponse: (*Driver).handleFetchSnapshotResponse,
}.register()

func fetchSnapshotShape(r *kmsg.FetchSnapshotRequest) partitionShape {
	return shapeOf(false, r.Topics, func(t *kmsg.FetchSnapshotRequestTopic) (string, [16]byte, []kmsg.FetchSnapshotRequestTopicPartition) {
		return t.Topic, [16]byte{}, t.Partitions
	}, func(p *kmsg.FetchSnapshotRequestTopicPartition) int32 { return p.Partition })
}

func fetchSnapshotPartitions(t *kmsg.FetchSnapshotResponseTopic) []kmsg.FetchSnapshotResponseTopicPartition {
	return t.Partitions
}

// checkFetchSnapshot refuses at the top level only a request without a
// first partition to answer for (or, as Kafka, more than one topic whose
// first has other than one partition); the handler answers a wrong topic or
// partition in the partition, echoing it.
func (d *Driver) checkFetchSnapshot(req *kmsg.FetchSnapshotRequest) *refusal {
	s := fetchSnapshotShape(req)
	if s.topics == 0 || s.partitions == 0 || s.topics != 1 && s.partitions != 1 {
		return topRefusal(errInvalidRequest, "no partition")
	}
	if !d.isRaftPartition(s) {
		return nil
	}
	p := &req.Topics[0].Partitions[0]
	if p.SnapshotID.EndOffset < 0 || p.SnapshotID.Epoch < 0 {
		// No such snapshot can exist; the log is never asked for it.
		return partitionRefusal(errSnapshotNotFound, "snapshot id %d-%d", p.SnapshotID.EndOffset, p.SnapshotID.Epoch)
	}
	return checkEpoch("current leader epoch", Epoch(p.CurrentLeaderEpoch))
}

// checkSnapshotChunk: the leader and, in a NONE answer, the chunk's
// snapshot id, position and size.
func checkSnapshotChunk(p *kmsg.FetchSnapshotResponseTopicPartition) string {
	if why := checkLeader(NodeID(p.CurrentLeader.LeaderID), Epoch(p.CurrentLeader.LeaderEpoch)); why != "" {
		return why
	}
	if p.ErrorCode == errNone && (p.Position < 0 || p.Size < 0 || p.SnapshotID.EndOffset < 0 ||
		p.SnapshotID.Epoch < 0 || Epoch(p.SnapshotID.Epoch) > MaxEpoch) {
		return fmt.Sprintf("snapshot %d-%d chunk at position %d of size %d",
			p.SnapshotID.EndOffset, p.SnapshotID.Epoch, p.Position, p.Size)
	}
	return ""
}

// handleFetchSnapshot answers a request that passed checkFetchSnapshot.
func (d *Driver) handleFetchSnapshot(now time.Time, req *kmsg.FetchSnapshotRequest, _ RequestRef) kmsg.Response {
	if !d.isRaftPartition(fetchSnapshotShape(req)) {
		return d.fetchSnapshotAnswer(req, errUnknownTopic, false)
	}
	p := &req.Topics[0].Partitions[0]
	if code := d.leaderOnlyCheck(Epoch(p.CurrentLeaderEpoch)); code != errNone {
		return d.fetchSnapshotAnswer(req, code, true)
	}
	id := OffsetAndEpoch{Offset: p.SnapshotID.EndOffset, Epoch: p.SnapshotID.Epoch}
	if id == (OffsetAndEpoch{}) {
		return d.fetchSnapshotAnswer(req, errSnapshotNotFound, true)
	}
	r, err := d.log.OpenSnapshot(id)
	if err != nil {
		return d.fetchSnapshotAnswer(req, errSnapshotNotFound, true)
	}
	defer r.Close()
	size := r.Size()
	if p.Position < 0 || p.Position >= size {
		return d.fetchSnapshotAnswer(req, errPositionOutOfRange, true)
	}
	n := int64(d.cfg.MaxSnapshotChunk)
	if req.MaxBytes > 0 && int64(req.MaxBytes) < n {
		n = int64(req.MaxBytes)
	}
	n = min(n, size-p.Position)
	buf := make([]byte, n)
	if got, err := r.ReadAt(buf, p.Position); err != nil && !(err == io.EOF && int64(got) == n) {
		d.lg.Error("fetch snapshot: read failed", zap.Int64("endOffset", id.Offset), zap.Int32("epoch", id.Epoch),
			zap.Int64("position", p.Position), zap.Error(err))
		return d.fetchSnapshotAnswer(req, errSnapshotNotFound, true)
	}
	resp := d.fetchSnapshotAnswer(req, errNone, true)
	rp := &resp.Topics[0].Partitions[0]
	rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch = id.Offset, id.Epoch
	rp.Size = size
	rp.Position = p.Position
	rp.Bytes = buf
	if req.ReplicaID >= 0 && d.voters.Contains(ReplicaKey{ID: NodeID(req.ReplicaID), DirectoryID: p.ReplicaDirectoryID}) {
		d.countCheckQuorum(now, NodeID(req.ReplicaID))
	}
	return resp
}

// fetchSnapshotAnswer answers the request's first partition, echoing its
// topic and partition; withLeader adds the current leader.
func (d *Driver) fetchSnapshotAnswer(req *kmsg.FetchSnapshotRequest, code int16, withLeader bool) *kmsg.FetchSnapshotResponse {
	resp := kmsg.NewPtrFetchSnapshotResponse()
	t := kmsg.NewFetchSnapshotResponseTopic()
	t.Topic = req.Topics[0].Topic
	rp := kmsg.NewFetchSnapshotResponseTopicPartition()
	rp.Partition = req.Topics[0].Partitions[0].Partition
	rp.ErrorCode = code
	if withLeader {
		rp.CurrentLeader.LeaderID = int32(d.leaderID)
		rp.CurrentLeader.LeaderEpoch = int32(d.epoch)
	}
	t.Partitions = append(t.Partitions, rp)
	resp.Topics = append(resp.Topics, t)
	if req.Version >= 1 && rp.CurrentLeader.LeaderID >= 0 && withLeader {
		if id, ep, ok := d.leaderEndpoint(); ok {
			ne := kmsg.NewFetchSnapshotResponseNodeEndpoint()
			ne.NodeID, ne.Host, ne.Port = int32(id), ep.Host, uint16(ep.Port)
			resp.NodeEndpoints = append(resp.NodeEndpoints, ne)
		}
	}
	return resp
}

func (d *Driver) buildFetchSnapshot(w SnapshotWriter) *kmsg.FetchSnapshotRequest {
	req := kmsg.NewPtrFetchSnapshotRequest()
	req.ClusterID = d.clusterIDPtr()
	req.ReplicaID = int32(d.self())
	req.MaxBytes = int32(d.cfg.MaxSnapshotChunk)
	t := kmsg.NewFetchSnapshotRequestTopic()
	t.Topic = d.cfg.TopicName
	p := kmsg.NewFetchSnapshotRequestTopicPartition()
	p.Partition = d.cfg.Partition
	p.CurrentLeaderEpoch = int32(d.epoch)
	id := w.ID()
	p.SnapshotID.EndOffset, p.SnapshotID.Epoch = id.Offset, id.Epoch
	p.Position = w.Size()
	p.ReplicaDirectoryID = d.cfg.DirectoryID
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

// startSnapshotDownload begins fetching snapshot id (named by the leader).
func (d *Driver) startSnapshotDownload(now time.Time, id OffsetAndEpoch) bool {
	if r, err := d.log.OpenSnapshot(id); err == nil {
		// Already held locally: just move the log past it.
		_ = r.Close()
		if id.Offset > d.log.EndOffset().Offset {
			return d.installSnapshot(now, id)
		}
		return true
	}
	w, err := d.log.CreateSnapshot(id)
	if err != nil {
		d.fail(fmt.Errorf("raft: create snapshot %d-%d for download: %w", id.Offset, id.Epoch, err))
		return false
	}
	d.asFollower().snapshot = w
	d.lg.Info("fetching snapshot from leader", zap.Int64("endOffset", id.Offset), zap.Int32("epoch", id.Epoch),
		zapNode("leader", d.leaderID))
	return true
}

// installSnapshot makes a complete local snapshot the start of the log.
func (d *Driver) installSnapshot(now time.Time, id OffsetAndEpoch) bool {
	if d.hw > id.Offset {
		// The snapshot is behind what we have committed; keep the log.
		return true
	}
	// Its voter records are read before the log is given up for it.
	changes, err := d.snapshotControlChanges(id)
	if err != nil {
		d.remoteLg.Error("refusing snapshot from leader", zap.Int64("endOffset", id.Offset),
			zap.Int32("epoch", id.Epoch), zap.Error(err))
		return false
	}
	if err := d.log.TruncateToSnapshot(id); err != nil {
		d.fail(fmt.Errorf("raft: truncate log to snapshot %d-%d: %w", id.Offset, id.Epoch, err))
		return false
	}
	if err := d.kraft.resetTo(id.Offset, changes); err != nil {
		d.fail(fmt.Errorf("raft: snapshot %d-%d: %w", id.Offset, id.Epoch, err))
		return false
	}
	d.refreshVoters(now)
	if id.Offset > d.hw {
		d.hw = id.Offset
		d.log.SetHighWatermark(id.Offset)
	}
	d.lg.Info("installed snapshot", zap.Int64("endOffset", id.Offset), zap.Int32("epoch", id.Epoch))
	return true
}

func (d *Driver) handleFetchSnapshotResponse(now time.Time, p pending, resp *kmsg.FetchSnapshotResponse) bool {
	if resp.ErrorCode != errNone {
		return d.handleTopLevelError(resp.ErrorCode, kmsg.FetchSnapshot, p.to)
	}
	if !d.isRaftPartition(shapeOf(false, resp.Topics, func(t *kmsg.FetchSnapshotResponseTopic) (string, [16]byte, []kmsg.FetchSnapshotResponseTopicPartition) {
		return t.Topic, [16]byte{}, t.Partitions
	}, func(p *kmsg.FetchSnapshotResponseTopicPartition) int32 { return p.Partition })) {
		return false
	}
	rp := &resp.Topics[0].Partitions[0]
	for _, e := range resp.NodeEndpoints {
		d.learnEndpoint(NodeID(e.NodeID), e.Host, int32(e.Port))
	}
	if handled, ok := d.handleCommonResponse(now, rp.ErrorCode, NodeID(rp.CurrentLeader.LeaderID), Epoch(rp.CurrentLeader.LeaderEpoch), p.to, kmsg.FetchSnapshot); handled {
		if rp.ErrorCode == errSnapshotNotFound {
			d.abandonSnapshot("leader no longer has it")
		}
		return ok
	}
	f := d.asFollower()
	if f == nil || p.epoch != d.epoch || f.snapshot == nil {
		return true
	}
	w := f.snapshot
	id := w.ID()
	if rp.SnapshotID.EndOffset != id.Offset || rp.SnapshotID.Epoch != id.Epoch {
		d.remoteLg.Error("fetch snapshot response for another snapshot", zap.Int64("endOffset", rp.SnapshotID.EndOffset),
			zap.Int32("epoch", rp.SnapshotID.Epoch))
		return false
	}
	if rp.Position != w.Size() || rp.Size < 0 || rp.Position+int64(len(rp.Bytes)) > rp.Size {
		d.remoteLg.Error("fetch snapshot response at an unexpected position", zap.Int64("position", rp.Position),
			zap.Int64("have", w.Size()), zap.Int64("size", rp.Size))
		return false
	}
	if _, err := w.Write(rp.Bytes); err != nil {
		d.fail(fmt.Errorf("raft: write snapshot %d-%d at %d: %w", id.Offset, id.Epoch, w.Size(), err))
		return false
	}
	if w.Size() == rp.Size {
		if err := w.Freeze(); err != nil {
			d.fail(fmt.Errorf("raft: freeze snapshot %d-%d: %w", id.Offset, id.Epoch, err))
			return false
		}
		_ = w.Close()
		f.snapshot = nil
		if !d.installSnapshot(now, id) {
			return false
		}
		d.obs.SnapshotFetched(rp.Size)
	}
	f.fetched(d, now)
	return true
}

func (d *Driver) abandonSnapshot(why string) {
	f := d.asFollower()
	if f == nil || f.snapshot == nil {
		return
	}
	id := f.snapshot.ID()
	_ = f.snapshot.Close()
	f.snapshot = nil
	d.lg.Warn("abandoned snapshot download", zap.Int64("endOffset", id.Offset), zap.Int32("epoch", id.Epoch), zap.String("why", why))
}
