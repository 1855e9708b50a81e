package controller

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/cluster"
	"github.com/kraftd/kraftd/controller/configs"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/raft"
)

// incrementalAlterConfigs serves IncrementalAlterConfigs (api 44) with
// controller/configs' validation on the working image: unknown resource
// types and resources named twice answered first, as Kafka's ControllerApis
// screens them (configs.Screen), then each other resource answered alone,
// the records of those that pass appended as one batch, followed by the
// ClearElrRecords (docs/design/controller-configs.md).
func (a *App) incrementalAlterConfigs(now time.Time, _ raft.Status, w node.Writer, r node.ControllerRequest, req *kmsg.IncrementalAlterConfigsRequest) {
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	im := a.act.working.Image()
	ctx := a.configsContext(im, r.Forwarded)
	var all []metadata.ConfigRecord
	keys := make([]configs.Resource, len(req.Resources))
	for i, res := range req.Resources {
		keys[i] = configs.Resource{Type: int8(res.ResourceType), Name: res.ResourceName}
	}
	screened := configs.Screen(keys, true)
	for i, res := range req.Resources {
		if e := screened[i].Err; e != nil {
			out := kmsg.NewIncrementalAlterConfigsResponseResource()
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
			ops[i] = configs.Op{Name: c.Name, Op: configs.OpType(c.Op), Value: c.Value}
		}
		ctx.Current = configs.Current(im, int8(res.ResourceType), res.ResourceName)
		recs, err := configs.IncrementalAlter(int8(res.ResourceType), res.ResourceName, ops, ctx)
		if err == nil {
			err = a.configResourceExists(im, int8(res.ResourceType), res.ResourceName)
		}
		out := kmsg.NewIncrementalAlterConfigsResponseResource()
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

// configsContext is what validating a change needs besides the request;
// forwarded: it came in an Envelope (cordoned.log.dirs may then grow).
func (a *App) configsContext(im *image.Image, forwarded bool) configs.Context {
	mv, _ := im.MetadataVersion()
	return configs.Context{Server: configs.ServerLogConfigFromStatic(a.replicationSettings().Static),
		ELR: im.ELREnabled(), CordonedLogDirsUnsupported: !mv.Has(metadata.GateCordonedLogDirs), Forwarded: forwarded}
}

// configResourceExists is Kafka's existence check, run after validation:
// a topic of the working image, a registered broker or controller.
func (a *App) configResourceExists(im *image.Image, resType int8, name string) *configs.Error {
	return configs.CheckExists(resType, name,
		func(topic string) bool { _, ok := im.TopicByName(topic); return ok },
		func(id int32) bool {
			if _, ok := im.Broker(id); ok {
				return true
			}
			_, ok := im.Controller(id)
			return ok
		})
}

// configsDone appends the accepted resources' records (none when only
// validating) and the ClearElrRecords after them, and answers on commit.
func (a *App) configsDone(now time.Time, w node.Writer, r node.ControllerRequest, validateOnly, elr bool, recs []metadata.ConfigRecord, resp kmsg.Response) {
	var out []cluster.Record
	if !validateOnly {
		for i := range recs {
			out = append(out, cluster.Record{Record: &recs[i]})
		}
		for _, c := range configs.ClearElrRecords(recs, elr) {
			out = append(out, cluster.Record{Record: &c})
		}
	}
	a.apply(now, w, r, out, func(err error) {
		if err != nil {
			a.notController(r)
			return
		}
		r.Respond(resp)
	})
}
