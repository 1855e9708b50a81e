package raft_test

// The simulator's workload (leader-side appends) and nemesis (partitions,
// crashes, pauses, disk faults, resignations, snapshots), and the helpers
// that read answers and snapshots.

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/raft/rafttest"
)

// startWorkload (re)starts the leader-side appends.
func (s *sim) startWorkload() {
	s.workloadOn = true
	if !s.workloadScheduled {
		s.workloadScheduled = true
		s.schedule(s.now+s.opts.appendEvery, &event{kind: evWorkload})
	}
}

func (s *sim) workload() {
	for _, n := range s.nodes {
		if !n.up || n.pausedUntil > s.now {
			continue
		}
		st := n.drv.Status()
		if st.Role != raft.RoleLeader {
			continue
		}
		k := 1 + s.rng.IntN(3)
		recs := make([][]byte, k)
		for i := range recs {
			s.payloadSeq++
			recs[i] = fmt.Appendf(nil, "w%d:", s.payloadSeq)
			if s.opts.pad > 0 {
				recs[i] = append(recs[i], bytes.Repeat([]byte{'.'}, s.rng.IntN(s.opts.pad+1))...)
			}
		}
		last, err := n.drv.Append(s.nodeTime(n), st.Epoch, recs)
		if err != nil && errors.Is(err, rafttest.ErrInjected) {
			s.fatal(n, "Append", err)
			continue
		}
		if err != nil {
			if !errors.Is(err, raft.ErrNotLeader) && !errors.Is(err, raft.ErrBufferFull) && !errors.Is(err, raft.ErrShutdown) {
				s.fail("node %d: Append: unexpected error %v", n.id, err)
			}
			continue
		}
		s.stats.appends++
		for i, r := range recs {
			s.chk.appended(string(r), last-int64(len(recs)-1-i), st.Epoch)
		}
		s.poll(n)
		s.chk.afterEvent(n)
	}
}

func (s *sim) upNodes(voterOnly bool) []*simNode {
	var out []*simNode
	for _, n := range s.nodes {
		if n.up && (!voterOnly || n.voter) {
			out = append(out, n)
		}
	}
	return out
}

func (s *sim) leaderNode() *simNode {
	var best *simNode
	for _, n := range s.nodes {
		if n.up {
			if st := n.drv.Status(); st.Role == raft.RoleLeader && (best == nil || st.Epoch > best.drv.Status().Epoch) {
				best = n
			}
		}
	}
	return best
}

func (s *sim) pick() *simNode {
	// Bias toward the leader: that is where faults hurt.
	if l := s.leaderNode(); l != nil && s.rng.IntN(2) == 0 {
		return l
	}
	return s.nodes[s.rng.IntN(len(s.nodes))]
}

func (s *sim) nemesis() {
	var actions []func()
	if s.m.partitions {
		actions = append(actions, s.partition, s.partition)
	}
	if s.m.crashes {
		actions = append(actions, s.crashRestart, s.crashRestart, s.pause, s.diskFault)
		if s.rng.IntN(20) == 0 {
			actions = append(actions, s.crashAll)
		}
	}
	if s.m.resigns {
		actions = append(actions, s.resign)
	}
	if s.m.membership {
		actions = append(actions, s.changeVoters, s.changeVoters)
	}
	if s.m.upgrade {
		actions = append(actions, s.upgradeKRaftVersion)
	}
	actions[s.rng.IntN(len(actions))]()
}

