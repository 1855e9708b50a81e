package raft

// Range checks at the edge. Every request and response is checked, by the
// functions its api's registration names (apis.go; each api's own checks
// are in its file), before any handler runs, so handlers may assume what
// these establish:
// an epoch that can become the local one is at most MaxEpoch, ids are >= -1,
// offsets, positions and sizes are not negative where they are used, and
// the partition is the raft partition. A request that fails is answered with
// Kafka's code for it (INVALID_REQUEST unless Kafka answers another); a
// response that fails is dropped and its destination backs off. Both are
// logged through the rate-limited remote logger: a peer causes them.

import (
	"fmt"
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// MaxEpoch is the largest epoch this node accepts or persists. An election
// increments the epoch, so MaxInt32 itself could only be reached to be
// stuck there (the quorum-state store refuses it): a node at MaxEpoch never
// starts an election, and a message naming a higher epoch is refused.
const MaxEpoch Epoch = math.MaxInt32 - 1

// refusal is why a request is refused at the edge, and how it is answered.
type refusal struct {
	code int16 // Kafka error code
	top  bool  // in the top-level error code (else the partition's)
	why  string
}

func topRefusal(code int16, why string) *refusal { return &refusal{code: code, top: true, why: why} }

func partitionRefusal(code int16, format string, args ...any) *refusal {
	return &refusal{code: code, why: fmt.Sprintf(format, args...)}
}

// refuseRequest validates req by its registration a: the edge checks it
// asks for, then its own. A refused request gets its error answer.
func (d *Driver) refuseRequest(a *api, req kmsg.Request) kmsg.Response {
	r := d.checkEdge(a, req)
	if r == nil && a.check != nil {
		r = a.check(d, req)
	}
	if r == nil {
		return nil
	}
	d.remoteLg.Warn("refusing request: "+r.why, zap.Int16("api", req.Key()), zap.Int16("error", r.code))
	if r.top {
		resp := req.ResponseKind()
		*a.TopError(resp) = r.code
		return resp
	}
	return a.answer(d, req, r.code)
}

// checkEdge is the cluster id and single-partition shape check, in
// Kafka's order, of the apis whose registration asks for them.
func (d *Driver) checkEdge(a *api, req kmsg.Request) *refusal {
	switch {
	case a.checkClusterID && !d.validClusterID(a.ClusterID(req)):
		return topRefusal(errInconsistentCluster, "wrong cluster id")
	case a.partition != nil && !d.isRaftPartition(a.partition(req)):
		return notRaftPartition
	}
	return nil
}

// notRaftPartition refuses a request that does not name exactly the raft
// partition.
var notRaftPartition = topRefusal(errInvalidRequest, "not exactly the raft partition")

// checkEpoch refuses an epoch this node could not move to. A negative
// epoch is left to the handlers: older than any local epoch, it is fenced,
// as Kafka answers it.
func checkEpoch(what string, epoch Epoch) *refusal {
	if epoch > MaxEpoch {
		return partitionRefusal(errInvalidRequest, "%s %d is above the largest epoch %d", what, epoch, MaxEpoch)
	}
	return nil
}

// The response checks (each api's checkResponse) establish for the
// handlers: the leader epoch of every partition is in [-1, MaxEpoch] and the
// leader id >= -1 (handleCommonResponse may move to them); a Fetch answer's
// diverging epoch and snapshot id are either unset (-1) or in range; a
// FetchSnapshot answer's position and size are not negative.

// checkLeader is the check of a partition's leader and epoch every raft
// answer carries.
func checkLeader(id NodeID, epoch Epoch) string {
	if id < -1 || epoch < -1 || epoch > MaxEpoch {
		return fmt.Sprintf("leader %d in epoch %d", id, epoch)
	}
	return ""
}
