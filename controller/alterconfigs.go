package controller

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/configs"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/raft"
)

// alterConfigs serves the legacy AlterConfigs (api 33): each resource's
// configuration replaced whole, screened and validated as
// IncrementalAlterConfigs is.
func (a *App) alterConfigs(now time.Time, _ raft.Status, w node.Writer, r node.ControllerRequest, req *kmsg.AlterConfigsRequest) {
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	alters := make([]configAlter, len(req.Resources))
	for i, res := range req.Resources {
		alters[i] = configAlter{Resource: configs.Resource{Type: int8(res.ResourceType), Name: res.ResourceName}}
		for _, c := range res.Configs {
			alters[i].ops = append(alters[i].ops, configs.Op{Name: c.Name, Op: configs.OpSet, Value: c.Value})
		}
	}
	answers, recs, elr := a.alterConfigResources(r.Forwarded, alters, false)
	for _, ans := range answers {
		out := kmsg.NewAlterConfigsResponseResource()
		out.ResourceType, out.ResourceName = kmsg.ConfigResourceType(ans.Type), ans.Name
		if ans.err != nil {
			out.ErrorCode, out.ErrorMessage = ans.err.Err.Code, &ans.err.Message
		}
		resp.Resources = append(resp.Resources, out)
	}
	a.configsDone(now, w, r, req.ValidateOnly, elr, recs, resp)
}
