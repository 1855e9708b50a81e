package raft_test

// Invariants of docs/design/faults.md 1, checked after every simulator
// event for the node the event touched (and for every node after global
// events). The checker keeps C, every batch ever committed, contiguous from
// offset 0, filled from the log of whichever node first reports a high
// watermark past its end.
//
//	S1  one leader per epoch (roles and persisted leader ids); a restarted
//	    node never leads an epoch it led before
//	S2  persisted epochs never decrease, one vote per node and epoch, no
//	    observer votes; in-memory epochs never decrease
//	S3  one batch per (base offset, epoch) across all logs
//	S4  a leader holds everything committed in earlier epochs
//	S5  a commit is durable (flushed, same bytes) on a majority of voters
//	S6  below its own high watermark a log equals C; committed data a node
//	    held is never truncated
//	S7  high watermarks never go back, never exceed the log end, and no
//	    truncation goes below one
//	S8  a leader raises its high watermark only over an entry of its epoch
//	S9  listeners get exactly C in order, once, never above their node's
//	    high watermark, snapshots with the right content, leadership only
//	    after reaching the epoch start
//	S10 a log that does not start at 0 starts at a snapshot; snapshots cover
//	    committed data only, with the committed digest and epoch
//	S11 no record committed twice; Append's offsets are where it commits
//	S12 requests from another cluster change nothing (sim_test.go)
//	L1  after the heal a new record commits within FT + 10 ET
//	L2  a leader cut off from a majority resigns (check quorum)
//	L3  all nodes converge (log end, high watermark, listeners)
//	L4  an idle quorum keeps its epoch; L5 its nodes wake up a bounded
//	    number of times
//	and every request is answered within 3 s of virtual time (L1-L5 and the
//	request check live in sim_liveness_test.go).

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

// cEntry is one committed batch.
type cEntry struct {
	base, last int64
	epoch      int32
	control    bool
	data       []byte   // the batch bytes (MemLog's own, never modified)
	values     [][]byte // decoded record values
	cum        uint64   // FNV-1a over every committed batch up to this one
}

// entryEndingAt returns the committed batch whose last offset is end-1.
func (c *checker) entryEndingAt(end int64) (cEntry, bool) {
	i, found := slices.BinarySearchFunc(c.C, end-1, func(e cEntry, last int64) int { return cmpInt64(e.last, last) })
	if !found {
		return cEntry{}, false
	}
	return c.C[i], true
}

// snapshotDigestAt is what a snapshot ending at end must hold.
func (c *checker) snapshotDigestAt(end int64) (string, bool) {
	e, ok := c.entryEndingAt(end)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%s%d/%d", snapshotDigestPrefix, end, e.cum), true
}

