package raft_test

// Membership changes in the simulator (mix "membership"): observers run
// with controller.quorum.auto.join.enable and join the dynamic quorum
// through AddRaftVoter; the nemesis removes a voter (a follower or the
// leader) with RemoveRaftVoter, or a node comes back with a new directory
// id, which makes it remove its old key and join again, all while crashes,
// partitions and resignations go on. An auto-joining node removed from the
// set asks to join again later, as in Kafka 4.4.
//
// Invariants, besides the others (sim_check_test.go):
//
//	M1  at most one uncommitted voter change: a leader's log never holds two
//	    Voters records of its epoch above its high watermark
//	M2  a node becomes leader only while its voter set in force holds its
//	    key (a removed voter never leads)
//	S5  a commit is durable on a majority of the voter set in force at its
//	    offset, or of the leader's latest set (Kafka counts the latest set,
//	    committed or not, so entries before an appended addition commit on
//	    a majority of the new set)
//
// Nodes outside the voter set may grant votes, as Kafka's do. Two stalls
// that Kafka 4.4 shares are recognised and counted rather than failed
// (removedLeaderStall).

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/raft/rafttest"
)

// voterIDsAt is the voter set in force at offset off according to C (the
// bootstrap set before any committed Voters record).
func (c *checker) voterIDsAt(off int64) []int32 {
	ids := c.bootVoters
	for _, v := range c.voterHistory {
		if v.offset > off {
			break
		}
		ids = v.ids
	}
	return ids
}

type votersEntry struct {
	offset int64
	ids    []int32
}

// noteCommittedVoters records the Voters records of a committed control
// batch.
func (c *checker) noteCommittedVoters(b protocol.Batch) {
	for i, r := range b.Records {
		typ, value, err := protocol.ReadControlRecord(r)
		if err != nil || typ != protocol.ControlKRaftVoters {
			continue
		}
		var vr protocol.VotersRecord
		if err := vr.ReadFrom(value); err != nil {
			c.s.fail("committed Voters record at %d does not decode: %v", b.BaseOffset+int64(i), err)
			return
		}
		var ids []int32
		for _, v := range vr.Voters {
			ids = append(ids, v.VoterID)
		}
		c.voterHistory = append(c.voterHistory, votersEntry{b.BaseOffset + int64(i), ids})
	}
}

// checkMembership (M1, M2) for node n after an event.
func (c *checker) checkMembership(n *simNode, st raft.Status) {
	s := c.s
	if st.Voters.ContainsID(raft.NodeID(n.id)) {
		n.everVoter = true
	}
	if st.Role == raft.RoleLeader && !st.Voters.Contains(raft.ReplicaKey{ID: raft.NodeID(n.id), DirectoryID: n.dir}) &&
		(st.Role != n.chk.lastRole || st.Epoch != n.chk.lastRoleEpoch) {
		s.fail("M2: node %d became leader of epoch %d while not in its voter set %v", n.id, st.Epoch, st.Voters)
		return
	}
	if st.Role == raft.RoleLeader && st.HighWatermark >= 0 {
		pending := 0
		for off := st.HighWatermark; off < st.LogEndOffset; {
			b, ok := n.disk.BatchAt(off)
			if !ok {
				break
			}
			// Records of earlier epochs may sit above a new leader's stale
			// high watermark; only its own epoch's changes count.
			if dec, _, err := protocol.DecodeBatch(b.Data); err == nil && dec.Control && b.Epoch == st.Epoch {
				{
					for _, r := range dec.Records {
						if typ, _, err := protocol.ReadControlRecord(r); err == nil && typ == protocol.ControlKRaftVoters {
							pending++
						}
					}
				}
			}
			off = b.LastOffset + 1
		}
		if pending > 1 {
			s.fail("M1: leader %d of epoch %d holds %d uncommitted Voters records above its high watermark %d", n.id, st.Epoch, pending, st.HighWatermark)
		}
	}
}

// changeVoters is the nemesis' membership event: remove a voter (often the
// leader) through the leader, or restart an auto-joining node with a new
// directory id, as an operator replacing its disk would.
func (s *sim) changeVoters() {
	l := s.leaderNode()
	if l == nil {
		return
	}
	vs := l.drv.Status().Voters
	if s.rng.IntN(4) == 0 {
		n := s.nodes[s.rng.IntN(len(s.nodes))]
		if n.id < 0 || !n.up || n.voter || vs.Len() < 3 {
			return // initial voters keep their disks: their bootstrap snapshot names them
		}
		s.stats.newDirs++
		s.crash(n, "new directory")
		n.dir[14]++
		n.resetDisk(s)
		s.after(time.Duration(s.rng.IntN(2000))*time.Millisecond, func() {
			if !n.up {
				s.start(n)
			}
		})
		return
	}
	nodes := vs.Nodes()
	if len(nodes) < 2 {
		return
	}
	victim := nodes[s.rng.IntN(len(nodes))].Key
	if s.rng.IntN(3) == 0 {
		victim = raft.ReplicaKey{ID: raft.NodeID(l.id), DirectoryID: l.dir}
	}
	req := kmsg.NewPtrRemoveRaftVoterRequest()
	req.ClusterID = &simClusterID
	req.VoterID, req.VoterDirectoryID = int32(victim.ID), victim.DirectoryID
	s.stats.removals++
	s.tracef("NEMESIS remove voter %v via leader %d", victim, l.id)
	s.adminRequest(l, req)
}