func (s *sim) partition() {
	n := len(s.nodes)
	var desc string
	var links [][2]int
	switch s.rng.IntN(4) {
	case 0: // isolate one node both ways
		x := s.pick().idx
		for i := range n {
			if i != x {
				links = append(links, [2]int{x, i}, [2]int{i, x})
			}
		}
		desc = fmt.Sprintf("isolate %d", s.nodes[x].id)
	case 1: // split in two groups
		side := make([]bool, n)
		for i := range side {
			side[i] = s.rng.IntN(2) == 0
		}
		for i := range n {
			for j := range n {
				if side[i] != side[j] {
					links = append(links, [2]int{i, j})
				}
			}
		}
		desc = fmt.Sprintf("split %v", side)
	case 2: // one way: x cannot reach y (or x cannot hear anyone)
		x := s.pick().idx
		if s.rng.IntN(2) == 0 {
			for i := range n {
				if i != x {
					links = append(links, [2]int{i, x})
				}
			}
			desc = fmt.Sprintf("%d deaf", s.nodes[x].id)
		} else {
			for i := range n {
				if i != x {
					links = append(links, [2]int{x, i})
				}
			}
			desc = fmt.Sprintf("%d mute", s.nodes[x].id)
		}
	default: // partial: a few random links cut both ways (bridge-like)
		k := 1 + s.rng.IntN(n)
		for range k {
			a, b := s.rng.IntN(n), s.rng.IntN(n)
			if a != b {
				links = append(links, [2]int{a, b}, [2]int{b, a})
			}
		}
		desc = fmt.Sprintf("cut %d links", len(links)/2)
	}
	for _, l := range links {
		s.blocked[l[0]][l[1]]++
	}
	s.stats.partitions++
	d := time.Duration(500+s.rng.IntN(8000)) * time.Millisecond
	s.tracef("NEMESIS partition: %s for %v", desc, d)
	s.checkQuorumLater(links, d)
	s.after(d, func() {
		for _, l := range links {
			s.blocked[l[0]][l[1]]--
		}
		s.tracef("NEMESIS heal partition: %s", desc)
	})
}

// checkQuorumLater (L2): when a partition cuts a leader off from the
// Fetches of a majority of voters for longer than 1.5 x the fetch timeout,
// the leader must have resigned by then. Messages already in flight may
// still arrive, and a Fetch parked before the cut still counts when it
// completes up to MaxWaitMs later (Kafka re-runs tryCompleteFetchRequest,
// which updates the replica state, when new data completes a parked
// fetch), hence the slack.
func (s *sim) checkQuorumLater(links [][2]int, d time.Duration) {
	cut := map[[2]int]bool{}
	for _, l := range links {
		cut[l] = true
	}
	for _, l := range s.nodes {
		if !l.up || !l.voter || l.drv.Status().Role != raft.RoleLeader {
			continue
		}
		reached := func() int {
			n := 0
			vs := l.drv.Status().Voters
			for _, v := range s.nodes {
				if v.id >= 0 && vs.ContainsID(raft.NodeID(v.id)) && (v == l || !cut[[2]int{v.idx, l.idx}]) {
					n++
				}
			}
			return n
		}
		heard, vs := reached(), l.drv.Status().Voters
		bound := 3*simFetchTimeout/2 + simMaxFetchWait + 11*s.opts.delayMax + 100*time.Millisecond
		if heard > 1 {
			// Voters still heard can complete a window together with a
			// voter counted just before the cut, as in Kafka, which
			// postpones the expiry by up to one more window.
			bound += 3 * simFetchTimeout / 2
		}
		if heard > vs.Len()/2 || d <= bound {
			continue
		}
		epoch, inc, from, committedSets := l.drv.Status().Epoch, l.inc, s.now, len(s.chk.voterHistory)
		var check func()
		check = func() {
			if !l.up || l.inc != inc || l.pauseEnd > from || s.faultsOver {
				return // restarted, paused, or the end of faults healed the cut
			}
			st := l.drv.Status()
			if s.m.membership && reached() > st.Voters.Len()/2 {
				return // a voter change gave the leader a majority it reaches
			}
			if s.m.membership && (!st.Voters.Equal(vs) || len(s.chk.voterHistory) != committedSets) {
				// A voter change during the cut (in force now, or
				// committed and since undone) may have given the leader
				// a majority it reached for a while, or completed a
				// window with voters counted earlier in it (as in Kafka,
				// a change keeps them): check again one window later
				// against the set then, if the cut lasts that long.
				if window := 3 * simFetchTimeout / 2; s.now+window < from+d {
					vs, committedSets = st.Voters, len(s.chk.voterHistory)
					s.after(window, check)
				}
				return
			}
			s.stats.checkQuorumChecks++
			if st.Role == raft.RoleLeader && st.Epoch == epoch {
				s.fail("L2: leader %d of epoch %d still leads %v after a partition cut it off from a majority of voters", l.id, epoch, s.now-from)
			}
		}
		s.after(bound, check)
	}
}

