package raft_test

// Input from hostile or broken peers: out-of-range fields, epochs that
// cannot be incremented, malformed batches. None may crash, stall or stop
// the node; each is refused with Kafka's error code or dropped.

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/raft/rafttest"
	"github.com/kraftd/kraftd/topics"
)

func TestRequestsAboveMaxEpochAreRefused(t *testing.T) {
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 5, LeaderID: -1, VotedID: -1}))
	writes := c.store.Writes
	r := voteReq(2, math.MaxInt32, 0, 0, false)
	r.ClusterID = nil // null is accepted: only the epoch is wrong
	if _, p := votePart(c.request(r)); p.ErrorCode != kerr.InvalidRequest.Code || p.VoteGranted || p.LeaderEpoch != 5 {
		t.Errorf("vote at MaxInt32: %+v, want INVALID_REQUEST at epoch 5", p)
	}
	if _, p := beginPart(c.request(beginReq(2, math.MaxInt32))); p.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("BeginQuorumEpoch at MaxInt32: error %d, want INVALID_REQUEST", p.ErrorCode)
	}
	resp := c.request(endReq(2, math.MaxInt32)).(*kmsg.EndQuorumEpochResponse)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.InvalidRequest.Code {
		t.Errorf("EndQuorumEpoch at MaxInt32: error %d, want INVALID_REQUEST", code)
	}
	resp = c.request(endReq(2, 6, 3, -4)).(*kmsg.EndQuorumEpochResponse)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.InvalidRequest.Code {
		t.Errorf("EndQuorumEpoch with a negative preferred candidate: error %d, want INVALID_REQUEST", code)
	}
	c.wantRole(raft.RoleUnattached, 5)
	if st, _, _ := c.store.Read(); st.Epoch != 5 || c.store.Writes != writes {
		t.Fatalf("persisted %+v after %d writes; nothing should have been written", st, c.store.Writes-writes)
	}

	// MaxEpoch itself is accepted, and persisted.
	if _, p := votePart(c.request(voteReq(2, int32(raft.MaxEpoch), 0, 0, false))); p.ErrorCode != 0 || !p.VoteGranted {
		t.Fatalf("vote at MaxEpoch: %+v, want a grant", p)
	}
	c.wantRole(raft.RoleVoted, int32(raft.MaxEpoch))
}

func TestLeaderRefusesOutOfRangeFetches(t *testing.T) {
	c := newCtx(t, 1, withPreVote(false))
	c.electLocal()
	if _, p := fetchPart(c.request(fetchReq(2, math.MaxInt32, 0, 0, 0))); p.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("fetch at epoch MaxInt32: error %d, want INVALID_REQUEST", p.ErrorCode)
	}
	fs := kmsg.NewPtrFetchSnapshotRequest()
	fs.ClusterID = strp(testCluster)
	ft := kmsg.NewFetchSnapshotRequestTopic()
	ft.Topic = topics.ClusterMetadata
	fp := kmsg.NewFetchSnapshotRequestTopicPartition()
	fp.CurrentLeaderEpoch = 1
	fp.SnapshotID.EndOffset, fp.SnapshotID.Epoch = -3, 1
	ft.Partitions = append(ft.Partitions, fp)
	fs.Topics = append(fs.Topics, ft)
	sr := c.request(fs).(*kmsg.FetchSnapshotResponse)
	if code := sr.Topics[0].Partitions[0].ErrorCode; code != kerr.SnapshotNotFound.Code {
		t.Errorf("fetch snapshot of id -3-1: error %d, want SNAPSHOT_NOT_FOUND", code)
	}
	c.wantRole(raft.RoleLeader, 1)
}

