package raft

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/raft/requests"
)

// requestManager tracks each destination as ready, in flight or backing
// off (docs/design/state-machine.md 1.2). Every role transition resets it,
// so responses to requests sent in an older state are ignored.
// Invariant: at most one Fetch or FetchSnapshot is in flight in total
// (fetchInFlight is checked before each is sent), so one offset is never
// appended twice.
type requestManager = requests.Manager[NodeID, pending]

// pending is what the driver remembers of its one in-flight request to a
// destination.
type pending struct {
	to      NodeID
	corr    uint64
	key     kmsg.Key
	preVote bool
	epoch   Epoch // local epoch when sent
}

// fetchInFlight reports whether any Fetch or FetchSnapshot is outstanding.
func (d *Driver) fetchInFlight() bool { return d.reqs.InFlight(isFetch) }

func isFetch(p pending) bool { return p.key == kmsg.Fetch || p.key == kmsg.FetchSnapshot }
