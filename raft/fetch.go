package raft

// Fetch (key 1): kraftd advertises v4-v18 (fetchAPI below); v13-v18
// are served as a raft fetch (topic ids), v4-v12 get top-level
// INVALID_REQUEST because they carry no topic id.
//
// Behavior (leader), in Kafka's order:
//   - cluster id (tag 0) mismatch -> top INCONSISTENT_CLUSTER_ID;
//   - not exactly one topic (by TopicId) with one partition -> top INVALID_REQUEST;
//   - MaxWaitMs < 0, FetchOffset < 0, LastFetchedEpoch < 0 or >
//     CurrentLeaderEpoch, CurrentLeaderEpoch above MaxEpoch -> partition
//     INVALID_REQUEST (these checks: fetchAPI);
//   - leader-only check on CurrentLeaderEpoch -> FENCED_LEADER_EPOCH,
//     UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER, BROKER_NOT_AVAILABLE
//     (shutting down);
//   - FetchOffset 0 with a snapshot other than 0-0 -> SnapshotId; else
//     (FetchOffset, LastFetchedEpoch) validated against the epoch cache
//     and the oldest snapshot -> DivergingEpoch, SnapshotId or valid;
//   - valid: the replica's end offset is recorded (voters move the HW,
//     observers are only tracked), records from FetchOffset up to 8 MiB
//     (uncommitted included, PartitionMaxBytes ignored);
//   - nothing to return, MaxWaitMs > 0 and (v18) the fetcher's HW current:
//     parked until the log end offset passes FetchOffset, the HW moves or
//     MaxWaitMs (at most 4 x MaxFetchWait) elapses, then rebuilt; answered
//     with NOT_LEADER_OR_FOLLOWER if leadership ends meanwhile.
//   - HighWatermark is -1 until an entry of the leader's epoch is committed
//     and on every error; CurrentLeader is always filled.
//
// Behavior (follower): one Fetch in flight, FetchOffset = log end offset,
// LastFetchedEpoch, MaxWaitMs 500; a NONE answer truncates on
// DivergingEpoch (never below the HW), switches to FetchSnapshot on
// SnapshotId, or appends and fsyncs (before the next Fetch acknowledges it)
// and sets HW = min(leader HW, log end offset).
//
// Version notes: v15 moves ReplicaId into ReplicaState; v16 adds the
// response NodeEndpoints; v17 adds ReplicaDirectoryId; v18 (KIP-1166) adds
// the fetcher's HighWatermark.

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/protocol"
)

var fetchAPI = rpc[*kmsg.FetchRequest, *kmsg.FetchResponse]{
	// v0-3 were removed in Kafka 4.0; v4-12 are refused (checkFetch). v18
	// adds the fetcher's high watermark (KIP-1166).
	versions:  protocol.VersionRange{Min: 4, Max: 18},
	clusterID: func(r *kmsg.FetchRequest) *string { return r.ClusterID },
	topError:  func(r *kmsg.FetchResponse) *int16 { return &r.ErrorCode },
	partitionError: func(r *kmsg.FetchResponse) int16 {
		return protocol.FirstNonZero(r.Topics, fetchPartitions, func(p *kmsg.FetchResponseTopicPartition) int16 { return p.ErrorCode })
	},
	checkClusterID: true,
	partition: func(r *kmsg.FetchRequest) partitionShape {
		return shapeOf(true, r.Topics, func(t *kmsg.FetchRequestTopic) (string, [16]byte, []kmsg.FetchRequestTopicPartition) {
			return t.Topic, t.TopicID, t.Partitions
		}, func(p *kmsg.FetchRequestTopicPartition) int32 { return p.Partition })
	},
	check:  checkFetch,
	handle: (*Driver).handleFetch,
	answer: func(d *Driver, r *kmsg.FetchRequest, code int16) *kmsg.FetchResponse {
		return d.fetchError(r, fetchReplicaID(r), code)
	},
	checkResponse: func(r *kmsg.FetchResponse) string {
		return protocol.FirstNonZero(r.Topics, fetchPartitions, checkFetchPartition)
	},
	onResponse: (*Driver).handleFetchResponse,
}.register()

