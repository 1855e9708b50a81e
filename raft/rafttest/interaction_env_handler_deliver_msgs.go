package rafttest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// handleMsgs delivers (deliver-msgs) or drops (drop-msgs) the queued
// messages matching the filters, in queue order: those to the given nodes
// (all when none is given), from=N those from node N, type=T those of api
// T (a response's type is the api's name with "Response" appended). What
// they cause is queued, not delivered. A dropped request or response is
// answered to the node waiting for it with a timeout, as the real
// transport does.
//
// Example:
//
//	deliver-msgs 2 type=Vote
//	----
//	> 1->2 Vote v2 epoch=0 candidate=1 last=0@0 pre-vote
//	  2->1 VoteResponse v2 epoch=0 leader=none granted=true
//
//	drop-msgs 3 from=1
//	----
//	> dropped 1->3 Vote v2 epoch=0 candidate=1 last=0@0 pre-vote
func (e *InteractionEnv) handleMsgs(t *testing.T, d *datadriven.TestData, drop bool) {
	to := e.ids(t, d)
	from, typ := int32(-1), ""
	for _, a := range d.CmdArgs {
		switch a.Key {
		case "from":
			from = e.parseID(t, d, a.Vals[0])
		case "type":
			typ = a.Vals[0]
		}
	}
	var picked, rest []*envelope
	for _, m := range e.queue {
		name := m.api
		if m.req != nil {
			name = msgName(m.req)
		} else if m.resp != nil {
			name = msgName(m.resp)
		}
		if (len(to) == 0 || slices.Contains(to, m.to)) && (from < 0 || m.from == from) && (typ == "" || typ == name) {
			picked = append(picked, m)
		} else {
			rest = append(rest, m)
		}
	}
	e.queue = rest
	for _, m := range picked {
		if !drop {
			e.deliver(m)
			continue
		}
		e.printf("> dropped %s", describeEnvelope(m))
		if m.err == nil {
			e.queue = append(e.queue, failure(m, errITimedOut))
		}
	}
}

func describeEnvelope(m *envelope) string {
	switch {
	case m.err != nil:
		return fmt.Sprintf("%d->%d %s failed: %v", m.to, m.from, m.api, m.err)
	case m.req != nil:
		return fmt.Sprintf("%d->%d %s", m.from, m.to, describeMsg(m.req))
	}
	return fmt.Sprintf("%d->%d %s", m.from, m.to, describeMsg(m.resp))
}
