package controller

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/raft"
)

// brokerHeartbeat serves BrokerHeartbeat (api 63). The contact counts from
// when the request arrived, as Kafka tracks it before the heartbeat waits
// its turn; one that waited past the deadline is answered
// REQUEST_TIMED_OUT, its session touched.
func (a *App) brokerHeartbeat(now time.Time, st raft.Status, w node.Writer, r node.ControllerRequest, req *kmsg.BrokerHeartbeatRequest) {
	lc := a.act.lifecycle
	lc.TrackHeartbeat(req.BrokerID, req.BrokerEpoch, a.mono(r.Arrived))
	if d := a.o.Active.HeartbeatDeadline; d > 0 && now.Sub(r.Arrived) > d {
		a.stats.timedOutHeartbeats.Add(1)
		a.stats.operationsTimedOut.Add(1)
		refused(r, lc.ExpiredHeartbeat(a.act.working.Image(), req))
		return
	}
	res, err := lc.Heartbeat(a.op(now, st, req.Version), req)
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