func TestResponsesAboveMaxEpochAreDropped(t *testing.T) {
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 2, LeaderID: 2, VotedID: -1}))
	c.poll()
	f := sentOf(c.takeSent(), 1)
	r := fetchResp(3, math.MaxInt32, -1, nil)
	r.Topics[0].Partitions[0].ErrorCode = kerr.FencedLeaderEpoch.Code
	c.respond(f[0], r)
	c.wantRole(raft.RoleFollower, 2)
	if c.status().LeaderID != 2 {
		t.Fatalf("leader %d, want 2", c.status().LeaderID)
	}
	// The destination backs off: no fetch until retry.backoff.ms passed.
	c.poll()
	if n := len(sentOf(c.takeSent(), 1)); n != 0 {
		t.Fatalf("%d fetches sent at once after a dropped response", n)
	}
	c.advance(c.cfg.RetryBackoff)
	f = sentOf(c.takeSent(), 1)
	if len(f) != 1 {
		t.Fatalf("no fetch after the backoff")
	}
	r = fetchResp(2, 2, -1, nil)
	r.Topics[0].Partitions[0].SnapshotID.EndOffset = 10 // epoch left at -1
	c.respond(f[0], r)
	if c.status().Role != raft.RoleFollower || c.log.EndOffset().Offset != 0 {
		t.Fatalf("half a snapshot id was acted on: %+v", c.status())
	}
}

func TestNodeAtMaxEpochNeverStartsAnElection(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []opt
	}{
		{"unattached", []opt{withState(raft.ElectionState{Epoch: int32(raft.MaxEpoch), LeaderID: -1, VotedID: -1})}},
		{"follower, pre-vote", []opt{withPreVote(true), withState(raft.ElectionState{Epoch: int32(raft.MaxEpoch), LeaderID: 2, VotedID: -1})}},
		{"candidate", []opt{withState(raft.ElectionState{Epoch: int32(raft.MaxEpoch), LeaderID: -1, VotedID: 1})}},
		{"single voter that led", []opt{withVoters(1), withState(raft.ElectionState{Epoch: int32(raft.MaxEpoch), LeaderID: 1, VotedID: 1})}},
		{"resigned", []opt{withState(raft.ElectionState{Epoch: int32(raft.MaxEpoch), LeaderID: 1, VotedID: 1})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.ErrorLevel)
			c := newCtx(t, 1, append(tc.opts, withLogger(zap.New(core)))...)
			role := c.status().Role
			for range 20 {
				next := c.poll()
				if !next.After(c.now) {
					t.Fatalf("next poll %v is not after now %v: busy loop", next, c.now)
				}
				c.advance(next.Sub(c.now))
				c.takeSent()
			}
			if st := c.status(); st.Epoch != int32(raft.MaxEpoch) || (st.Role != role && st.Role != raft.RoleFollower) {
				t.Fatalf("status %+v, want %s at MaxEpoch", st, role)
			}
			if n := logs.FilterMessageSnippet("epoch is at its maximum").Len(); n != 1 {
				t.Fatalf("logged %d times, want once", n)
			}
		})
	}
}

func TestFollowerRefusesMalformedBatchesAndStaysUp(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	c := newCtx(t, 1, withLogger(zap.New(core)), withState(raft.ElectionState{Epoch: 2, LeaderID: 2, VotedID: -1}))
	c.poll()
	f := sentOf(c.takeSent(), 1)
	for i, bad := range [][]byte{
		rafttest.Reseal(dataBatch(1, 2, 2), rafttest.BatchLastOffsetDeltaAt, uint32(0xfffffffb)), // -5
		rafttest.Reseal(dataBatch(1, 2, 2), rafttest.BatchRecordCountAt, 0),                      // no record for 2 offsets
		rafttest.Reseal(dataBatch(1, 2, 2), 8, 1<<30),                                            // larger than any batch
	} {
		// A good batch first: nothing of the answer may be appended.
		c.respond(f[0], fetchResp(2, 2, 3, append(dataBatch(0, 2, 1), bad...)))
		if end := c.log.EndOffset().Offset; end != 0 {
			t.Fatalf("case %d: appended up to %d", i, end)
		}
		c.poll()
		if n := len(sentOf(c.takeSent(), 1)); n != 0 {
			t.Fatalf("case %d: fetched again without backing off", i)
		}
		c.advance(c.cfg.RetryBackoff)
		if f = sentOf(c.takeSent(), 1); len(f) != 1 {
			t.Fatalf("case %d: no fetch after the backoff", i)
		}
	}
	c.wantRole(raft.RoleFollower, 2)
	if n := logs.FilterMessageSnippet("leader sent records this node refuses").Len(); n != 1 {
		t.Fatalf("refusal logged %d times for one leader and epoch, want once", n)
	}
	// Good data is appended after all.
	c.respond(f[0], fetchResp(2, 2, 3, dataBatch(0, 2, 3)))
	if end := c.log.EndOffset().Offset; end != 3 {
		t.Fatalf("log end %d after a good answer, want 3", end)
	}
}

