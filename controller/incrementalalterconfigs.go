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
	alters := make([]configAlter, len(req.Resources))
	for i, res := range req.Resources {
		alters[i] = configAlter{Resource: configs.Resource{Type: int8(res.ResourceType), Name: res.ResourceName}}
		for _, c := range res.Configs {
			alters[i].ops = append(alters[i].ops, configs.Op{Name: c.Name, Op: configs.OpType(c.Op), Value: c.Value})
		}
	}
	answers, recs, elr := a.alterConfigResources(r.Forwarded, alters, true)
	for _, ans := range answers {
		out := kmsg.NewIncrementalAlterConfigsResponseResource()
		out.ResourceType, out.ResourceName = kmsg.ConfigResourceType(ans.Type), ans.Name
		if ans.err != nil {
			out.ErrorCode, out.ErrorMessage = ans.err.Err.Code, &ans.err.Message
		}
		resp.Resources = append(resp.Resources, out)
	}
	a.configsDone(now, w, r, req.ValidateOnly, elr, recs, resp)
}

// configAlter is one resource of an (Incremental)AlterConfigs request;
// configAnswer its answer (err nil: accepted).
type configAlter struct {
	configs.Resource
	ops []configs.Op
}

type configAnswer struct {
	configs.Resource
	err *configs.Error
}

// alterConfigResources decides both config apis on the working image:
// the screening's answers first (configs.Screen), then each other
// resource's, changed whole (legacy AlterConfigs) or key by key
// (incremental), validated and checked to exist; it returns the answers,
// the records of the accepted resources and whether ELR is on.
func (a *App) alterConfigResources(forwarded bool, alters []configAlter, incremental bool) ([]configAnswer, []metadata.ConfigRecord, bool) {
	im := a.act.working.Image()
	ctx := a.configsContext(im, forwarded)
	keys := make([]configs.Resource, len(alters))
	for i, al := range alters {
		keys[i] = al.Resource
	}
	screened := configs.Screen(keys, incremental)
	var answers []configAnswer
	for i, al := range alters {
		if e := screened[i].Err; e != nil {
			answers = append(answers, configAnswer{al.Resource, e})
		}
	}
	alter := configs.LegacyAlter
	if incremental {
		alter = configs.IncrementalAlter
	}
	var all []metadata.ConfigRecord
	for i, al := range alters {
		if screened[i].Err != nil || screened[i].Dropped {
			continue
		}
		ctx.Current = configs.Current(im, al.Type, al.Name)
		recs, err := alter(al.Type, al.Name, al.ops, ctx)
		if err == nil {
			err = a.configResourceExists(im, al.Type, al.Name)
		}
		if err == nil {
			all = append(all, recs...)
		}
		answers = append(answers, configAnswer{al.Resource, err})
	}
	return answers, all, ctx.ELR
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
