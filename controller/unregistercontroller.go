package controller

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/cluster"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/raft"
)

// unregisterController serves UnregisterController (api 94) as Kafka 4.4.0
// does (QuorumController.unregisterController, then
// ClusterControlManager.unregisterController), in its order: the active
// controller itself is INVALID_REQUEST, a metadata.version below 4.4-IV2
// UNSUPPORTED_VERSION, an id the working image does not hold
// CONTROLLER_ID_NOT_REGISTERED; otherwise an UnregisterControllerRecord,
// answered once it commits.
func (a *App) unregisterController(now time.Time, _ raft.Status, w node.Writer, r node.ControllerRequest, req *kmsg.UnregisterControllerRequest) {
	im := a.act.working.Image()
	mv, _ := im.MetadataVersion()
	id := req.ControllerID
	if id == a.o.NodeID {
		r.Fail(kerr.InvalidRequest.Code, "Controller cannot unregister itself while it is active.")
		return
	}
	if !mv.Has(metadata.GateControllerUnregistration) {
		r.Fail(kerr.UnsupportedVersion.Code, "The current MetadataVersion is too old to support controller unregistration.")
		return
	}
	if _, ok := im.Controller(id); !ok {
		r.Fail(kerr.ControllerIDNotRegistered.Code, fmt.Sprintf("Controller ID %d is not currently registered.", id))
		return
	}
	recs := []cluster.Record{{Record: &metadata.UnregisterControllerRecord{ControllerId: id}}}
	a.apply(now, w, r, recs, func(err error) {
		if err != nil {
			a.notController(r)
			return
		}
		r.Respond(req.ResponseKind())
	})
}
