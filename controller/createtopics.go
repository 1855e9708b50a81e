package controller

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/replication"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/raft"
)

// createTopics serves CreateTopics (api 19) with controller/replication's decision,
// answered once its records commit (docs/design/controller-replication.md).
func (a *App) createTopics(now time.Time, _ raft.Status, w node.Writer, r node.ControllerRequest, req *kmsg.CreateTopicsRequest) {
	res := replication.CreateTopics(a.replOp(req.Version), req, nil)
	a.replicated(now, w, r, res.Records, res.Response)
}
