package controller

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/replication"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/raft"
)

// allocateProducerIDs serves AllocateProducerIDs (api 67) with controller/replication's decision,
// answered once its records commit (docs/design/controller-replication.md).
func (a *App) allocateProducerIDs(now time.Time, _ raft.Status, w node.Writer, r node.ControllerRequest, req *kmsg.AllocateProducerIDsRequest) {
	res := replication.AllocateProducerIDs(a.replOp(req.Version), req)
	a.replicated(now, w, r, res.Records, res.Response)
}