func (s *sim) crashRestart() {
	n := s.pick()
	if !n.up {
		return
	}
	s.crash(n, "nemesis")
	s.after(time.Duration(s.rng.IntN(5000))*time.Millisecond, func() {
		if !n.up {
			s.stats.restarts++
			s.start(n)
		}
	})
}

// crashAll kills every node, then restarts only a majority of voters at
// first (Kafka's canRecoverAfterAllNodesKilled).
func (s *sim) crashAll() {
	for _, n := range s.nodes {
		s.crash(n, "all")
	}
	order := s.rng.Perm(len(s.nodes))
	for k, i := range order {
		n := s.nodes[i]
		d := time.Duration(100+s.rng.IntN(1000)) * time.Millisecond
		if k >= s.opts.voters/2+1 {
			d += time.Duration(s.rng.IntN(10000)) * time.Millisecond
		}
		s.after(d, func() {
			if !n.up {
				s.start(n)
			}
		})
	}
}

// pause stops a node from running anything (SIGSTOP) for a while.
func (s *sim) pause() {
	n := s.pick()
	if !n.up {
		return
	}
	d := time.Duration(500+s.rng.IntN(5000)) * time.Millisecond
	n.pausedUntil = s.now + d
	n.pauseEnd = n.pausedUntil
	s.stats.pauses++
	s.tracef("NEMESIS pause %d for %v", n.id, d)
}

// diskFault makes the node's next Append or Flush fail (EIO); the driver
// must stop taking part (fatal error) and is restarted on a healthy disk.
func (s *sim) diskFault() {
	n := s.pick()
	if !n.up || n.diskFailing {
		return
	}
	n.diskFailing = true
	if s.rng.IntN(2) == 0 {
		n.flog.FailFlush = true
	} else {
		n.flog.FailAppend = true
	}
	s.stats.diskFaults++
	s.tracef("NEMESIS disk fault on %d (append=%v flush=%v)", n.id, n.flog.FailAppend, n.flog.FailFlush)
}

func (s *sim) resign() {
	l := s.leaderNode()
	if l == nil || l.pausedUntil > s.now {
		return
	}
	st := l.drv.Status()
	if s.rng.IntN(3) == 0 {
		// Graceful shutdown, then restart once done (or after a bound).
		s.stats.shutdowns++
		s.tracef("NEMESIS shutdown leader %d epoch %d", l.id, st.Epoch)
		l.drv.Shutdown(s.nodeTime(l))
		s.poll(l)
		inc := l.inc
		var wait func(int)
		wait = func(tries int) {
			if !l.up || l.inc != inc {
				return
			}
			if l.drv.Done() || tries > 100 {
				s.crash(l, "after shutdown")
				s.after(time.Duration(s.rng.IntN(2000))*time.Millisecond, func() {
					if !l.up {
						s.start(l)
					}
				})
				return
			}
			s.after(100*time.Millisecond, func() { wait(tries + 1) })
		}
		s.after(100*time.Millisecond, func() { wait(0) })
		return
	}
	s.stats.resigns++
	s.tracef("NEMESIS resign leader %d epoch %d", l.id, st.Epoch)
	if err := l.drv.Resign(s.nodeTime(l), st.Epoch); err != nil {
		s.fatal(l, "Resign", err)
		return
	}
	s.poll(l)
}

// endFaults ends the fault phase: partitions heal, loss stops, every node
// runs again. From here the liveness clock runs.
func (s *sim) endFaults() {
	s.faultsOver = true
	for i := range s.blocked {
		clear(s.blocked[i]) // pending heals then go negative: harmless, > 0 blocks
	}
	for _, n := range s.nodes {
		n.pausedUntil = 0
		n.flog.FailAppend, n.flog.FailFlush = false, false
		if !n.up {
			s.start(n)
		}
	}
	s.healAt = s.now
	s.tracef("END OF FAULTS: network healed, all nodes up; committed end %d", s.chk.committedEnd)
	s.chk.startLiveness()
	if s.m.upgrade {
		s.after(time.Second, s.finalUpgrade)
	}
}