func fetchPartitions(t *kmsg.FetchResponseTopic) []kmsg.FetchResponseTopicPartition {
	return t.Partitions
}

// checkFetch: a version with topic ids, the wait, offsets and epochs (the
// shape passed at the edge).
func checkFetch(_ *Driver, req *kmsg.FetchRequest) *refusal {
	if req.Version < 13 {
		return notRaftPartition
	}
	p := &req.Topics[0].Partitions[0]
	switch {
	case req.MaxWaitMillis < 0 || p.FetchOffset < 0 || p.LastFetchedEpoch < 0:
		return partitionRefusal(errInvalidRequest, "negative max wait %d, fetch offset %d or last fetched epoch %d",
			req.MaxWaitMillis, p.FetchOffset, p.LastFetchedEpoch)
	case p.LastFetchedEpoch > p.CurrentLeaderEpoch:
		return partitionRefusal(errInvalidRequest, "last fetched epoch %d above current leader epoch %d",
			p.LastFetchedEpoch, p.CurrentLeaderEpoch)
	}
	return checkEpoch("current leader epoch", Epoch(p.CurrentLeaderEpoch))
}

func checkFetchPartition(p *kmsg.FetchResponseTopicPartition) string {
	if why := checkLeader(NodeID(p.CurrentLeader.LeaderID), Epoch(p.CurrentLeader.LeaderEpoch)); why != "" {
		return why
	}
	div, snap := p.DivergingEpoch, p.SnapshotID
	switch {
	case p.HighWatermark < -1 || p.LogStartOffset < -1:
		return fmt.Sprintf("high watermark %d, log start offset %d", p.HighWatermark, p.LogStartOffset)
	case (div.Epoch < 0 || div.EndOffset < 0) && (div.Epoch != -1 || div.EndOffset != -1),
		Epoch(div.Epoch) > MaxEpoch:
		return fmt.Sprintf("diverging epoch %d end offset %d", div.Epoch, div.EndOffset)
	case (snap.Epoch < 0 || snap.EndOffset < 0) && (snap.Epoch != -1 || snap.EndOffset != -1),
		Epoch(snap.Epoch) > MaxEpoch:
		return fmt.Sprintf("snapshot id %d-%d", snap.EndOffset, snap.Epoch)
	}
	return ""
}

// parkedFetch is a Fetch waiting in the purgatory.
type parkedFetch struct {
	ref       RequestRef
	req       *kmsg.FetchRequest
	replicaID NodeID
	replica   [16]byte
}

func fetchReplicaID(req *kmsg.FetchRequest) NodeID {
	if req.Version >= 15 {
		return NodeID(req.ReplicaState.ID)
	}
	return NodeID(req.ReplicaID)
}

// handleFetch answers (or parks) a Fetch that passed the checks.
func (d *Driver) handleFetch(now time.Time, req *kmsg.FetchRequest, ref RequestRef) kmsg.Response {
	p := &req.Topics[0].Partitions[0]
	pf := &parkedFetch{ref: ref, req: req, replicaID: fetchReplicaID(req), replica: p.ReplicaDirectoryID}
	return d.tryCompleteFetch(now, pf, true)
}

// tryCompleteFetch builds the answer to a fetch, or parks it (returning
// nil) when there is nothing to send yet.
func (d *Driver) tryCompleteFetch(now time.Time, pf *parkedFetch, mayPark bool) kmsg.Response {
	return d.buildFetchAnswer(now, pf, mayPark, true)
}

