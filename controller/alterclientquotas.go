package controller

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/quotas"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/raft"
)

// maxHostLookups bounds the host names of one AlterClientQuotas request
// that Prepare resolves; the others count as unresolvable.
const maxHostLookups = 16

// alterClientQuotas serves AlterClientQuotas (api 49) with
// controller/quotas' decision on the working image: the accepted entities'
// records appended as one batch (none when only validating), the answer
// sent once what is pending commits. A request without entries is
// answered at once, as Kafka's QuorumController answers it; one writing
// more than quotas.MaxRecords fails whole. The ip entities' host names
// were resolved before the request reached the loop (Prepare).
func (a *App) alterClientQuotas(now time.Time, _ raft.Status, w node.Writer, r node.ControllerRequest, req *kmsg.AlterClientQuotasRequest) {
	if len(req.Entries) == 0 {
		r.Respond(req.ResponseKind())
		return
	}
	resolved, _ := r.Prepared.(map[string]bool)
	res, err := quotas.Alter(a.act.working.Image(), req, func(host string) bool { return resolved[host] })
	if err != nil {
		r.Fail(err.Code, err.Message)
		return
	}
	a.applyAnswer(now, w, r, res.Records, res.Response)
}

// Prepare implements node.Controller: for an AlterClientQuotas request to
// the active controller, the host names among its ip entities (not IP
// literals, quotas.ClassifyHost) resolved through ActiveOptions.LookupHost,
// at most maxHostLookups of them. Kafka's controller resolves them with
// InetAddress.getByName on its event thread; kraftd's loop must not block,
// so the connection's goroutine does it first.
func (a *App) Prepare(req kmsg.Request) any {
	q, ok := req.(*kmsg.AlterClientQuotasRequest)
	if !ok || !a.Active() || a.lookupHost == nil {
		return nil
	}
	resolved := map[string]bool{}
	for _, e := range q.Entries {
		for _, p := range e.Entity {
			if p.Type != quotas.IP || p.Name == nil || quotas.ClassifyHost(*p.Name) != quotas.Lookup {
				continue
			}
			if _, done := resolved[*p.Name]; !done && len(resolved) < maxHostLookups {
				resolved[*p.Name] = a.lookupHost(*p.Name)
			}
		}
	}
	return resolved
}
