package protocol

import (
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's generated readers reject a known tagged field sent at a version that does not
// define it ("Tag N is not valid for version V") and close the connection, while kmsg writes
// such tags whenever the field differs from its default, whatever the version. These
// functions reset those fields before encoding, for every served api (the list was derived
// from Kafka 4.4.0's message schemas: tags whose taggedVersions start above the api's first
// flexible version).

// sanitizeRequest resets fields req's version cannot carry. For Fetch below v15 it also
// moves ReplicaState.ID into ReplicaID, as Kafka's request builder does, so that callers can
// fill the v15+ form only.
func sanitizeRequest(req kmsg.Request) {
	switch r := req.(type) {
	case *kmsg.FetchRequest:
		v := r.Version
		if v < 15 {
			if r.ReplicaID == -1 && r.ReplicaState.ID != -1 {
				r.ReplicaID = r.ReplicaState.ID
			}
			r.ReplicaState.ID, r.ReplicaState.Epoch = -1, -1
		}
		for i := range r.Topics {
			for j := range r.Topics[i].Partitions {
				p := &r.Topics[i].Partitions[j]
				if v < 17 {
					p.ReplicaDirectoryID = [16]byte{}
				}
				if v < 18 {
					p.HighWatermark = math.MaxInt64
				}
			}
		}
	case *kmsg.FetchSnapshotRequest:
		if r.Version < 1 {
			for i := range r.Topics {
				for j := range r.Topics[i].Partitions {
					r.Topics[i].Partitions[j].ReplicaDirectoryID = [16]byte{}
				}
			}
		}
	}
}

// sanitizeResponse resets fields resp's version cannot carry.
func sanitizeResponse(resp kmsg.Response) {
	switch r := resp.(type) {
	case *kmsg.FetchResponse:
		if r.Version < 16 {
			r.Brokers = nil
		}
	case *kmsg.VoteResponse:
		if r.Version < 1 {
			r.NodeEndpoints = nil
		}
	case *kmsg.FetchSnapshotResponse:
		if r.Version < 1 {
			r.NodeEndpoints = nil
		}
	}
}
