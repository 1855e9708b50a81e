package rafttest

import (
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/raft"
)

// handleRawRequest steps a hand-made request into a node, as if a peer
// (possibly a confused or malicious one) had sent it, and prints its
// answer (marked "(raw)"; a voter change's or an upgrade's once it
// completes). The answer goes nowhere else. Apis and their arguments
// (numbers default to 0, the sender to from=):
//
//   - Vote [candidate=N] epoch=E [last-epoch=E] [last-offset=O] [pre-vote]
//   - BeginQuorumEpoch [leader=N] epoch=E
//   - EndQuorumEpoch [leader=N] epoch=E [successors=(...)]
//   - Fetch [replica=N] epoch=E [offset=O] [last-fetched-epoch=E] [max-wait=MS]
//   - AddRaftVoter voter=N [port=P] [no-ack], RemoveRaftVoter voter=N,
//     UpdateRaftVoter voter=N epoch=E [port=P] (directory DirectoryID(N),
//     port 9000+N by default)
//   - UpdateFeatures [level=L] [feature=F] [type=T] [validate-only]
//     (kraft.version=1, type 1 by default)
//
// Example:
//
//	raw-request 2 from=3 Fetch epoch=2 offset=5 last-fetched-epoch=1
//	----
//	> 3->2 Fetch v18 replica=3 epoch=2 offset=5 last-fetched-epoch=1 hw=unset max-wait=0ms (raw)
//	  2->3 FetchResponse v18 leader=2 epoch=2 hw=4 diverging=2@1 (raw)
func (e *InteractionEnv) handleRawRequest(t *testing.T, d *datadriven.TestData) {
	n := e.upNode(t, d, e.firstID(t, d))
	var from int32
	d.ScanArgs(t, "from", &from)
	if len(d.CmdArgs) < 3 {
		d.Fatalf(t, "raw-request: name the api after from=")
	}
	api := d.CmdArgs[2].Key
	num := func(key string, def int) int32 {
		if !d.HasArg(key) {
			return int32(def)
		}
		var v int
		d.ScanArgs(t, key, &v)
		return int32(v)
	}
	var req kmsg.Request
	switch api {
	case "Vote":
		req = VoteRequest(num("candidate", int(from)), num("epoch", 0), num("last-epoch", 0), int64(num("last-offset", 0)), d.HasArg("pre-vote"))
	case "BeginQuorumEpoch":
		req = BeginQuorumEpochRequest(num("leader", int(from)), num("epoch", 0))
	case "EndQuorumEpoch":
		var succ []int32
		for _, a := range d.CmdArgs {
			if a.Key == "successors" {
				for _, v := range a.Vals {
					succ = append(succ, e.parseID(t, d, v))
				}
			}
		}
		req = EndQuorumEpochRequest(num("leader", int(from)), num("epoch", 0), succ...)
	case "Fetch":
		req = FetchRequest(num("replica", int(from)), num("epoch", 0), int64(num("offset", 0)), num("last-fetched-epoch", 0), num("max-wait", 0))
	case "AddRaftVoter", "RemoveRaftVoter", "UpdateRaftVoter":
		req = voterChangeRequest(api, num("voter", 0), num("epoch", 0), num("port", 0), d.HasArg("no-ack"))
	case "UpdateFeatures":
		feature := features.KRaftVersionName
		if d.HasArg("feature") {
			d.ScanArgs(t, "feature", &feature)
		}
		req = updateFeaturesRequest(feature, int16(num("level", 1)), int8(num("type", 1)), d.HasArg("validate-only"))
	default:
		d.Fatalf(t, "raw-request: unsupported api %q", api)
	}
	req, err := roundTripRequest(req)
	if err != nil {
		d.Fatalf(t, "raw-request: %v", err)
	}
	e.printf("> %d->%d %s (raw)", from, n.id, describeMsg(req))
	n.step(raft.Message{Request: req, Ref: &iref{from: from, raw: true}})
}
