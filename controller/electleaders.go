package controller

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/replication"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/raft"
)

// electLeaders serves ElectLeaders (api 43) with controller/replication's decision,
// answered once its records commit (docs/design/controller-replication.md).
func (a *App) electLeaders(now time.Time, _ raft.Status, w node.Writer, r node.ControllerRequest, req *kmsg.ElectLeadersRequest) {
	res := replication.ElectLeaders(a.replOp(req.Version), req)
	a.replicated(now, w, r, res.Records, res.Response)
}