// adminRequest delivers req to node to as if from an admin client: it
// travels from a random other node, whose driver never sees the answer
// (no pending request has its correlation id).
func (s *sim) adminRequest(to *simNode, req kmsg.Request) {
	from := s.nodes[s.rng.IntN(len(s.nodes))]
	s.adminCorr++
	s.transmit(&netMsg{from: from.idx, to: to.idx, fromInc: from.inc, toInc: to.inc, corr: 1<<62 + s.adminCorr,
		toID: to.id, key: req.Key(), version: req.GetVersion(), body: req.AppendTo(nil), admin: true})
}

// answerApiVersions answers ApiVersions as the network layer does (the
// driver never sees it).
func (s *sim) answerApiVersions(m *netMsg) {
	n := s.nodes[m.to]
	resp := testApis.ApiVersionsResponse(m.version)
	s.transmit(&netMsg{from: m.to, to: m.from, fromInc: n.inc, toInc: m.fromInc, corr: m.corr, toID: m.toID,
		key: m.key, version: resp.GetVersion(), isResp: true, body: resp.AppendTo(nil)})
}

// resetDisk gives n an empty log and quorum state, as a newly formatted
// directory (format --no-initial-controllers); the checker forgets what it
// knew of the old log.
func (n *simNode) resetDisk(s *sim) {
	// The leader may still count the old key at what the old disk
	// acknowledged; that key never votes again, so what it held stays
	// needed by no election (see durableOn).
	if end := min(n.disk.FlushedOffset(), n.chk.verifiedEnd); end > n.ghostEnd {
		n.ghostEnd = end
	}
	// The old disk itself, as the crash left it (flushed data only): the
	// leader may commit what the old key acknowledged after the checker
	// last verified it, so durableOn verifies the ghost's content later.
	n.ghost = &simNode{id: n.id, disk: n.disk, chk: n.chk}
	n.mem = rafttest.NewMemLog()
	n.disk, n.store.inner = memDisk{n.mem}, rafttest.NewMemStateStore()
	n.flog = rafttest.NewFailingLog(n.disk)
	n.chk = nodeCheck{}
	n.everVoter = false
}

// removedLeaderStall recognises stalls that Kafka 4.4 shares. First, a
// voter whose disk was replaced (lostDiskStall). Second, a leader
// appended its own removal, kept appending, and crashed before the removal
// committed. Its log says it is no voter, so it never campaigns; the voters
// whose logs lack the removal still need its vote, and it refuses them
// because its log is longer (Kafka grants votes as a non-voter too, with
// the same up-to-date rule). No leader can be elected until an operator
// acts. True when no node leads and some up node outside its own voter
// set has a log longer than every node that may campaign.
func (c *checker) removedLeaderStall() bool {
	s := c.s
	if s.leaderNode() != nil {
		return false
	}
	if c.lostDiskStall() {
		return true
	}
	var stuck bool
	var longestVoter int64 = -1
	var longestOther int64 = -1
	for _, n := range s.nodes {
		if !n.up || n.id < 0 {
			continue
		}
		st := n.drv.Status()
		if st.Voters.Contains(raft.ReplicaKey{ID: raft.NodeID(n.id), DirectoryID: n.dir}) {
			longestVoter = max(longestVoter, st.LogEndOffset)
		} else {
			longestOther = max(longestOther, st.LogEndOffset)
			stuck = stuck || n.everVoter
		}
	}
	return stuck && longestOther > longestVoter
}

// staleEpochStall recognises a stall Kafka 4.4 shares when pre-vote is off
// (as with 3.x peers): a voter that missed its own removal (its log ends
// before it) campaigns with ever higher epochs and the nodes it asks take
// each one; those observers then ignore the leader's answers (an older
// epoch, UNKNOWN_LEADER_EPOCH), and the leader, whose voter set names none
// of them, never hears the higher epoch. With pre-vote the stale voter
// never gets past its pre-vote.
func (c *checker) staleEpochStall() bool {
	s := c.s
	l := s.leaderNode()
	if s.opts.preVote || l == nil {
		return false
	}
	st := l.drv.Status()
	above := false
	for _, n := range s.nodes {
		if !n.up || n == l || n.drv.Status().Epoch <= st.Epoch {
			continue
		}
		if st.Voters.ContainsID(raft.NodeID(n.id)) {
			return false
		}
		above = true
	}
	return above
}

// lostDiskStall: no leader, and a voter set some node holds names a key
// whose disk was replaced (a new directory id). That voter never votes
// again; until it is removed, which needs a leader, the rest may lack a
// majority: a lost disk, which Kafka cannot ride out either.
func (c *checker) lostDiskStall() bool {
	for _, n := range c.s.nodes {
		if !n.up {
			continue
		}
		for _, v := range n.drv.Status().Voters.Nodes() {
			if i, ok := c.s.byID[int32(v.Key.ID)]; ok && c.s.nodes[i].dir != v.Key.DirectoryID && v.Key.HasDirectory() {
				return true
			}
		}
	}
	return false
}
