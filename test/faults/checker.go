package faults

import (
	"fmt"
	"sort"
	"time"

	"github.com/kraftd/kraftd/workload"
)

// Batch is one batch of a node's log as the checker sees it.
type Batch struct {
	Base, Last int64
	Epoch      int32
	Control    bool
	// CRC is workload.RecordsCRC of the record values (what a journal
	// entry names); BatchCRC is the batch's own Kafka CRC, which covers
	// every byte a replica copies from the leader.
	CRC, BatchCRC uint32
}

// NodeLog is one node's log, read from its files, with the high watermark
// the node itself last reported (-1: unknown). The node had committed
// everything below HW, and committed data is never truncated, so its log
// below HW must still be the committed log when the files are read later.
type NodeLog struct {
	Node    int32
	Batches []Batch
	HW      int64
	// Start is the log start offset: a snapshot ending there (S10) holds
	// the committed state below it, whose batches the checker cannot see.
	Start int64
}

// Ack is one commit journal entry and the node whose workload wrote it.
type Ack struct {
	Node int32
	workload.JournalEntry
}

// Sample is one DescribeQuorum answer (only a leader answers) taken during
// the run.
type Sample struct {
	At     time.Time
	Round  int
	Node   int32 // the node asked, which answered as leader
	Epoch  int32
	HW     int64 // -1: the leader has not committed in its epoch yet
	Leader int32
	// Derived samples are a Kafka leader's, as the kraftd nodes report it
	// (HW is their view, a lower bound): they take part in the
	// two-leaders check only (a restarted follower may still name an old
	// epoch's leader; the high watermark is not the leader's own).
	Derived bool
}

// Round is one fault and its healing: after Healed a leader must commit
// within Bound; Recovered is when one was seen to (zero: never).
type Round struct {
	N         int
	Fault     string
	Start     time.Time
	Healed    time.Time
	Recovered time.Time
	Bound     time.Duration
	// MinEpoch, when set, makes only a leader of a higher epoch count as
	// recovered (after a leader's graceful exit its last commits do not).
	MinEpoch int32
}

// History is what a run leaves for the checker.
type History struct {
	Voters  int
	Logs    []NodeLog
	Acks    []Ack
	Samples []Sample
	Rounds  []Round
}

// Violation names what broke, where (node, offset) and in which round (the
// round the checker ran after, for log checks).
type Violation struct {
	Kind   string
	Node   int32
	Offset int64
	Round  int
	Detail string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s: node %d offset %d round %d: %s", v.Kind, v.Node, v.Offset, v.Round, v.Detail)
}

// Violation kinds.
const (
	LostAck          = "lost-ack"             // an acknowledged batch is on fewer than a majority
	CommittedChanged = "committed-changed"    // a node holds other data below its HW
	LogsDisagree     = "logs-disagree"        // two nodes differ below both HWs
	TwoLeaders       = "two-leaders"          // two nodes answered as leader of one epoch
	EpochBackwards   = "epoch-backwards"      // a node led at a lower epoch after a higher one
	HWBackwards      = "hw-backwards"         // the cluster's high watermark went down
	NoRecovery       = "no-recovery"          // no commit within the liveness bound after a heal
	MalformedJournal = "journal-inconsistent" // two acks of one offset disagree
	LostCommitted    = "lost-committed"       // below a reported high watermark, no majority agrees
	CommitOldEpoch   = "commit-old-epoch"     // a leader's high watermark covers no entry of its epoch
)

// Check judges a history after round (the round just finished) and returns
// every violation found, in a stable order. The rules:
//
//   - Every ack is on a majority of voters: a batch with its offsets, epoch
//     and CRC, or below the log start (in the snapshot there) (Jepsen's "no
//     lost acknowledged writes", S11).
//   - Every node whose HW is above an ack holds exactly that batch (S6).
//   - No log ends below its node's HW (S7: nothing committed is truncated),
//     and two nodes agree, batch for batch, below the lower of their HWs (S6).
//   - No two nodes answered as leader of the same epoch (S1).
//   - No node answered as leader with a lower epoch after a higher one (S2),
//     and no leader reported a high watermark below one reported earlier in
//     the same or a lower epoch (S7).
//   - After each healed fault a leader committed within the round's bound
//     (L1).
//   - Below the highest high watermark a leader reported (or a follower
//     learnt from a Kafka leader), a majority of logs hold the same batches
//     (S6 on the leader's word: this judges what a Kafka leader committed,
//     for which no journal exists); and each leader's high watermark
//     covers an entry of its own epoch in that majority's log (S8: a new
//     leader commits nothing before its epoch's first record).
func Check(h History, round int) []Violation {
	var out []Violation
	out = append(out, checkAcks(h, round)...)
	out = append(out, checkCommitted(h, round)...)
	out = append(out, checkAgreement(h.Logs, round)...)
	out = append(out, checkSamples(h.Samples)...)
	out = append(out, checkRounds(h.Rounds)...)
	return out
}

