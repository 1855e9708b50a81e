package controller

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/replication"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/raft"
)

// assignReplicasToDirs serves AssignReplicasToDirs (api 73) with controller/replication's decision,
// answered once its records commit (docs/design/controller-replication.md).
func (a *App) assignReplicasToDirs(now time.Time, _ raft.Status, w node.Writer, r node.ControllerRequest, req *kmsg.AssignReplicasToDirsRequest) {
	res := replication.AssignReplicasToDirs(a.replOp(req.Version), req)
	a.replicated(now, w, r, res.Records, res.Response)
}
