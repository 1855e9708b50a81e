package raft_test

// The simulator's liveness checks (L1-L5 of sim_check_test.go: commits after the heal,
// convergence, an idle quorum keeping its epoch, requests answered), run every 100 ms of
// virtual time, and the listener that records what each node delivers (S9).

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/raft"
)

// startLiveness begins the post-heal phase (L1): within FT + 10 ET a
// leader must commit a record appended after the heal.
func (c *checker) startLiveness() {
	c.phase = 1
	c.seqAtHeal = c.s.payloadSeq
	c.deadline = c.s.now + livenessBound
}

// periodic runs every 100ms of virtual time: request answers, liveness
// and convergence deadlines.
func (c *checker) periodic() {
	s := c.s
	if s.violation != "" || c.done {
		return
	}
	c.checkOpenRequests()
	switch c.phase {
	case 1:
		if s.now > c.deadline && s.m.membership && c.removedLeaderStall() {
			// Kafka 4.4 stalls the same way (see removedLeaderStall):
			// counted, and the seed's liveness checks end here.
			s.stats.removedLeaderStalls++
			s.tracef("LIVENESS: stalled by a removed leader's longer log; not a kraftd fault")
			c.done = true
			return
		}
		if s.now > c.deadline {
			s.fail("L1: no record appended after the heal was committed within %v (committed end %d, leader %v)", livenessBound, c.committedEnd, c.describeLeaders())
			return
		}
	case 2:
		if ok, why := c.converged(); ok {
			s.tracef("CONVERGED: committed end %d; liveness commit %v after heal; idle window of %v follows", c.committedEnd, c.commitLatency, idleWindow)
			c.phase = 3
			c.deadline = s.now + idleWindow
			c.idleStart = make([]idleMark, len(s.nodes))
			for i, n := range s.nodes {
				c.idleStart[i] = idleMark{polls: n.polls, epoch: n.drv.Status().Epoch}
			}
		} else if s.now > c.deadline && s.m.membership && c.staleEpochStall() {
			s.stats.staleEpochStalls++
			s.tracef("LIVENESS: observers above the leader's epoch, raised by a voter that missed its removal, without pre-vote; as Kafka (%s)", why)
			c.done = true
			return
		} else if s.now > c.deadline {
			s.fail("L3: nodes did not converge within %v after the liveness commit: %s", convergenceBound, why)
			return
		}
	case 3:
		if s.now >= c.deadline {
			c.checkIdle()
			c.done = true
			return
		}
	}
	s.after(100*time.Millisecond, c.periodic)
}

// idleWindow is the quiet period after convergence in which the quorum
// must do bounded work and stay in its epoch (L4, L5).
const idleWindow = 5 * time.Second

// idlePollsPerPeer bounds driver wakeups of an idle node per node in the
// cluster: a follower long-polls every MaxWaitMs (about 2-5 wakeups a
// second), a leader wakes for every follower's fetch and its expiry (about
// 30 a second with 6 fetchers); a busy loop (KAFKA-17751) is thousands.
const idlePollsPerPeer = 10

type idleMark struct {
	polls int
	epoch int32
}

// checkIdle: during the idle window no node changed epoch and none woke
// up more than idlePollsPerPeer times the cluster size per second.
func (c *checker) checkIdle() {
	s := c.s
	for i, n := range s.nodes {
		st := n.drv.Status()
		if st.Epoch != c.idleStart[i].epoch {
			s.fail("L4: node %d moved from epoch %d to %d in a fault-free idle window", n.id, c.idleStart[i].epoch, st.Epoch)
			return
		}
		if rate := float64(n.polls-c.idleStart[i].polls) / idleWindow.Seconds(); rate > float64(idlePollsPerPeer*len(s.nodes)) {
			s.fail("L5: node %d (%s) polled %.0f times per second while idle", n.id, st.Role, rate)
			return
		}
	}
	s.tracef("IDLE WINDOW OK")
}

func (c *checker) describeLeaders() string {
	var out []string
	for _, n := range c.s.nodes {
		if n.up {
			st := n.drv.Status()
			out = append(out, fmt.Sprintf("%d:%s/e%d/l%d/hw%d/leo%d", n.id, st.Role, st.Epoch, st.LeaderID, st.HighWatermark, st.LogEndOffset))
		} else {
			out = append(out, fmt.Sprintf("%d:down", n.id))
		}
	}
	return fmt.Sprint(out)
}