// refusingLog refuses every Append as invalid input, as a log with a smaller
// segment than the leader's batch does.
type refusingLog struct{ raft.Log }

func (refusingLog) Append([]byte) (int64, error) {
	return 0, fmt.Errorf("%w: batch above this log's segment size", raft.ErrInvalidBatch)
}

func TestFollowerSurvivesLogRefusingLeaderData(t *testing.T) {
	c := newCtx(t, 1, withLogWrap(func(l raft.Log) raft.Log { return refusingLog{l} }),
		withState(raft.ElectionState{Epoch: 2, LeaderID: 2, VotedID: -1}))
	c.poll()
	f := sentOf(c.takeSent(), 1)
	c.respond(f[0], fetchResp(2, 2, 1, dataBatch(0, 2, 1))) // fails the test if Step returns an error
	c.advance(c.cfg.RetryBackoff)
	if len(sentOf(c.takeSent(), 1)) != 1 {
		t.Fatal("no fetch after the backoff")
	}
	c.wantRole(raft.RoleFollower, 2)
}

// corruptReadLog replaces the batch at offset at, in what Read returns, by
// one that passes its CRC but does not decode (no record for its two
// offsets): damage on disk.
type corruptReadLog struct {
	raft.Log
	at int64
}

func (l corruptReadLog) Read(from int64, maxBytes int) ([]byte, error) {
	data, err := l.Log.Read(from, maxBytes)
	for pos := 0; err == nil && pos < len(data); {
		h, _ := protocol.ParseBatchHeader(data[pos:])
		if h.BaseOffset == l.at {
			return append(data[:pos:pos], rafttest.Reseal(dataBatch(l.at, 2, 2), rafttest.BatchRecordCountAt, 0)...), nil
		}
		pos += h.Size()
	}
	return data, err
}

func TestUndecodableCommittedBatchIsFatalOnce(t *testing.T) {
	core, logs := observer.New(zapcore.ErrorLevel)
	c := newCtx(t, 1, withLogger(zap.New(core)), withLogBatches(2, 2, 2),
		withLogWrap(func(l raft.Log) raft.Log { return corruptReadLog{l, 1} }),
		withState(raft.ElectionState{Epoch: 2, LeaderID: 2, VotedID: -1}))
	l := &recListener{}
	c.d.Register(l)
	c.poll()
	f := sentOf(c.takeSent(), 1)
	err := c.d.Step(c.now, raft.Message{From: f[0].To, Corr: f[0].Corr, Response: fetchResp(2, 2, 3, nil)})
	if err == nil || !strings.Contains(err.Error(), "committed batch at offset 1 does not decode") {
		t.Fatalf("step: %v, want a fatal error naming offset 1", err)
	}
	if len(l.commits) != 1 || l.commits[0].LastOffset != 0 {
		t.Fatalf("delivered %+v, want offset 0 only", l.commits)
	}
	for range 3 {
		c.now = c.now.Add(c.cfg.FetchTimeout)
		if _, perr := c.d.Poll(c.now); perr != err {
			t.Fatalf("poll after the failure: %v, want the same fatal error", perr)
		}
	}
	if n := logs.FilterMessageSnippet("fatal error").Len(); n != 1 {
		t.Fatalf("fatal error logged %d times, want once", n)
	}
}
