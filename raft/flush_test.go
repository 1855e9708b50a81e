package raft_test

import (
	"errors"
	"testing"

	"github.com/kraftd/kraftd/raft"
)

// withFlusher collects the jobs the driver hands to its Flusher.
func withFlusher(jobs *[]raft.FlushJob) opt {
	return func(c *tctx) { c.cfg.Flusher = func(j raft.FlushJob) { *jobs = append(*jobs, j) } }
}

// With leader fsync deferral the leader keeps one fsync in flight, counts
// itself toward the high watermark only once FlushDone reports it, and
// lets followers that flushed commit without it.
func TestLeaderDeferredFlush(t *testing.T) {
	var jobs []raft.FlushJob
	c := newCtx(t, 1, withPreVote(false), withLinger(0), withFlusher(&jobs))
	c.electLocal()
	if len(jobs) != 1 || jobs[0].End() != c.log.EndOffset().Offset {
		t.Fatalf("after the election %d flush jobs, want one for the LeaderChange batch", len(jobs))
	}
	if f := c.log.FlushedOffset(); f != 0 {
		t.Fatalf("flushed %d before the job ran", f)
	}
	append1 := func(v string) int64 {
		t.Helper()
		last, err := c.d.Append(c.now, 1, [][]byte{[]byte(v)})
		if err != nil {
			t.Fatal(err)
		}
		return last + 1
	}
	done := func(j raft.FlushJob) {
		t.Helper()
		if err := c.d.FlushDone(c.now, j, j.Run()); err != nil {
			t.Fatal(err)
		}
	}
	end := append1("a")
	if len(jobs) != 1 {
		t.Fatalf("%d flush jobs with one in flight, want 1", len(jobs))
	}
	// Both followers flushed through "a": they commit it without the leader.
	c.request(fetchReq(2, 1, end, 1, 0))
	c.request(fetchReq(3, 1, end, 1, 0))
	if hw := c.status().HighWatermark; hw != end {
		t.Fatalf("HW %d with both followers at %d and the leader's fsync pending, want %d", hw, end, end)
	}
	// The first job ends: the next begins, covering "a".
	done(jobs[0])
	if len(jobs) != 2 || jobs[1].End() != end {
		t.Fatalf("after FlushDone %d jobs (last end %d), want a second to %d", len(jobs), jobs[len(jobs)-1].End(), end)
	}
	done(jobs[1])
	// One follower and the leader's fsync make a majority, only once the
	// fsync is reported.
	end = append1("b")
	c.request(fetchReq(2, 1, end, 1, 0))
	if hw := c.status().HighWatermark; hw == end {
		t.Fatalf("HW %d counts the leader's unflushed append", hw)
	}
	if len(jobs) != 3 || jobs[2].End() != end {
		t.Fatalf("%d jobs, want a third to %d", len(jobs), end)
	}
	if err := jobs[2].Run(); err != nil {
		t.Fatal(err)
	}
	if hw := c.status().HighWatermark; hw == end {
		t.Fatalf("HW %d before FlushDone reported the fsync", hw)
	}
	// A job of no concern (already reported) only wakes the driver.
	done(jobs[1])
	if len(jobs) != 3 {
		t.Fatalf("a stale FlushDone began another job")
	}
	done(jobs[2])
	if hw := c.status().HighWatermark; hw != end {
		t.Fatalf("HW %d after the leader's fsync to %d with follower 2 there, want %d", hw, end, end)
	}
}

// A failed deferred fsync is fatal, as a failed Flush is.
func TestLeaderDeferredFlushFailureIsFatal(t *testing.T) {
	var jobs []raft.FlushJob
	c := newCtx(t, 1, withPreVote(false), withLinger(0), withFlusher(&jobs))
	c.electLocal()
	c.flog.FailFlush = true
	err := c.d.FlushDone(c.now, jobs[0], jobs[0].Run())
	if !errors.Is(err, errInjected) {
		t.Fatalf("FlushDone after a failed fsync: %v, want the injected error", err)
	}
	if _, err := c.d.Poll(c.now); !errors.Is(err, errInjected) {
		t.Fatalf("poll after a failed fsync: %v", err)
	}
	if hw := c.status().HighWatermark; hw != -1 {
		t.Fatalf("HW %d after the leader's only fsync failed", hw)
	}
}
