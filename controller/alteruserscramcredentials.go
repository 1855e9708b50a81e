package controller

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/cluster"
	"github.com/kraftd/kraftd/controller/scram"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/raft"
)

// alterUserSCRAMCredentials serves AlterUserScramCredentials (api 51) with
// controller/scram's decision on the working image: the credentials'
// records appended as one batch, the answer sent once they commit. A
// request naming no user is answered at once, as Kafka's QuorumController
// answers it.
func (a *App) alterUserSCRAMCredentials(now time.Time, _ raft.Status, w node.Writer, r node.ControllerRequest, req *kmsg.AlterUserSCRAMCredentialsRequest) {
	if len(req.Deletions) == 0 && len(req.Upsertions) == 0 {
		r.Respond(req.ResponseKind())
		return
	}
	res := scram.Alter(a.act.working.Image(), req)
	a.applyAnswer(now, w, r, res.Records, res.Response)
}

// applyAnswer appends records (version 0, as Kafka writes these types) as
// one batch and sends resp once they commit.
func (a *App) applyAnswer(now time.Time, w node.Writer, r node.ControllerRequest, recs []metadata.Record, resp kmsg.Response) {
	out := make([]cluster.Record, len(recs))
	for i, rec := range recs {
		out[i] = cluster.Record{Record: rec}
	}
	a.apply(now, w, r, out, func(err error) {
		if err != nil {
			a.notController(r)
			return
		}
		r.Respond(resp)
	})
}
