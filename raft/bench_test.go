package raft_test

import (
	"testing"

	"github.com/kraftd/kraftd/raft"
)

// BenchmarkLeaderFetch is the leader's core cost per Fetch of a caught-up
// voter (validation, replica tracking, HW check, response build).
func BenchmarkLeaderFetch(b *testing.B) {
	c := newCtx(b, 1, withPreVote(false))
	c.electLocal()
	c.tr.replies = c.tr.replies[:0]
	req := fetchReq(2, 1, c.log.EndOffset().Offset, 1, 0)
	m := raft.Message{Request: req, Ref: 1}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.d.Step(c.now, m); err != nil {
			b.Fatal(err)
		}
		if len(c.tr.replies) > 1024 {
			c.tr.replies = c.tr.replies[:0]
		}
	}
}

// BenchmarkLeaderFetchWithRecords: a follower one batch (10 records)
// behind.
func BenchmarkLeaderFetchWithRecords(b *testing.B) {
	c := newCtx(b, 1, withPreVote(false), withLinger(0))
	c.electLocal()
	from := c.log.EndOffset().Offset
	recs := make([][]byte, 10)
	for i := range recs {
		recs[i] = make([]byte, 100)
	}
	if _, err := c.d.Append(c.now, 1, recs); err != nil {
		b.Fatal(err)
	}
	c.poll()
	req := fetchReq(2, 1, from, 1, 0)
	m := raft.Message{Request: req, Ref: 1}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.d.Step(c.now, m); err != nil {
			b.Fatal(err)
		}
		if len(c.tr.replies) > 1024 {
			c.tr.replies = c.tr.replies[:0]
		}
	}
}

// BenchmarkVote is the cost of answering a Vote (a pre-vote, so nothing is
// persisted and every iteration sees the same state).
func BenchmarkVote(b *testing.B) {
	c := newCtx(b, 1, withState(raft.ElectionState{Epoch: 5, LeaderID: -1, VotedID: -1}))
	m := raft.Message{Request: voteReq(2, 5, 0, 0, true), Ref: 1}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.d.Step(c.now, m); err != nil {
			b.Fatal(err)
		}
		if len(c.tr.replies) > 1024 {
			c.tr.replies = c.tr.replies[:0]
		}
	}
}

// BenchmarkVoteGranted includes the durable grant (in-memory store) and the
// epoch bump that precedes it: each iteration votes in a new epoch.
func BenchmarkVoteGranted(b *testing.B) {
	c := newCtx(b, 1)
	reqs := make([]raft.Message, b.N)
	for i := range reqs {
		reqs[i] = raft.Message{Request: voteReq(2, int32(i+1), 0, 0, false), Ref: 1}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.d.Step(c.now, reqs[i]); err != nil {
			b.Fatal(err)
		}
		if len(c.tr.replies) > 1024 {
			c.tr.replies = c.tr.replies[:0]
		}
	}
}

// BenchmarkLeaderAppendCommit: a single-voter leader (MemLog) appends 100
// records of 100 bytes per op and commits them: accumulate, encode, append,
// flush, HW, listener decode and delivery. Reports records/s.
func BenchmarkLeaderAppendCommit(b *testing.B) {
	benchmarkLeaderAppendCommit(b)
}

// BenchmarkLeaderAppendCommitObserved is BenchmarkLeaderAppendCommit with
// an Observer: the cost of the events a node turns into metrics.
func BenchmarkLeaderAppendCommitObserved(b *testing.B) {
	benchmarkLeaderAppendCommit(b, withObserver(&recObserver{}))
}

func benchmarkLeaderAppendCommit(b *testing.B, opts ...opt) {
	c := newCtx(b, 1, append([]opt{withVoters(1), withLinger(0)}, opts...)...)
	l := &countingListener{}
	c.d.Register(l)
	c.poll()
	recs := make([][]byte, 100)
	for i := range recs {
		recs[i] = make([]byte, 100)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.d.Append(c.now, 1, recs); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if l.records != int64(b.N)*100 {
		b.Fatalf("committed %d records, want %d", l.records, b.N*100)
	}
	b.ReportMetric(float64(l.records)/b.Elapsed().Seconds(), "records/s")
}

type countingListener struct{ records int64 }

func (l *countingListener) HandleCommit(bs []raft.CommittedBatch) {
	for _, b := range bs {
		if !b.Control {
			l.records += int64(len(b.Records))
		}
	}
}
func (l *countingListener) HandleLoadSnapshot(raft.OffsetAndEpoch, raft.SnapshotReader) {}
func (l *countingListener) HandleLeaderChange(raft.LeaderAndEpoch)                      {}
func (l *countingListener) BeginShutdown()                                              {}