// buildFetchAnswer validates and answers a fetch; record=false (an expired
// parked fetch) leaves replica tracking and check quorum alone, as Kafka
// sends the original answer then.
func (d *Driver) buildFetchAnswer(now time.Time, pf *parkedFetch, mayPark, record bool) kmsg.Response {
	req := pf.req
	p := &req.Topics[0].Partitions[0]
	if code := d.leaderOnlyCheck(Epoch(p.CurrentLeaderEpoch)); code != errNone {
		return d.fetchError(req, pf.replicaID, code)
	}
	var (
		diverging, snapshot *OffsetAndEpoch
		records             []byte
	)
	kind, oe := d.validateFetchPosition(p.FetchOffset, Epoch(p.LastFetchedEpoch))
	switch kind {
	case fetchDiverging:
		diverging = &oe
	case fetchSnapshot:
		snapshot = &oe
	default:
		if record {
			d.recordFetch(now, pf.replicaID, pf.replica, p.FetchOffset)
		}
		if p.FetchOffset < d.log.EndOffset().Offset {
			b, err := d.log.Read(p.FetchOffset, d.cfg.MaxReadBytes)
			if err != nil {
				d.lg.Error("fetch: log read failed", zap.Int64("offset", p.FetchOffset), zap.Error(err))
				return d.fetchError(req, pf.replicaID, errUnknownServer)
			}
			records = b
		}
	}
	// Fetch v18 (KIP-1166) tells the follower's HW: a stale one is answered
	// at once so the follower learns the new HW.
	l := d.asLeader()
	staleHW := req.Version >= 18 && p.HighWatermark < l.highWatermark
	if mayPark && len(records) == 0 && diverging == nil && snapshot == nil && req.MaxWaitMillis > 0 && !staleHW {
		wait := min(time.Duration(req.MaxWaitMillis)*time.Millisecond, d.cfg.MaxFetchWait*4)
		d.parked.Add(p.FetchOffset, now.Add(wait), pf)
		return nil
	}
	return d.fetchAnswer(req, pf.replicaID, errNone, l.highWatermark, records, diverging, snapshot)
}

// completeParked rebuilds a woken fetch and answers it.
func (d *Driver) completeParked(now time.Time, pf *parkedFetch) {
	if d.fatal != nil {
		return
	}
	resp := d.tryCompleteFetch(now, pf, false)
	resp.SetVersion(pf.req.Version)
	d.tr.Reply(pf.ref, resp)
}

// expireParked answers fetches whose MaxWaitMs elapsed.
func (d *Driver) expireParked(now time.Time) {
	if d.parked.Len() == 0 {
		return
	}
	d.parked.Expire(now, func(pf *parkedFetch) {
		if d.fatal != nil {
			return
		}
		resp := d.buildFetchAnswer(now, pf, false, false)
		resp.SetVersion(pf.req.Version)
		d.tr.Reply(pf.ref, resp)
		d.obs.ParkedFetchExpired()
	})
}

func (d *Driver) replyParkedError(pf *parkedFetch, code int16) {
	if d.fatal != nil {
		return
	}
	resp := d.fetchError(pf.req, pf.replicaID, code)
	resp.SetVersion(pf.req.Version)
	d.tr.Reply(pf.ref, resp)
}

type fetchKind int

const (
	fetchValid fetchKind = iota
	fetchDiverging
	fetchSnapshot
)

// validateFetchPosition checks (offset, last fetched epoch) of a follower
// against the leader's log (docs/design/state-machine.md 6.2).
func (d *Driver) validateFetchPosition(off int64, epoch Epoch) (fetchKind, OffsetAndEpoch) {
	if off == 0 {
		if snap, ok := d.log.LatestSnapshot(); ok && snap != (OffsetAndEpoch{}) {
			return fetchSnapshot, snap
		}
	}
	start := d.log.StartOffset()
	if start == 0 && off == 0 {
		return fetchValid, OffsetAndEpoch{}
	}
	if earliest, ok := d.log.EarliestSnapshot(); ok {
		if off < start || (off == start && epoch != Epoch(earliest.Epoch)) || epoch < Epoch(earliest.Epoch) {
			latest, _ := d.log.LatestSnapshot()
			return fetchSnapshot, latest
		}
	}
	end := d.log.EndOffset()
	oe, ok := d.log.EndOffsetForEpoch(int32(epoch))
	if !ok {
		if end.Offset > start {
			// The follower's epoch predates everything held here.
			oe = OffsetAndEpoch{Offset: start, Epoch: int32(epoch)}
		} else {
			oe = end
		}
	}
	if Epoch(oe.Epoch) != epoch || oe.Offset < off {
		return fetchDiverging, OffsetAndEpoch{Offset: min(oe.Offset, end.Offset), Epoch: oe.Epoch}
	}
	return fetchValid, OffsetAndEpoch{}
}

