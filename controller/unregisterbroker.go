package controller

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/raft"
)

// unregisterBroker serves UnregisterBroker (api 64; kafka-cluster
// unregister, through an Envelope or --bootstrap-controller).
func (a *App) unregisterBroker(now time.Time, st raft.Status, w node.Writer, r node.ControllerRequest, req *kmsg.UnregisterBrokerRequest) {
	res, err := a.act.lifecycle.UnregisterBroker(a.op(now, st, req.Version), req.BrokerID)
	if err != nil {
		refused(r, err)
		return
	}
	a.apply(now, w, r, res.Records, func(err error) {
		if err != nil {
			a.notController(r)
			return
		}
		resp := req.ResponseKind().(*kmsg.UnregisterBrokerResponse)
		r.Respond(resp)
	})
}