func majority(voters int) int { return voters/2 + 1 }

func checkAcks(h History, round int) []Violation {
	var out []Violation
	seen := map[int64]Ack{}
	acks := append([]Ack(nil), h.Acks...)
	sort.SliceStable(acks, func(i, j int) bool { return acks[i].Base < acks[j].Base })
	for _, a := range acks {
		if prev, ok := seen[a.Base]; ok {
			if prev.JournalEntry != a.JournalEntry {
				out = append(out, Violation{MalformedJournal, a.Node, a.Base, round,
					fmt.Sprintf("acked as %v by node %d and as %v by node %d", prev.JournalEntry, prev.Node, a.JournalEntry, a.Node)})
			}
			continue
		}
		seen[a.Base] = a
		holders := 0
		for _, l := range h.Logs {
			if a.Last < l.Start {
				holders++ // in the snapshot at the log start
				continue
			}
			b, ok := batchAt(l.Batches, a.Base)
			match := ok && b.Last == a.Last && b.Epoch == a.Epoch && b.CRC == a.CRC
			if match {
				holders++
				continue
			}
			if l.HW > a.Last {
				out = append(out, Violation{CommittedChanged, l.Node, a.Base, round,
					fmt.Sprintf("acked %v (by node %d) but the node, at high watermark %d, holds %s", a.JournalEntry, a.Node, l.HW, describe(b, ok))})
			}
		}
		if holders < majority(h.Voters) {
			out = append(out, Violation{LostAck, a.Node, a.Base, round,
				fmt.Sprintf("acked %v is on %d of %d voters", a.JournalEntry, holders, h.Voters)})
		}
	}
	return out
}

// checkCommitted finds the highest high watermark c any sample reported
// and asks for a majority of logs that reach c and agree batch for batch
// below it (from the later of their log starts). A deposed leader may
// still hold another uncommitted tail there, so not every log must agree.
func checkCommitted(h History, round int) []Violation {
	c, by := int64(-1), int32(-1)
	for _, s := range h.Samples {
		if s.HW > c {
			c, by = s.HW, s.Node
		}
	}
	if c <= 0 {
		return nil
	}
	best, ref := 0, NodeLog{}
	for _, a := range h.Logs {
		n := 0
		for _, b := range h.Logs {
			if reaches(a, c) && reaches(b, c) && samePrefix(a, b, c) {
				n++
			}
		}
		if n > best {
			best, ref = n, a
		}
	}
	if best < majority(h.Voters) {
		return []Violation{{LostCommitted, by, c, round,
			fmt.Sprintf("node %d reported high watermark %d, but at most %d of %d logs reach it with the same batches", by, c, best, h.Voters)}}
	}
	return checkOwnEpoch(h.Samples, ref, round)
}

// checkOwnEpoch asks, for each leader's own sample (a derived one may pair
// a new epoch with the last one's high watermark), for a batch of the
// leader's epoch below its high watermark in ref, a log of the committed
// majority. Below ref's log start the snapshot hides the batches.
func checkOwnEpoch(samples []Sample, ref NodeLog, round int) []Violation {
	first := map[int32]int64{} // epoch -> base of its first batch in ref
	for _, b := range ref.Batches {
		if _, ok := first[b.Epoch]; !ok {
			first[b.Epoch] = b.Base
		}
	}
	reported := map[[2]int64]bool{}
	var out []Violation
	for _, s := range samples {
		if s.Derived || s.HW <= ref.Start {
			continue
		}
		if base, ok := first[s.Epoch]; ok && base < s.HW {
			continue
		}
		if key := [2]int64{int64(s.Epoch), s.HW}; !reported[key] {
			reported[key] = true
			out = append(out, Violation{CommitOldEpoch, s.Node, s.HW, round,
				fmt.Sprintf("leader %d of epoch %d reported high watermark %d, but no batch of epoch %d lies below it", s.Node, s.Epoch, s.HW, s.Epoch)})
		}
	}
	return out
}

func reaches(l NodeLog, offset int64) bool { return max(endOf(l.Batches), l.Start) >= offset }

// samePrefix reports whether a and b hold the same batches between the
// later of their log starts and upTo.
func samePrefix(a, b NodeLog, upTo int64) bool {
	from := max(a.Start, b.Start)
	for _, x := range a.Batches {
		if x.Base >= upTo {
			break
		}
		if x.Base < from {
			continue
		}
		y, ok := batchAt(b.Batches, x.Base)
		if !ok || x.Last != y.Last || x.Epoch != y.Epoch || x.BatchCRC != y.BatchCRC {
			return false
		}
	}
	return true
}