func (d *Driver) fetchError(req *kmsg.FetchRequest, replicaID NodeID, code int16) *kmsg.FetchResponse {
	return d.fetchAnswer(req, replicaID, code, -1, nil, nil, nil)
}

func (d *Driver) fetchAnswer(req *kmsg.FetchRequest, replicaID NodeID, code int16, hw int64, records []byte,
	diverging, snapshot *OffsetAndEpoch) *kmsg.FetchResponse {
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = req.Version
	t := kmsg.NewFetchResponseTopic()
	t.Topic = d.cfg.TopicName
	t.TopicID = d.cfg.TopicID
	p := kmsg.NewFetchResponseTopicPartition()
	p.Partition = d.cfg.Partition
	p.ErrorCode = code
	p.HighWatermark = hw
	if code != errNone {
		p.HighWatermark = -1
	}
	p.LogStartOffset = d.log.StartOffset()
	p.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
	p.CurrentLeader.LeaderID = int32(d.leaderID)
	p.CurrentLeader.LeaderEpoch = int32(d.epoch)
	if diverging != nil {
		p.DivergingEpoch.Epoch = diverging.Epoch
		p.DivergingEpoch.EndOffset = diverging.Offset
	}
	if snapshot != nil {
		p.SnapshotID.Epoch = snapshot.Epoch
		p.SnapshotID.EndOffset = snapshot.Offset
	}
	p.RecordBatches = records
	t.Partitions = append(t.Partitions, p)
	resp.Topics = append(resp.Topics, t)
	if req.Version >= 16 && p.CurrentLeader.LeaderID >= 0 {
		if id, ep, ok := d.leaderEndpoint(); ok {
			b := kmsg.NewFetchResponseBroker()
			b.NodeID, b.Host, b.Port = int32(id), ep.Host, ep.Port
			resp.Brokers = append(resp.Brokers, b)
		}
	}
	return resp
}

// buildFetch is the follower's (or observer's) Fetch at its log end.
func (d *Driver) buildFetch() *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.ClusterID = d.clusterIDPtr()
	req.ReplicaID = int32(d.self())
	req.ReplicaState.ID = int32(d.self())
	req.MaxWaitMillis = int32(d.cfg.MaxFetchWait / time.Millisecond)
	req.MaxBytes = int32(d.cfg.MaxFetchBytes)
	t := kmsg.NewFetchRequestTopic()
	t.Topic = d.cfg.TopicName
	t.TopicID = d.cfg.TopicID
	p := kmsg.NewFetchRequestTopicPartition()
	p.Partition = d.cfg.Partition
	p.CurrentLeaderEpoch = int32(d.epoch)
	end := d.log.EndOffset()
	p.FetchOffset = end.Offset
	p.LastFetchedEpoch = end.Epoch
	p.ReplicaDirectoryID = d.cfg.DirectoryID
	p.HighWatermark = d.hw // v18: lets the leader answer at once when it is stale
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

