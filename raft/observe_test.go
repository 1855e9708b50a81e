package raft_test

import (
	"errors"
	"testing"
	"time"

	"github.com/kraftd/kraftd/raft"
)

// recObserver records the driver's events.
type recObserver struct {
	elections []time.Duration
	commits   []commitEvent
	appended  int
	fetched   int
	snapshots []int64
	expired   int
}

type commitEvent struct {
	records int
	took    time.Duration
}

func (o *recObserver) ElectionFinished(d time.Duration) { o.elections = append(o.elections, d) }
func (o *recObserver) Committed(n int, d time.Duration) {
	o.commits = append(o.commits, commitEvent{n, d})
}
func (o *recObserver) Appended(n int)             { o.appended += n }
func (o *recObserver) Fetched(n int)              { o.fetched += n }
func (o *recObserver) SnapshotFetched(size int64) { o.snapshots = append(o.snapshots, size) }
func (o *recObserver) ParkedFetchExpired()        { o.expired++ }

// A leader's observer sees its election's duration, each appended batch,
// and each batch's commit with the time from its append, on the injected
// clock; parked fetches that time out are counted.
func TestObservedLeaderEvents(t *testing.T) {
	o := &recObserver{}
	c := newCtx(t, 1, withObserver(o), withLinger(0), withPreVote(false))
	c.advance(2 * c.cfg.ElectionTimeout) // a candidate now
	votes := sentOf(c.takeSent(), 52)
	c.advance(7 * time.Millisecond)
	for _, v := range votes {
		c.respond(v, voteResp(1, -1, true))
	}
	c.wantRole(raft.RoleLeader, 1)
	c.takeSent()
	if len(o.elections) != 1 || o.elections[0] != 7*time.Millisecond {
		t.Fatalf("elections %v, want one of 7ms", o.elections)
	}
	st := c.status()
	if !st.IsVoter || st.CommittedInEpoch || st.LogEndEpoch != 1 {
		t.Fatalf("new leader status %+v", st)
	}
	// The LeaderChange batch (offset 0) commits once a follower fetched past it.
	c.advance(30 * time.Millisecond)
	c.request(fetchReq(2, 1, 1, 1, 0))
	if len(o.commits) != 1 || o.commits[0].records != 1 || o.commits[0].took != 30*time.Millisecond {
		t.Fatalf("commits %+v, want the LeaderChange after 30ms", o.commits)
	}
	if !c.status().CommittedInEpoch {
		t.Fatal("CommittedInEpoch false after the first commit")
	}
	if _, err := c.d.Append(c.now, 1, [][]byte{[]byte("a"), []byte("b"), []byte("c")}); err != nil {
		t.Fatal(err)
	}
	c.poll()
	if o.appended != 4 {
		t.Fatalf("appended %d records, want 4 (LeaderChange and a, b, c)", o.appended)
	}
	c.advance(5 * time.Millisecond)
	c.request(fetchReq(3, 1, 4, 1, 0))
	if len(o.commits) != 2 || o.commits[1] != (commitEvent{3, 5 * time.Millisecond}) {
		t.Fatalf("commits %+v, want a, b, c after 5ms", o.commits)
	}
	// A fetch at the log end parks; at its MaxWaitMs it expires.
	c.request(fetchReq(2, 1, 4, 1, 500))
	if n := c.d.ParkedFetches(); n != 1 {
		t.Fatalf("parked %d, want 1", n)
	}
	c.advance(time.Second)
	if o.expired != 1 || c.d.ParkedFetches() != 0 {
		t.Fatalf("expired %d parked %d, want 1 0", o.expired, c.d.ParkedFetches())
	}
	p := c.d.VoterProgress(c.now)
	if len(p) != 3 || p[0].ID != 1 || p[0].EndOffset != 4 || p[1].EndOffset != 4 || p[2].EndOffset != 4 {
		t.Fatalf("voter progress %+v", p)
	}
}

// A follower's observer counts the records it fetched, and its status
// carries the leader's high watermark and the time of the last answer.
func TestObservedFollowerEvents(t *testing.T) {
	o := &recObserver{}
	c := newCtx(t, 1, withObserver(o), withState(raft.ElectionState{Epoch: 2, LeaderID: 2, VotedID: -1}))
	c.wantRole(raft.RoleFollower, 2)
	if st := c.status(); !st.LastFetch.IsZero() || st.LeaderHighWatermark != -1 {
		t.Fatalf("follower before any fetch: %+v", st)
	}
	c.poll()
	fetches := sentOf(c.takeSent(), 1)
	if len(fetches) != 1 {
		t.Fatalf("fetches sent: %d", len(fetches))
	}
	c.respond(fetches[0], fetchResp(2, 2, 5, dataBatch(0, 2, 3)))
	if o.fetched != 3 {
		t.Fatalf("fetched %d records, want 3", o.fetched)
	}
	st := c.status()
	if st.LeaderHighWatermark != 5 || !st.LastFetch.Equal(c.now) || st.HighWatermark != 3 || len(o.elections) != 0 {
		t.Fatalf("follower after a fetch: %+v (elections %v)", st, o.elections)
	}
	if c.d.VoterProgress(c.now) != nil {
		t.Fatal("voter progress on a follower")
	}
}

// A loaded leader writes a batch as soon as it holds AppendFlushBytes,
// before the linger ends, and refuses appends (ErrBufferFull) while its
// uncommitted backlog is at MaxUncommittedBytes, until the followers'
// fetches commit it.
func TestLeaderFlushSizeAndBacklogBound(t *testing.T) {
	c := newCtx(t, 1, withLinger(25*time.Millisecond), withPreVote(false), func(c *tctx) {
		c.cfg.AppendFlushBytes, c.cfg.MaxUncommittedBytes = 1000, 4000
	})
	c.electLocal()
	c.request(fetchReq(2, 1, 1, 1, 0)) // commits the LeaderChange at offset 0
	end := func() int64 { return c.status().LogEndOffset }
	if _, err := c.d.Append(c.now, 1, [][]byte{make([]byte, 600)}); err != nil {
		t.Fatal(err)
	}
	c.poll()
	if end() != 1 {
		t.Fatalf("log end %d: a batch below the flush size was written before its linger", end())
	}
	if _, err := c.d.Append(c.now, 1, [][]byte{make([]byte, 600)}); err != nil {
		t.Fatal(err)
	}
	if end() != 3 {
		t.Fatalf("log end %d: a batch at the flush size waits for the linger, want it written at once (end 3)", end())
	}
	var refused error
	for i := 0; i < 10 && refused == nil; i++ {
		_, refused = c.d.Append(c.now, 1, [][]byte{make([]byte, 900)})
	}
	if !errors.Is(refused, raft.ErrBufferFull) {
		t.Fatalf("ten appends of 900 bytes over a backlog bound of 4000: %v, want ErrBufferFull", refused)
	}
	// The followers fetch everything written: it commits, and appends go again.
	c.advance(25 * time.Millisecond)
	c.request(fetchReq(2, 1, end(), 1, 0))
	c.request(fetchReq(3, 1, end(), 1, 0))
	if hw := c.status().HighWatermark; hw != end() {
		t.Fatalf("high watermark %d, log end %d", hw, end())
	}
	if _, err := c.d.Append(c.now, 1, [][]byte{make([]byte, 900)}); err != nil {
		t.Fatalf("append after the backlog committed: %v", err)
	}
}
