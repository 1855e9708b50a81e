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
// configuration replaced whole, validated as IncrementalAlterConfigs is.
func (a *App) alterConfigs(now time.Time, _ raft.Status, w node.Writer, r node.ControllerRequest, req *kmsg.AlterConfigsRequest) {
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	im := a.act.working.Image()
	ctx := a.configsContext(im, r.Forwarded)
	var all []metadata.ConfigRecord
	for _, res := range req.Resources {
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
