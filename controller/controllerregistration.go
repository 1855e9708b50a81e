package controller

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/raft"
)

// controllerRegistration serves ControllerRegistration (api 70): another
// controller (a JVM one, or kraftd) registering with the active one.
func (a *App) controllerRegistration(now time.Time, st raft.Status, w node.Writer, r node.ControllerRequest, req *kmsg.ControllerRegistrationRequest) {
	res, err := a.act.lifecycle.RegisterController(a.op(now, st, req.Version), req)
	if err != nil {
		refused(r, err)
		return
	}
	a.apply(now, w, r, res.Records, func(err error) {
		if err != nil {
			a.notController(r)
			return
		}
		r.Respond(req.ResponseKind())
	})
}

// registerSelf writes this controller's own registration once active,
// while the working image lacks one of this incarnation (from 3.7-IV0), as Kafka's
// ControllerRegistrationManager has every controller, the active one
// included, register with the active controller.
func (a *App) registerSelf(now time.Time, st raft.Status, w node.Writer) {
	act := a.act
	req := a.o.Active.Registration
	if act == nil || act.registered || req == nil {
		return
	}
	im := act.working.Image()
	if mv, ok := im.MetadataVersion(); !ok || !mv.Has(metadata.GateControllerRegistration) {
		return
	}
	if c, ok := im.Controller(req.ControllerID); ok && c.IncarnationID == req.IncarnationID {
		act.registered = true
		return
	}
	res, err := act.lifecycle.RegisterController(a.op(now, st, req.Version), req)
	if err != nil {
		a.lg.Error("cannot register this controller", zap.Error(err))
		act.registered = true // as Kafka's manager, which logs and retries later; kraftd does not retry
		return
	}
	if _, err := a.write(now, w, res.Records); err != nil {
		a.appendFailed(err, "this controller's registration")
		return
	}
	a.lg.Info("registered this controller", zap.Int32("controller_id", req.ControllerID))
	act.registered = true
}
