package controller

import (
	"encoding/binary"
	"errors"
	mrand "math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/cluster"
	"github.com/kraftd/kraftd/controller/placement"
	"github.com/kraftd/kraftd/controller/replication"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/uuid"
)

// randomness is the active controller's injected randomness, drawn from
// ActiveOptions.Seed so a simulation replays the same placements and topic
// ids: the replica placer's java.util.Random, kept for the life of the
// application as Kafka's placer keeps its own, and the uuid source.
type randomness struct {
	placer  *placement.JavaRandom
	shuffle *placement.JavaRandom // DeleteTopics' answer order (Kafka: an unseeded Random)
	bytes   *mrand.ChaCha8
}

func newRandomness(seed int64) *randomness {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], uint64(seed))
	return &randomness{placer: placement.NewJavaRandom(seed), shuffle: placement.NewJavaRandom(^seed), bytes: mrand.NewChaCha8(s)}
}

func (r *randomness) newUUID() uuid.UUID {
	u, err := uuid.RandomFrom(r.bytes)
	if err != nil { // ChaCha8.Read never fails
		panic("controller: drawing a uuid: " + err.Error())
	}
	return u
}

// replicationSettings are ActiveOptions.Replication, or Kafka's defaults
// for this node.
func (a *App) replicationSettings() *replication.Settings {
	if s := a.o.Active.Replication; s != nil {
		return s
	}
	s := replication.DefaultSettings()
	s.NodeID = a.o.NodeID
	s.Static = a.o.Active.Cluster.Static
	return s
}

// replOp is what controller/replication's operations are given: the
// working image, the settings, the injected randomness and the heartbeat
// tracker's view of brokers in controlled shutdown.
func (a *App) replOp(version int16) replication.Op {
	return replication.Op{Image: a.act.working.Image(), APIVersion: version, Settings: a.replicationSettings(),
		Random: a.rnd.placer, NewUUID: a.rnd.newUUID, ShuttingDown: a.act.lifecycle.ShuttingDown}
}

// asClusterRecords adapts replication's records to the writer's type (the
// same fields).
func asClusterRecords(recs []replication.Record) []cluster.Record {
	out := make([]cluster.Record, len(recs))
	for i, r := range recs {
		out[i] = cluster.Record{Record: r.Record, Version: r.Version}
	}
	return out
}

// replicated appends a replication operation's records and answers resp
// once they commit (at once, or with what is pending, without records).
func (a *App) replicated(now time.Time, w node.Writer, r node.ControllerRequest, recs []replication.Record, resp kmsg.Response) {
	a.apply(now, w, r, asClusterRecords(recs), func(err error) {
		if err != nil {
			a.notController(r)
			return
		}
		r.Respond(resp)
	})
}

// electPeriodically runs the preferred and unclean leader elections when
// they are due (Kafka's electPreferred and electUnclean periodic tasks); a
// run that reports more to do runs again at once. It returns a.act, nil
// once the controller renounced.
func (a *App) electPeriodically(now time.Time, w node.Writer, act *activeState) *activeState {
	if act == nil {
		return nil
	}
	type task struct {
		at    *time.Time
		every time.Duration
		run   func(replication.Op) ([]replication.Record, bool)
		what  string
	}
	for _, t := range []task{
		{&act.nextBalance, a.o.Active.LeaderImbalanceCheckInterval, replication.BalanceLeaders, "a preferred leader election"},
		{&act.nextUnclean, a.o.Active.UncleanElectionInterval, replication.ElectUncleanLeaders, "an unclean leader election"},
	} {
		if t.at.IsZero() || now.Before(*t.at) {
			continue
		}
		a.stats.operationsStarted.Add(1)
		full := false
		for range 1000 {
			if a.act == nil {
				return nil
			}
			recs, more := t.run(a.replOp(0))
			if len(recs) > 0 {
				if _, err := a.write(now, w, asClusterRecords(recs)); err != nil {
					full = errors.Is(err, errRetry)
					if !full {
						a.appendFailed(err, t.what)
					}
					break
				}
			}
			if !more {
				break
			}
		}
		if a.act == nil {
			return nil
		}
		if full { // raft's buffer is full: again at the next tick
			*t.at = now.Add(time.Millisecond)
			continue
		}
		*t.at = now.Add(t.every)
	}
	return a.act
}