func describe(b Batch, ok bool) string {
	if !ok {
		return "no batch there"
	}
	return fmt.Sprintf("[%d,%d] epoch %d crc %08x", b.Base, b.Last, b.Epoch, b.CRC)
}

// batchAt finds the batch starting at base (batches are in offset order).
func batchAt(bs []Batch, base int64) (Batch, bool) {
	i := sort.Search(len(bs), func(i int) bool { return bs[i].Base >= base })
	if i < len(bs) && bs[i].Base == base {
		return bs[i], true
	}
	return Batch{}, false
}

func checkAgreement(logs []NodeLog, round int) []Violation {
	var out []Violation
	for _, l := range logs {
		if end := max(endOf(l.Batches), l.Start); l.HW > end {
			out = append(out, Violation{CommittedChanged, l.Node, end, round,
				fmt.Sprintf("the log ends at %d, below the high watermark %d the node reported", end, l.HW)})
		}
	}
	for i := range logs {
		for j := i + 1; j < len(logs); j++ {
			a, b := logs[i], logs[j]
			upTo := min(a.HW, b.HW)
			for _, x := range a.Batches {
				if x.Base >= upTo {
					break
				}
				y, ok := batchAt(b.Batches, x.Base)
				if !ok && x.Base < endOf(b.Batches) && x.Base >= startOf(b.Batches) {
					out = append(out, Violation{LogsDisagree, b.Node, x.Base, round,
						fmt.Sprintf("node %d has a batch at %d, node %d none (both high watermarks above: %d, %d)", a.Node, x.Base, b.Node, a.HW, b.HW)})
					break
				}
				if ok && (x.Last != y.Last || x.Epoch != y.Epoch || x.BatchCRC != y.BatchCRC) {
					out = append(out, Violation{LogsDisagree, b.Node, x.Base, round,
						fmt.Sprintf("node %d holds [%d,%d] epoch %d crc %08x, node %d [%d,%d] epoch %d crc %08x (high watermarks %d, %d)",
							a.Node, x.Base, x.Last, x.Epoch, x.BatchCRC, b.Node, y.Base, y.Last, y.Epoch, y.BatchCRC, a.HW, b.HW)})
					break
				}
			}
		}
	}
	return out
}

func startOf(bs []Batch) int64 {
	if len(bs) == 0 {
		return 0
	}
	return bs[0].Base
}

func endOf(bs []Batch) int64 {
	if len(bs) == 0 {
		return 0
	}
	return bs[len(bs)-1].Last + 1
}

func checkSamples(samples []Sample) []Violation {
	var out []Violation
	ss := append([]Sample(nil), samples...)
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].At.Before(ss[j].At) })
	lastEpoch := map[int32]int32{}
	leaderOf := map[int32]int32{}
	// hwUpTo[e] is the highest HW any leader of epoch e reported so far.
	hwUpTo := map[int32]int64{}
	for _, s := range ss {
		if e, ok := lastEpoch[s.Node]; ok && s.Epoch < e && !s.Derived {
			out = append(out, Violation{EpochBackwards, s.Node, s.HW, s.Round,
				fmt.Sprintf("answered as leader of epoch %d at %s after epoch %d", s.Epoch, s.At.Format(time.StampMilli), e)})
		}
		lastEpoch[s.Node] = max(lastEpoch[s.Node], s.Epoch)
		if l, ok := leaderOf[s.Epoch]; ok && l != s.Node {
			out = append(out, Violation{TwoLeaders, s.Node, s.HW, s.Round,
				fmt.Sprintf("answered as leader of epoch %d at %s; node %d did too", s.Epoch, s.At.Format(time.StampMilli), l)})
		}
		leaderOf[s.Epoch] = s.Node
		if s.HW < 0 || s.Derived {
			continue
		}
		for e, hw := range hwUpTo {
			if e <= s.Epoch && s.HW < hw {
				out = append(out, Violation{HWBackwards, s.Node, s.HW, s.Round,
					fmt.Sprintf("leader of epoch %d reported high watermark %d at %s after %d in epoch %d", s.Epoch, s.HW, s.At.Format(time.StampMilli), hw, e)})
				break
			}
		}
		hwUpTo[s.Epoch] = max(hwUpTo[s.Epoch], s.HW)
	}
	return out
}

func checkRounds(rounds []Round) []Violation {
	var out []Violation
	for _, r := range rounds {
		if r.Healed.IsZero() {
			continue
		}
		took := r.Recovered.Sub(r.Healed)
		if r.Recovered.IsZero() || took > r.Bound {
			d := "no leader committed after the heal"
			if !r.Recovered.IsZero() {
				d = fmt.Sprintf("a leader committed %v after the heal", took.Round(time.Millisecond))
			}
			out = append(out, Violation{NoRecovery, -1, -1, r.N, fmt.Sprintf("%s: %s; bound %v", r.Fault, d, r.Bound)})
		}
	}
	return out
}