func (d *Driver) handleFetchResponse(now time.Time, p pending, resp *kmsg.FetchResponse) bool {
	if resp.ErrorCode != errNone {
		return d.handleTopLevelError(resp.ErrorCode, kmsg.Fetch, p.to)
	}
	if !d.isRaftPartition(shapeOf(true, resp.Topics, func(t *kmsg.FetchResponseTopic) (string, [16]byte, []kmsg.FetchResponseTopicPartition) {
		return t.Topic, t.TopicID, t.Partitions
	}, func(p *kmsg.FetchResponseTopicPartition) int32 { return p.Partition })) {
		d.remoteLg.Warn("fetch response for another partition; dropped", zapNode("from", p.to))
		return false
	}
	rp := &resp.Topics[0].Partitions[0]
	for _, b := range resp.Brokers {
		d.learnEndpoint(NodeID(b.NodeID), b.Host, b.Port)
	}
	if handled, ok := d.handleCommonResponse(now, rp.ErrorCode, NodeID(rp.CurrentLeader.LeaderID), Epoch(rp.CurrentLeader.LeaderEpoch), p.to, kmsg.Fetch); handled {
		return ok
	}
	f := d.asFollower()
	if f == nil || p.epoch != d.epoch {
		return true
	}
	switch {
	case rp.DivergingEpoch.Epoch >= 0:
		if !d.truncateToDivergence(now, OffsetAndEpoch{Offset: rp.DivergingEpoch.EndOffset, Epoch: rp.DivergingEpoch.Epoch}) {
			return false
		}
	case rp.SnapshotID.Epoch >= 0: // set in full (checkResponse)
		if !d.startSnapshotDownload(now, OffsetAndEpoch{Offset: rp.SnapshotID.EndOffset, Epoch: rp.SnapshotID.Epoch}) {
			return false
		}
	default:
		if len(rp.RecordBatches) > 0 {
			if err := d.appendAsFollower(now, rp.RecordBatches); err != nil {
				if d.fatal == nil {
					d.reportBadRecords(p.to, err)
				}
				return false
			}
			f.maybePace(d, now, len(rp.RecordBatches), rp.HighWatermark)
		}
		d.updateFollowerHW(rp.HighWatermark)
	}
	f.fetched(d, now)
	return true
}

var errBadRecords = errors.New("raft: invalid records from leader")

// reportBadRecords logs a refused Fetch answer once per leader and epoch:
// the leader resends the same batches after every backoff.
func (d *Driver) reportBadRecords(from NodeID, err error) {
	key := LeaderAndEpoch{LeaderID: int32(d.leaderID), Epoch: int32(d.epoch)}
	if d.badRecordsReported == key {
		return
	}
	d.badRecordsReported = key
	d.remoteLg.Error("fetch: leader sent records this node refuses; nothing of the answer appended, fetching again after a backoff",
		zapNode("from", from), zapEpoch("epoch", d.epoch), zap.Error(err))
}