func fnv1a(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

type voteKey struct {
	node  int
	epoch int32
}

type nodeCheck struct {
	lastEpoch      int32 // across incarnations: epochs never decrease
	lastHW         int64 // per incarnation; -1 unknown
	lastRole       raft.Role
	lastRoleEpoch  int32
	verifiedEnd    int64 // the log below this equals C
	scannedEnd     int64 // batches below this were checked for log matching
	persistedEpoch int32
	hasPersisted   bool
	lastSnapshot   raft.OffsetAndEpoch // last snapshot checked
}

func (c *nodeCheck) restarted(n *simNode) {
	c.lastHW = -1
	c.lastRole = raft.RoleUnattached
	c.lastRoleEpoch = -1
}

type checker struct {
	s            *sim
	C            []cEntry
	committedEnd int64
	leaders      map[int32]int32     // epoch -> leader id
	seen         map[batchKey][]byte // first batch seen per (base offset, epoch)
	commitEpochs []epochEnd          // committed end per epoch of the node that reported it
	votes        map[voteKey]int32
	ledIn        map[voteKey]int  // (node, epoch) -> incarnation that led it
	appendedAt   map[string]int64 // workload payload -> offset Append returned
	appendedIn   map[string]int32 // workload payload -> epoch it was appended in
	committedAt  map[string]int64 // workload payload -> committed offset
	// bootVoters is the initial voter set; voterHistory the committed
	// Voters records (sim_membership_test.go).
	bootVoters   []int32
	voterHistory []votersEntry
	// upgradedAt is the offset of the committed KRaftVersion(1) record, -1
	// before (sim_upgrade_test.go).
	upgradedAt   int64
	maxCommitted int // highest workload payload number committed

	// Liveness and convergence after the fault phase.
	phase         int // 0 faults, 1 waiting for a commit, 2 converging, 3 idle
	idleStart     []idleMark
	deadline      time.Duration
	seqAtHeal     int
	commitLatency time.Duration
	done          bool
}

func (c *checker) init(s *sim) {
	c.s = s
	c.leaders = map[int32]int32{}
	c.seen = map[batchKey][]byte{}
	c.votes = map[voteKey]int32{}
	c.ledIn = map[voteKey]int{}
	c.appendedAt = map[string]int64{}
	c.appendedIn = map[string]int32{}
	c.committedAt = map[string]int64{}
	c.upgradedAt = -1
	for i := range s.opts.voters {
		c.bootVoters = append(c.bootVoters, int32(i+1))
	}
	s.after(500*time.Millisecond, c.periodic)
}

func (c *checker) appended(payload string, offset int64, epoch int32) {
	c.appendedAt[payload] = offset
	c.appendedIn[payload] = epoch
}

// lostAppends lists records Append accepted in epoch e that are not
// committed (L3: the leader of e, still leading at convergence, must have
// committed everything it accepted).
func (c *checker) lostAppends(e int32) []string {
	var out []string
	for p, pe := range c.appendedIn {
		if _, ok := c.committedAt[p]; pe == e && !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// onPersist sees every quorum-state write (S1, S2).
func (c *checker) onPersist(n *simNode, st raft.ElectionState) {
	s := c.s
	nc := &n.chk
	if nc.hasPersisted && st.Epoch < nc.persistedEpoch {
		s.fail("S2: node %d persisted epoch %d after epoch %d", n.id, st.Epoch, nc.persistedEpoch)
	}
	nc.persistedEpoch, nc.hasPersisted = st.Epoch, true
	if st.VotedID >= 0 {
		k := voteKey{n.idx, st.Epoch}
		if v, ok := c.votes[k]; ok && v != st.VotedID {
			s.fail("S2: node %d voted for %d and then %d in epoch %d", n.id, v, st.VotedID, st.Epoch)
		}
		c.votes[k] = st.VotedID
		// Kafka lets a node outside the voter set grant votes (its up-to-date
		// rule still applies), so with membership changes any node with an
		// id may vote.
		if !n.voter && !s.m.membership {
			s.fail("observer %d persisted a vote for %d in epoch %d", n.id, st.VotedID, st.Epoch)
		}
	}
	if st.LeaderID >= 0 {
		c.noteLeader(n, st.Epoch, st.LeaderID, "persisted")
	}
	s.tracef("node %d persist epoch=%d leader=%d voted=%d", n.id, st.Epoch, st.LeaderID, st.VotedID)
}

func (c *checker) noteLeader(n *simNode, epoch, leader int32, how string) {
	if l, ok := c.leaders[epoch]; ok && l != leader {
		c.s.fail("S1: two leaders in epoch %d: %d and %d (%s by node %d)", epoch, l, leader, how, n.id)
		return
	}
	c.leaders[epoch] = leader
}

// afterEvent checks one node.
func (c *checker) afterEvent(n *simNode) {
	s := c.s
	if s.violation != "" {
		return
	}
	nc := &n.chk
	if low, ok := n.disk.TakeLowestEnd(); ok {
		// A truncation by the driver (crashes are accounted in crashed).
		if low < nc.lastHW {
			s.fail("S7: node %d truncated its log to %d, below its high watermark %d", n.id, low, nc.lastHW)
			return
		}
		if low < nc.verifiedEnd {
			s.fail("S6: node %d truncated committed data: log end %d, committed batches held up to %d", n.id, low, nc.verifiedEnd)
			return
		}
		nc.scannedEnd = min(nc.scannedEnd, low)
		s.tracef("node %d truncated to %d", n.id, low)
	}
	if n.up {
		st := n.drv.Status()
		if st.Epoch < nc.lastEpoch {
			s.fail("S2: node %d epoch went from %d to %d", n.id, nc.lastEpoch, st.Epoch)
			return
		}
		nc.lastEpoch = st.Epoch
		if st.Role != nc.lastRole || st.Epoch != nc.lastRoleEpoch {
			s.tracef("node %d %s -> %s epoch=%d leader=%d hw=%d leo=%d", n.id, nc.lastRole, st.Role, st.Epoch, st.LeaderID, st.HighWatermark, st.LogEndOffset)
			s.noteDeferral(n, nc.lastRole, st.Role)
			if st.Role == raft.RoleLeader {
				s.stats.leaderChanges++
				if !n.voter && !s.m.membership {
					s.fail("observer %d became leader of epoch %d", n.id, st.Epoch)
					return
				}
			}
		}
		if s.m.membership || s.m.upgrade {
			c.checkMembership(n, st)
			if s.m.upgrade {
				c.checkUpgrade(n, st)
			}
			if s.violation != "" {
				return
			}
		}
		if st.Role == raft.RoleLeader {
			c.noteLeader(n, st.Epoch, n.id, "role")
			k := voteKey{n.idx, st.Epoch}
			if inc, ok := c.ledIn[k]; ok && inc != n.inc {
				s.fail("S1: node %d leads epoch %d again after a restart (KAFKA-10527)", n.id, st.Epoch)
				return
			}
			c.ledIn[k] = n.inc
			if need := c.committedBefore(st.Epoch); st.LogEndOffset < need {
				s.fail("S4: leader %d of epoch %d has log end %d, below %d, committed in earlier epochs", n.id, st.Epoch, st.LogEndOffset, need)
				return
			}
		}
		if st.HighWatermark >= 0 {
			if st.HighWatermark < nc.lastHW {
				s.fail("S7: node %d high watermark went back from %d to %d", n.id, nc.lastHW, st.HighWatermark)
				return
			}
			if st.HighWatermark > st.LogEndOffset {
				s.fail("S7: node %d high watermark %d is above its log end offset %d", n.id, st.HighWatermark, st.LogEndOffset)
				return
			}
			if st.Role == raft.RoleLeader && st.HighWatermark > nc.lastHW && st.HighWatermark > 0 {
				if b, ok := n.disk.BatchAt(st.HighWatermark - 1); !ok || b.Epoch != st.Epoch {
					s.fail("S8: leader %d of epoch %d raised its high watermark to %d without a committed entry of its epoch (entry epoch %d)", n.id, st.Epoch, st.HighWatermark, b.Epoch)
					return
				}
			}
			if st.HighWatermark > c.committedEnd {
				c.extend(n, st.HighWatermark)
				if s.violation != "" {
					return
				}
			}
		}
		nc.lastHW = st.HighWatermark
		nc.lastRole, nc.lastRoleEpoch = st.Role, st.Epoch
	}
	c.checkSnapshots(n)
	if s.violation != "" {
		return
	}
	c.verify(n)
	if s.violation == "" && n.listener != nil {
		c.checkDeliveries(n)
	}
}

// checkSnapshots (S10): a log that does not start at 0 starts exactly at
// its earliest snapshot; every snapshot covers only committed data and
// holds the committed prefix's digest.
func (c *checker) checkSnapshots(n *simNode) {
	s := c.s
	start := n.disk.StartOffset()
	if start > 0 {
		e, ok := n.disk.EarliestSnapshot()
		switch {
		case !ok || e.Offset < start:
			s.fail("S10: node %d log starts at %d but its earliest snapshot is %v (present %v)", n.id, start, e, ok)
			return
		case e.Offset != start:
			s.fail("S10: node %d log starts at %d but its earliest snapshot is %v", n.id, start, e)
			return
		}
	}
	latest, ok := n.disk.LatestSnapshot()
	if !ok || latest == n.chk.lastSnapshot {
		return
	}
	n.chk.lastSnapshot = latest
	want, ok := c.snapshotDigestAt(latest.Offset)
	if !ok || latest.Offset > c.committedEnd {
		s.fail("S10: node %d holds snapshot %d-%d, not at a committed batch end (committed end %d)", n.id, latest.Offset, latest.Epoch, c.committedEnd)
		return
	}
	if e, _ := c.entryEndingAt(latest.Offset); e.epoch != latest.Epoch {
		s.fail("S10: node %d snapshot %d-%d names epoch %d, the committed batch before it has epoch %d", n.id, latest.Offset, latest.Epoch, latest.Epoch, e.epoch)
		return
	}
	r, err := n.disk.OpenSnapshot(latest)
	if err != nil {
		s.fail("node %d: open snapshot %v: %v", n.id, latest, err)
		return
	}
	got, err := snapshotDigest(r)
	if err != nil || got != want {
		s.fail("S10: node %d snapshot %d-%d holds %q (%v), want %q", n.id, latest.Offset, latest.Epoch, got, err, want)
	}
}

// extend adds n's batches below hw to C.
func (c *checker) extend(n *simNode, hw int64) {
	s := c.s
	from := c.committedEnd
	for c.committedEnd < hw {
		b, ok := n.disk.BatchAt(c.committedEnd)
		if !ok || b.BaseOffset != c.committedEnd {
			s.fail("node %d reports high watermark %d but holds no batch starting at %d", n.id, hw, c.committedEnd)
			return
		}
		dec, rest, err := protocol.DecodeBatch(b.Data)
		if err != nil || len(rest) != 0 {
			s.fail("committed batch at %d on node %d does not decode: %v", b.BaseOffset, n.id, err)
			return
		}
		e := cEntry{base: b.BaseOffset, last: b.LastOffset, epoch: b.Epoch, control: dec.Control, data: b.Data}
		if dec.Control {
			c.noteCommittedVoters(dec)
			c.noteCommittedUpgrade(dec)
		}
		e.cum = 14695981039346656037
		if k := len(c.C); k > 0 {
			e.cum = c.C[k-1].cum
		}
		e.cum = fnv1a(e.cum, b.Data)
		for i, r := range dec.Records {
			e.values = append(e.values, r.Value)
			if dec.Control || len(r.Value) < 2 || r.Value[0] != 'w' {
				continue
			}
			off := b.BaseOffset + int64(i)
			p := string(r.Value)
			if prev, dup := c.committedAt[p]; dup {
				s.fail("S11: payload %s committed twice, at %d and %d", p, prev, off)
				return
			}
			if want, ok := c.appendedAt[p]; ok && want != off {
				s.fail("S11: payload %s was given offset %d by Append but committed at %d", p, want, off)
				return
			}
			c.committedAt[p] = off
			num, _, _ := strings.Cut(p[1:], ":")
			if k, err := strconv.Atoi(num); err == nil && k > c.maxCommitted {
				c.maxCommitted = k
			}
		}
		c.C = append(c.C, e)
		c.committedEnd = b.LastOffset + 1
	}
	// Commits reported by a node of epoch e happened in epoch e or earlier.
	ep := int32(-1)
	if n.up {
		ep = n.drv.Status().Epoch
	}
	if k := len(c.commitEpochs); k > 0 && c.commitEpochs[k-1].epoch == ep {
		c.commitEpochs[k-1].end = c.committedEnd
	} else {
		c.commitEpochs = append(c.commitEpochs, epochEnd{ep, c.committedEnd})
	}
	// S5: what is committed is durable on a majority of voters, with the
	// same content.
	voters := c.voterIDsAt(c.committedEnd - 1)
	who := c.durableOn(voters)
	if s.violation != "" {
		return
	}
	if len(who) < len(voters)/2+1 && s.m.membership && n.up {
		// A leader counts the latest voter set, committed or not (as
		// Kafka): the entries before an appended addition commit on a
		// majority of the new set.
		voters = n.drv.Status().Voters.IDs()
		if who = c.durableOn(voters); s.violation != "" {
			return
		}
	}
	if len(who) < len(voters)/2+1 {
		s.fail("S5: committed end %d (high watermark %d reported by node %d) is durable on only %v of voters %v",
			c.committedEnd, hw, n.id, who, voters)
		return
	}
	s.tracef("commit [%d,%d) via node %d, durable on %v", from, c.committedEnd, n.id, who)
	if c.phase == 1 && c.maxCommitted > c.seqAtHeal {
		c.commitLatency = s.now - s.healAt
		c.phase = 2
		c.deadline = s.now + convergenceBound
		s.workloadOn = false
		s.tracef("LIVENESS: committed a new record %v after the heal; workload stopped, waiting for convergence", c.commitLatency)
	}
}

// durableOn lists the nodes of voters that hold C flushed and verified.
func (c *checker) durableOn(voters []int32) []int32 {
	var who []int32
	for _, v := range c.s.nodes {
		if v.id < 0 || !slices.Contains(voters, v.id) {
			continue
		}
		if c.holds(v) || v.ghostEnd >= c.committedEnd || v.ghost != nil && c.holds(v.ghost) {
			who = append(who, v.id)
		}
		if c.s.violation != "" {
			return nil
		}
	}
	return who
}

// holds reports whether n's disk holds C flushed and verified.
func (c *checker) holds(n *simNode) bool {
	c.verify(n)
	return c.s.violation == "" && n.disk.FlushedOffset() >= c.committedEnd && n.chk.verifiedEnd >= c.committedEnd
}

// verify advances n's matched prefix (batches equal to C) and checks that
// everything below the node's own high watermark is committed data (S6),
// and that batches above it obey log matching: one (base offset, epoch), one
// batch (S3).
func (c *checker) verify(n *simNode) {
	s := c.s
	nc := &n.chk
	if start := n.disk.StartOffset(); nc.verifiedEnd < start {
		nc.verifiedEnd = start
	}
	if nc.scannedEnd < n.disk.StartOffset() {
		nc.scannedEnd = n.disk.StartOffset()
	}
	leo := n.disk.EndOffset().Offset
	for nc.scannedEnd < leo {
		b, ok := n.disk.BatchAt(nc.scannedEnd)
		if !ok || b.BaseOffset != nc.scannedEnd {
			s.fail("node %d log has no batch starting at %d", n.id, nc.scannedEnd)
			return
		}
		k := batchKey{b.BaseOffset, b.Epoch}
		if first, ok := c.seen[k]; ok {
			if !bytes.Equal(first, b.Data) {
				s.fail("S3: node %d holds a batch at %d of epoch %d that differs from another replica's batch with the same offset and epoch", n.id, b.BaseOffset, b.Epoch)
				return
			}
		} else {
			c.seen[k] = b.Data
		}
		nc.scannedEnd = b.LastOffset + 1
	}
	end := min(c.committedEnd, leo)
	for nc.verifiedEnd < end {
		b, ok := n.disk.BatchAt(nc.verifiedEnd)
		if !ok || b.BaseOffset != nc.verifiedEnd {
			break
		}
		i, found := slices.BinarySearchFunc(c.C, b.BaseOffset, func(e cEntry, off int64) int {
			return cmpInt64(e.base, off)
		})
		if !found {
			break
		}
		e := c.C[i]
		if e.last != b.LastOffset || e.epoch != b.Epoch || !bytes.Equal(e.data, b.Data) {
			break
		}
		nc.verifiedEnd = b.LastOffset + 1
	}
	if own := min(nc.lastHW, end); nc.verifiedEnd < own {
		b, _ := n.disk.BatchAt(nc.verifiedEnd)
		s.fail("S6: node %d (high watermark %d) holds batch %d-%d epoch %d that is not the committed batch at %d",
			n.id, nc.lastHW, b.BaseOffset, b.LastOffset, b.Epoch, nc.verifiedEnd)
	}
}

type epochEnd struct {
	epoch int32
	end   int64
}

// committedBefore is the committed end a leader of epoch e must hold (S4):
// everything committed in an earlier epoch.
func (c *checker) committedBefore(e int32) int64 {
	var need int64
	for _, ce := range c.commitEpochs {
		if ce.epoch < e {
			need = max(need, ce.end)
		}
	}
	return need
}

type batchKey struct {
	base  int64
	epoch int32
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// crashed accounts for the unflushed data a crash drops.
func (c *checker) crashed(n *simNode) {
	if low, ok := n.disk.TakeLowestEnd(); ok {
		n.chk.verifiedEnd = min(n.chk.verifiedEnd, low)
		n.chk.scannedEnd = min(n.chk.scannedEnd, low)
	}
}

// checkDeliveries checks what the node's listener received (S9).
func (c *checker) checkDeliveries(n *simNode) {
	s := c.s
	l := n.listener
	if len(l.pending) == 0 {
		return
	}
	hw := int64(-1)
	if n.up && n.inc == l.inc {
		hw = n.drv.Status().HighWatermark
	}
	for _, ev := range l.pending {
		if ev.le != nil {
			l.isLeader = ev.le.LeaderID == n.id && n.id >= 0
			if l.isLeader && l.next < ev.epochStart {
				s.fail("S9: node %d listener told it leads epoch %d at offset %d, before reaching the epoch start %d", n.id, ev.le.Epoch, l.next, ev.epochStart)
				return
			}
			continue
		}
		if ev.snapshot != nil && *ev.snapshot == (raft.OffsetAndEpoch{}) {
			// The bootstrap snapshot of a dynamic quorum: voters, no state.
			if l.next != 0 {
				s.fail("S9: node %d listener loaded the bootstrap snapshot at next %d", n.id, l.next)
				return
			}
			continue
		}
		if ev.snapshot != nil {
			id := *ev.snapshot
			want, ok := c.snapshotDigestAt(id.Offset)
			switch {
			case l.isLeader:
				s.fail("S10: node %d listener told to load snapshot %d-%d after it was told it leads", n.id, id.Offset, id.Epoch)
			case ev.err != nil:
				s.fail("node %d listener got snapshot %d-%d that does not read back: %v", n.id, id.Offset, id.Epoch, ev.err)
			case !ok || ev.digest != want:
				s.fail("S9: node %d listener loaded snapshot %d-%d holding %q, want %q (committed end %d)", n.id, id.Offset, id.Epoch, ev.digest, want, c.committedEnd)
			case id.Offset < l.next:
				s.fail("S9: node %d listener loaded snapshot %d-%d behind what it already has (next %d)", n.id, id.Offset, id.Epoch, l.next)
			}
			if s.violation != "" {
				return
			}
			l.next = id.Offset
			continue
		}
		b := ev.batch
		if b.BaseOffset != l.next {
			s.fail("S9: node %d listener got batch %d-%d, expected the next batch at %d", n.id, b.BaseOffset, b.LastOffset, l.next)
			return
		}
		if b.LastOffset >= c.committedEnd {
			s.fail("S9: node %d listener got batch %d-%d, not committed (committed end %d)", n.id, b.BaseOffset, b.LastOffset, c.committedEnd)
			return
		}
		if hw >= 0 && b.LastOffset >= hw {
			s.fail("S9: node %d listener got batch %d-%d above its own high watermark %d", n.id, b.BaseOffset, b.LastOffset, hw)
			return
		}
		i, found := slices.BinarySearchFunc(c.C, b.BaseOffset, func(e cEntry, off int64) int { return cmpInt64(e.base, off) })
		if !found {
			s.fail("S9: node %d listener batch %d-%d is not a committed batch", n.id, b.BaseOffset, b.LastOffset)
			return
		}
		e := c.C[i]
		if e.last != b.LastOffset || e.epoch != b.Epoch || e.control != b.Control || !slices.EqualFunc(e.values, b.Records, bytes.Equal) {
			s.fail("S9: node %d listener batch %d-%d epoch %d control %v (%d records) differs from the committed batch %d-%d epoch %d control %v (%d records)",
				n.id, b.BaseOffset, b.LastOffset, b.Epoch, b.Control, len(b.Records), e.base, e.last, e.epoch, e.control, len(e.values))
			return
		}
		l.next = b.LastOffset + 1
	}
	clear(l.pending)
	l.pending = l.pending[:0]
}
