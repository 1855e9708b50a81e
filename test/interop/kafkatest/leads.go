package kafkatest

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// kraftdActivationLine is what a kraftd controller logs when it claims the active
// controller role.
const kraftdActivationLine = "becoming the active controller"

// RaftLeads returns every raft epoch a node of the quorum won, Kafka's and kraftd's, in
// every process they ran, ordered by time: when each logged its transition to leader.
func (q *MixedRaft) RaftLeads() []Activation {
	_, all := q.jvmRaftTransitions()
	for _, n := range q.Nodes {
		if n.Side != SideKraftd {
			continue
		}
		for _, p := range n.procs {
			for _, l := range parseKraftdLeads(p.Log(), n.ID) {
				all = append(all, Activation{Node: l.Node, At: l.At, Epoch: l.Epoch})
			}
		}
	}
	slices.SortFunc(all, func(a, b Activation) int { return a.At.Compare(b.At) })
	return all
}

// ControllerActivations returns every time a node of the quorum became the active
// controller, Kafka's (ActivationLine) and kraftd's, ordered by time.
func (q *MixedRaft) ControllerActivations() []Activation {
	all := q.Activations()
	for _, n := range q.Nodes {
		if n.Side != SideKraftd {
			continue
		}
		for _, p := range n.procs {
			all = append(all, parseKraftdActivations(p.Log(), n.ID)...)
		}
	}
	slices.SortFunc(all, func(a, b Activation) int { return a.At.Compare(b.At) })
	return all
}

// FirstAfter is the first of events (ordered by time) logged at or after t, which is
// compared at the logs' millisecond precision.
func FirstAfter(events []Activation, t time.Time) (Activation, bool) {
	t = t.Truncate(time.Millisecond)
	for _, e := range events {
		if !e.At.Before(t) {
			return e, true
		}
	}
	return Activation{}, false
}

func parseKraftdActivations(out string, id int32) []Activation {
	var r []Activation
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "{") || !strings.Contains(line, kraftdActivationLine) {
			continue
		}
		var v struct {
			TS    string `json:"ts"`
			Msg   string `json:"msg"`
			Epoch int32  `json:"epoch"`
		}
		if json.Unmarshal([]byte(line), &v) != nil || v.Msg != kraftdActivationLine {
			continue
		}
		at, err := time.Parse("2006-01-02T15:04:05.000Z0700", v.TS)
		if err != nil {
			continue
		}
		r = append(r, Activation{Node: id, At: at.Truncate(time.Millisecond), Epoch: v.Epoch})
	}
	return r
}
