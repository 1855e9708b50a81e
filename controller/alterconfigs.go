package controller

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/configs"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/raft"
)

// alterConfigs serves the legacy AlterConfigs (api 33): each resource's
// configuration replaced whole, screened and validated as
// IncrementalAlterConfigs is.
func (a *App) alterConfigs(now time.Time, _ raft.Status, w node.Writer, r node.ControllerRequest, req *kmsg.AlterConfigsRequest) {
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	im := a.act.working.Image()
	ctx := a.configsContext(im, r.Forwarded)
	var all []metadata.ConfigRecord
	keys := make([]configs.Resource, len(req.Resources))
	for i, res := range req.Resources {
		keys[i] = configs.Resource{Type: int8(res.ResourceType), Name: res.ResourceName}
	}
	screened := configs.Screen(keys, false)
	for i, res := range req.Resources {
		if e := screened[i].Err; e != nil {
			out := kmsg.NewAlterConfigsResponseResource()
			out.ResourceType, out.ResourceName, out.ErrorCode, out.ErrorMessage = res.ResourceType, res.ResourceName, e.Err.Code, &e.Message
			resp.Resources = append(resp.Resources, out)
		}
	}
	for i, res := range req.Resources {
		if screened[i].Err != nil || screened[i].Dropped {
			continue
		}
		ops := make([]configs.Op, len(res.Configs))
		for i, c := range res.Configs {
			ops[i] = configs.Op{Name: c.Name, Op: configs.OpSet, Value: c.Value}
		}
		ctx.Current = configs.Current(im, int8(res.ResourceType), res.ResourceName)
		recs, err := configs.LegacyAlter(int8(res.ResourceType), res.ResourceName, ops, ctx)
		if err == nil {
			err = a.configResourceExists(im, int8(res.ResourceType), res.ResourceName)
		}
		out := kmsg.NewAlterConfigsResponseResource()
		out.ResourceType, out.ResourceName = res.ResourceType, res.ResourceName
		if err != nil {
			out.ErrorCode, out.ErrorMessage = err.Err.Code, &err.Message
		} else {
			all = append(all, recs...)
		}
		resp.Resources = append(resp.Resources, out)
	}
	a.configsDone(now, w, r, req.ValidateOnly, ctx.ELR, all, resp)
}
