package controller

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/replication"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/raft"
)

// alterPartition serves AlterPartition (api 56) with controller/replication's decision,
// answered once its records commit (docs/design/controller-replication.md).
func (a *App) alterPartition(now time.Time, _ raft.Status, w node.Writer, r node.ControllerRequest, req *kmsg.AlterPartitionRequest) {
	res := replication.AlterPartition(a.replOp(req.Version), req)
	a.replicated(now, w, r, res.Records, res.Response)
}