// appendAsFollower validates and appends the leader's batches, then fsyncs
// (voters always) so the next Fetch acknowledges only durable data. Bad
// data from the leader, refused by the checks here or by the log, returns
// errBadRecords with nothing appended; only a local failure is fatal.
func (d *Driver) appendAsFollower(now time.Time, data []byte) error {
	end := d.log.EndOffset()
	leo, lastEpoch := end.Offset, end.Epoch
	// Skip whole batches we already have; offsets and epochs must continue
	// our log. Headers are enough to step over batches: the log's Append
	// checks CRCs and records (protocol.ValidateBatch) of what it appends.
	rest := data
	start, pos := -1, 0
	next := leo
	for len(rest) > 0 {
		h, err := protocol.ValidateBatchHeader(rest, d.cfg.MaxBatchBytes)
		if err != nil {
			if errors.Is(err, protocol.ErrShortBatch) && pos > 0 {
				break // a read may end in a partial batch; keep the whole ones
			}
			return fmt.Errorf("%w: batch at byte %d: %v", errBadRecords, pos, err)
		}
		if h.LastOffset() >= leo {
			if start < 0 {
				start = pos
			}
			if h.BaseOffset != next {
				return fmt.Errorf("%w: batch [%d, %d] does not start at offset %d", errBadRecords, h.BaseOffset, h.LastOffset(), next)
			}
			if Epoch(h.PartitionLeaderEpoch) > d.epoch || h.PartitionLeaderEpoch < lastEpoch {
				return fmt.Errorf("%w: batch at offset %d has epoch %d (log epoch %d, leader epoch %d)",
					errBadRecords, h.BaseOffset, h.PartitionLeaderEpoch, lastEpoch, d.epoch)
			}
			next, lastEpoch = h.NextOffset(), h.PartitionLeaderEpoch
		}
		pos += h.Size()
		rest = rest[h.Size():]
	}
	if start < 0 {
		return nil
	}
	if err := d.checkAppend(data[start:pos]); err != nil {
		return fmt.Errorf("%w: %v", errBadRecords, err)
	}
	if _, err := d.log.Append(data[start:pos]); err != nil {
		if errors.Is(err, ErrInvalidBatch) {
			// Refused without writing (e.g. a limit of this log's): the
			// leader's data, not the disk, is at fault.
			return fmt.Errorf("%w: %v", errBadRecords, err)
		}
		err = fmt.Errorf("raft: append as follower at offset %d: %w", leo, err)
		d.fail(err)
		return err
	}
	if d.isVoter || d.cfg.FsyncAsObserver {
		if err := d.log.Flush(); err != nil {
			err = fmt.Errorf("raft: flush follower log to offset %d: %w", d.log.EndOffset().Offset, err)
			d.fail(err)
			return err
		}
	}
	d.obs.Fetched(int(d.log.EndOffset().Offset - leo))
	d.noteAppended(now, data[start:pos])
	return d.fatal
}

// updateFollowerHW: HW = min(leader HW, log end offset), never decreasing.
func (d *Driver) updateFollowerHW(leaderHW int64) {
	if leaderHW < 0 {
		return
	}
	if f := d.asFollower(); f != nil {
		f.leaderHW = leaderHW
	}
	hw := min(leaderHW, d.log.EndOffset().Offset)
	if hw > d.hw {
		d.hw = hw
		d.log.SetHighWatermark(hw)
	}
}

// truncateToDivergence truncates where the leader's log and ours part
// (docs/design/state-machine.md 6.4), refusing to go below the HW.
func (d *Driver) truncateToDivergence(now time.Time, div OffsetAndEpoch) bool {
	end := d.log.EndOffset()
	var target int64
	if div.Epoch == 0 {
		target = min(div.Offset, end.Offset)
	} else if oe, ok := d.log.EndOffsetForEpoch(div.Epoch); ok {
		if oe.Epoch == div.Epoch {
			target = min(oe.Offset, div.Offset)
		} else {
			target = oe.Offset
		}
	} else {
		target = d.log.StartOffset()
	}
	target = min(target, end.Offset)
	if div.Offset < 0 || target < d.log.StartOffset() {
		d.remoteLg.Error("leader asked to truncate outside the log; refused", zap.Int64("target", target),
			zap.Int64("logStart", d.log.StartOffset()), zap.Int64("divergingEndOffset", div.Offset),
			zap.Int32("divergingEpoch", div.Epoch))
		return false
	}
	if d.hw >= 0 && target < d.hw {
		d.remoteLg.Error("leader asked to truncate below the high watermark; refused",
			zap.Int64("target", target), zap.Int64("highWatermark", d.hw),
			zap.Int64("divergingEndOffset", div.Offset), zap.Int32("divergingEpoch", div.Epoch))
		return false
	}
	if target == end.Offset {
		return true
	}
	if err := d.log.TruncateTo(target); err != nil {
		d.fail(fmt.Errorf("raft: truncate to %d: %w", target, err))
		return false
	}
	d.truncateKRaftState(now, target)
	d.lg.Info("truncated log to the divergence point", zap.Int64("offset", target), zap.Int64("previousEnd", end.Offset),
		zapNode("leader", d.leaderID))
	return true
}
