package faults

import (
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/workload"
)

// goodHistory: three nodes agree on [0,9] (epoch 1) and [10,19] (epoch 2);
// node 3 lags below offset 10 and holds an old uncommitted tail there.
func goodHistory() History {
	b1 := Batch{Base: 0, Last: 9, Epoch: 1, CRC: 0x11, BatchCRC: 0xa1}
	b2 := Batch{Base: 10, Last: 19, Epoch: 2, CRC: 0x22, BatchCRC: 0xa2}
	stale := Batch{Base: 10, Last: 12, Epoch: 1, CRC: 0x33, BatchCRC: 0xa3}
	t0 := time.Unix(1000, 0)
	return History{
		Voters: 3,
		Logs: []NodeLog{
			{Node: 1, Batches: []Batch{b1, b2}, HW: 20},
			{Node: 2, Batches: []Batch{b1, b2}, HW: 20},
			{Node: 3, Batches: []Batch{b1, stale}, HW: 10},
		},
		Acks: []Ack{
			{1, workload.JournalEntry{Base: 0, Last: 9, Epoch: 1, CRC: 0x11}},
			{2, workload.JournalEntry{Base: 10, Last: 19, Epoch: 2, CRC: 0x22}},
		},
		Samples: []Sample{
			{At: t0, Node: 1, Epoch: 1, HW: 5, Leader: 1},
			{At: t0.Add(time.Second), Node: 1, Epoch: 1, HW: 10, Leader: 1},
			{At: t0.Add(2 * time.Second), Node: 2, Epoch: 2, HW: -1, Leader: 2},
			{At: t0.Add(3 * time.Second), Node: 2, Epoch: 2, HW: 20, Leader: 2},
			// The deposed leader still answering with its old view is allowed.
			{At: t0.Add(4 * time.Second), Node: 1, Epoch: 1, HW: 10, Leader: 1},
		},
		Rounds: []Round{{N: 1, Fault: "isolate 1", Start: t0, Healed: t0.Add(time.Second), Recovered: t0.Add(3 * time.Second), Bound: 5 * time.Second}},
	}
}

func TestCheckGoodHistory(t *testing.T) {
	if v := Check(goodHistory(), 1); len(v) != 0 {
		t.Fatalf("violations in a good history: %v", v)
	}
	// Node 2 compacted [0,9] into a snapshot: the ack there still holds.
	h := goodHistory()
	h.Logs[1].Batches, h.Logs[1].Start = h.Logs[1].Batches[1:], 10
	if v := Check(h, 1); len(v) != 0 {
		t.Fatalf("violations with a snapshot at the log start: %v", v)
	}
}

// TestCheckCatchesEachViolation breaks the good history in one way per
// case; the checker must name that kind, node and offset.
func TestCheckCatchesEachViolation(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(h *History)
		kind   string
		node   int32
		offset int64
	}{
		{"ack lost on a majority", func(h *History) {
			h.Logs[1].Batches = h.Logs[1].Batches[:1]
			h.Logs[1].HW = 10
		}, LostAck, 2, 10},
		{"ack changed below a node's HW", func(h *History) {
			h.Logs[1].Batches[1].CRC = 0x99
		}, CommittedChanged, 2, 10},
		{"ack missing on a node whose HW is above it", func(h *History) {
			h.Logs[2].HW = 20
		}, CommittedChanged, 3, 10},
		{"a log ends below its HW", func(h *History) {
			h.Logs[1].HW = 25
		}, CommittedChanged, 2, 20},
		{"logs differ below both HWs", func(h *History) {
			h.Logs[1].Batches = []Batch{{Base: 0, Last: 9, Epoch: 1, CRC: 0x11, BatchCRC: 0xff}, h.Logs[1].Batches[1]}
		}, LogsDisagree, 2, 0},
		{"two acks of one offset disagree", func(h *History) {
			h.Acks = append(h.Acks, Ack{3, workload.JournalEntry{Base: 10, Last: 19, Epoch: 3, CRC: 0x22}})
		}, MalformedJournal, 3, 10},
		{"two leaders in one epoch", func(h *History) {
			h.Samples = append(h.Samples, Sample{At: time.Unix(1010, 0), Node: 3, Epoch: 2, HW: 20, Leader: 3})
		}, TwoLeaders, 3, 20},
		{"epoch goes backwards on a node", func(h *History) {
			h.Samples = append(h.Samples, Sample{At: time.Unix(1010, 0), Node: 2, Epoch: 1, HW: 30, Leader: 2})
		}, EpochBackwards, 2, 30},
		{"HW goes backwards in an epoch", func(h *History) {
			h.Samples = append(h.Samples, Sample{At: time.Unix(1010, 0), Node: 2, Epoch: 2, HW: 15, Leader: 2})
		}, HWBackwards, 2, 15},
		{"a later epoch's HW below an earlier one", func(h *History) {
			h.Samples = append(h.Samples, Sample{At: time.Unix(1010, 0), Node: 3, Epoch: 3, HW: 12, Leader: 3})
		}, HWBackwards, 3, 12},
		{"committed data lost without a journal (a Kafka leader's)", func(h *History) {
			h.Acks = nil
			h.Logs[1].Batches, h.Logs[1].HW = h.Logs[1].Batches[:1], 10
		}, LostCommitted, 2, 20},
		{"committed data differs on the logs that reach it", func(h *History) {
			h.Acks = nil
			h.Logs[1].Batches[1].BatchCRC = 0xbb
		}, LostCommitted, 2, 20},
		{"a leader commits before an entry of its epoch", func(h *History) {
			h.Samples = append(h.Samples, Sample{At: time.Unix(1010, 0), Node: 3, Epoch: 3, HW: 20, Leader: 3})
		}, CommitOldEpoch, 3, 20},
		{"no commit after a heal", func(h *History) {
			h.Rounds[0].Recovered = time.Time{}
		}, NoRecovery, -1, -1},
		{"commit after the liveness bound", func(h *History) {
			h.Rounds[0].Bound = time.Second
		}, NoRecovery, -1, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := goodHistory()
			c.break_(&h)
			vs := Check(h, 7)
			for _, v := range vs {
				if v.Kind == c.kind && v.Node == c.node && v.Offset == c.offset {
					if !strings.Contains(v.String(), c.kind) {
						t.Errorf("%q does not name its kind", v)
					}
					return
				}
			}
			t.Fatalf("want a %s violation at node %d offset %d, got %v", c.kind, c.node, c.offset, vs)
		})
	}
}
