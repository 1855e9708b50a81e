package controller

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/raft"
)

// brokerRegistration serves BrokerRegistration (api 62): the broker's epoch
// is the offset its RegisterBrokerRecord gets; the answer waits for it to
// commit (controller/cluster decides, docs/design/controller-cluster.md).
func (a *App) brokerRegistration(now time.Time, st raft.Status, w node.Writer, r node.ControllerRequest, req *kmsg.BrokerRegistrationRequest) {
	res, err := a.act.lifecycle.RegisterBroker(a.op(now, st, req.Version), req)
	if err != nil {
		refused(r, err)
		return
	}
	resp := res.Response
	resp.Version = req.Version
	a.apply(now, w, r, res.Records, func(err error) {
		if err != nil {
			a.notController(r)
			return
		}
		r.Respond(&resp)
	})
}