// snapshot makes one node write a snapshot at its high watermark, as the
// controller's state machine would, and sometimes delete the log below it
// (segment retention), so lagging and restarted replicas need FetchSnapshot.
// The snapshot's one data record is the digest of the committed prefix it
// covers; listeners that load it are checked against C.
func (s *sim) snapshot() {
	n := s.nodes[s.rng.IntN(len(s.nodes))]
	if !n.up {
		return
	}
	hw := n.drv.Status().HighWatermark
	if hw <= 0 {
		return
	}
	if latest, ok := n.disk.LatestSnapshot(); ok && latest.Offset >= hw {
		return
	}
	e, ok := s.chk.entryEndingAt(hw)
	if !ok {
		return // not a batch boundary of C (cannot happen below a node's HW)
	}
	id := raft.OffsetAndEpoch{Offset: hw, Epoch: e.epoch}
	w, err := n.disk.CreateSnapshot(id)
	if err != nil {
		return // the driver is downloading this very snapshot
	}
	header, next := n.drv.SnapshotHeaderBatch(id, 0, 0)
	if _, err := w.Write(snapshotBytes(header, next, id, e.cum)); err != nil {
		s.fail("node %d: write snapshot: %v", n.id, err)
		return
	}
	if err := w.Freeze(); err != nil {
		s.fail("node %d: freeze snapshot: %v", n.id, err)
		return
	}
	s.stats.snapshots++
	deleted := s.rng.IntN(3) != 0 && n.disk.DeleteBeforeSnapshot(s.nodeTime(n))
	if deleted {
		s.stats.retentions++
	}
	s.tracef("node %d snapshot %d-%d (log start now %d)", n.id, id.Offset, id.Epoch, n.disk.StartOffset())
	s.chk.afterEvent(n)
}

const snapshotDigestPrefix = "digest:"

// snapshotBytes lays out a snapshot file: the driver's header control batch
// (with the voter set at kraft.version 1), one data batch holding the
// digest at offset next, SnapshotFooter control batch.
func snapshotBytes(header []byte, next int64, id raft.OffsetAndEpoch, digest uint64) []byte {
	b := header
	val := fmt.Appendf(nil, "%s%d/%d", snapshotDigestPrefix, id.Offset, digest)
	b = protocol.AppendBatch(b, protocol.Batch{BaseOffset: next, PartitionLeaderEpoch: id.Epoch,
		Records: []protocol.Record{{Value: val}}})
	b = protocol.AppendControlBatch(b, next+1, id.Epoch, 0, protocol.ControlSnapshotFooter,
		protocol.SnapshotFooterRecord{}.AppendTo(nil))
	return b
}

// snapshotDigest reads the digest record back; ok is false for a snapshot
// that is not laid out as snapshotBytes writes it.
func snapshotDigest(r raft.SnapshotReader) (string, error) {
	buf := make([]byte, r.Size())
	if _, err := r.ReadAt(buf, 0); err != nil && int64(len(buf)) != r.Size() {
		return "", err
	}
	var digest string
	for rest := buf; len(rest) > 0; {
		b, next, err := protocol.DecodeBatch(rest)
		if err != nil {
			return "", err
		}
		for _, rec := range b.Records {
			if !b.Control && bytes.HasPrefix(rec.Value, []byte(snapshotDigestPrefix)) {
				digest = string(rec.Value)
			}
		}
		rest = next
	}
	if digest == "" {
		return "", errors.New("no digest record")
	}
	return digest, nil
}

// partitionErrorCode is the error code of a raft response's only partition,
// -1 when it has none.
func partitionErrorCode(resp kmsg.Response) int16 {
	switch r := resp.(type) {
	case *kmsg.VoteResponse:
		if len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 {
			return r.Topics[0].Partitions[0].ErrorCode
		}
	case *kmsg.BeginQuorumEpochResponse:
		if len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 {
			return r.Topics[0].Partitions[0].ErrorCode
		}
	case *kmsg.EndQuorumEpochResponse:
		if len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 {
			return r.Topics[0].Partitions[0].ErrorCode
		}
	case *kmsg.FetchResponse:
		if len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 {
			return r.Topics[0].Partitions[0].ErrorCode
		}
	case *kmsg.FetchSnapshotResponse:
		if len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 {
			return r.Topics[0].Partitions[0].ErrorCode
		}
	}
	return -1
}

func topErrorCode(resp kmsg.Response) int16 {
	if a := testApis.Lookup(resp.Key()); a != nil && a.TopError != nil {
		return *a.TopError(resp)
	}
	return -1
}