// converged: one leader, every node at its epoch, log end and high
// watermark, every listener caught up.
func (c *checker) converged() (bool, string) {
	s := c.s
	l := s.leaderNode()
	if l == nil {
		return false, "no leader: " + c.describeLeaders()
	}
	ls := l.drv.Status()
	if lost := c.lostAppends(ls.Epoch); len(lost) > 0 {
		return false, fmt.Sprintf("the leader of epoch %d accepted %d records not committed, e.g. %.40q", ls.Epoch, len(lost), lost[0])
	}
	if ls.HighWatermark != ls.LogEndOffset {
		return false, fmt.Sprintf("leader %d hw %d != leo %d: %s", l.id, ls.HighWatermark, ls.LogEndOffset, c.describeLeaders())
	}
	for _, n := range s.nodes {
		if !n.up {
			return false, fmt.Sprintf("node %d down", n.id)
		}
		st := n.drv.Status()
		if st.Epoch != ls.Epoch || st.LogEndOffset != ls.LogEndOffset || st.HighWatermark != ls.HighWatermark {
			return false, c.describeLeaders()
		}
		if n.listener.next != st.HighWatermark {
			return false, fmt.Sprintf("node %d listener at %d, high watermark %d", n.id, n.listener.next, st.HighWatermark)
		}
	}
	if s.m.upgrade {
		return c.upgradeConverged(ls)
	}
	return c.deferralConverged(l)
}

// checkOpenRequests: every request a driver received is answered, within
// the longest a Fetch may be parked plus slack (Transport contract).
func (c *checker) checkOpenRequests() {
	s := c.s
	const bound = 3 * time.Second
	for _, n := range s.nodes {
		if !n.up || n.pausedUntil > s.now {
			continue
		}
		keep := n.openRefs[:0]
		for _, r := range n.openRefs {
			if r.replied || r.inc != n.inc {
				continue
			}
			limit := bound
			if r.msg.key == int16(kmsg.UpdateFeatures) {
				// Answered at commit, or when check quorum ends the
				// leadership that cannot commit.
				limit += 3 * simFetchTimeout / 2
			}
			if age := s.now - max(r.at, n.pauseEnd); age > limit {
				s.fail("node %d has not answered %s corr=%d from %d for %v", n.id, kmsg.NameForKey(r.msg.key), r.msg.corr, s.nodes[r.msg.from].id, age)
				return
			}
			keep = append(keep, r)
		}
		clear(n.openRefs[len(keep):])
		n.openRefs = keep
	}
}

// simListener records deliveries; the checker verifies them after the event
// (C may only be extended once the event's effects are in).
type simListener struct {
	s        *sim
	n        *simNode
	inc      int
	next     int64
	pending  []listenerEv
	isLeader bool // last told that its own node leads
}

// listenerEv is one callback: a committed batch, or a snapshot load.
type listenerEv struct {
	batch    raft.CommittedBatch
	snapshot *raft.OffsetAndEpoch
	digest   string
	err      error
	// A leader change: the listener was told of leader le; epochStart is
	// where that epoch starts in the node's log.
	le         *raft.LeaderAndEpoch
	epochStart int64
}

func (l *simListener) HandleCommit(batches []raft.CommittedBatch) {
	if l.n.inc != l.inc {
		l.s.fail("node %d: a listener of a dead incarnation got a commit", l.n.id)
		return
	}
	for _, b := range batches {
		b.Records = slices.Clone(b.Records)
		for i := range b.Records {
			b.Records[i] = bytes.Clone(b.Records[i])
		}
		l.pending = append(l.pending, listenerEv{batch: b})
	}
}

func (l *simListener) HandleLoadSnapshot(id raft.OffsetAndEpoch, r raft.SnapshotReader) {
	l.s.tracef("node %d listener loads snapshot %d-%d", l.n.id, id.Offset, id.Epoch)
	l.s.stats.snapshotLoads++
	ev := listenerEv{snapshot: &id}
	ev.digest, ev.err = snapshotDigest(r)
	l.pending = append(l.pending, ev)
}

func (l *simListener) HandleLeaderChange(le raft.LeaderAndEpoch) {
	l.s.tracef("node %d listener: leader %d epoch %d", l.n.id, le.LeaderID, le.Epoch)
	ev := listenerEv{le: &le}
	if le.LeaderID == l.n.id && le.LeaderID >= 0 {
		ev.epochStart = l.n.disk.StartOffset()
		if oe, ok := l.n.disk.EndOffsetForEpoch(le.Epoch - 1); ok {
			ev.epochStart = oe.Offset
		}
	}
	l.pending = append(l.pending, ev)
}

func (l *simListener) BeginShutdown() {}

var _ raft.Listener = (*simListener)(nil)
