package controller

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/replication"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/raft"
)

// deleteTopics serves DeleteTopics (api 20) with controller/replication's decision,
// answered once its records commit (docs/design/controller-replication.md).
func (a *App) deleteTopics(now time.Time, _ raft.Status, w node.Writer, r node.ControllerRequest, req *kmsg.DeleteTopicsRequest) {
	res := replication.DeleteTopics(a.replOp(req.Version), a.committed.Image(), req, a.rnd.shuffle)
	a.replicated(now, w, r, res.Records, res.Response)
}
