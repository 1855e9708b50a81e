package image

import (
	"fmt"
	"math/rand/v2"

	"github.com/kraftd/kraftd/internal/metadatatest"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// gen makes random record sequences against what an image holds: mostly
// records a controller could write (so the state grows and changes), some
// that replay must refuse (wrong epochs, duplicates, unknown ids), and a few
// of entirely random content.
//
// With safe set it keeps to what a snapshot round-trips exactly: a
// metadata.version from 4.3-IV0 on and ELR on from the start (Kafka drops
// what the version cannot carry and ELRs while the feature is off), and no
// random-content records.
type gen struct {
	r    *rand.Rand
	safe bool
}

func (g *gen) n(k int) int { return g.r.IntN(k) }

func (g *gen) chance(percent int) bool { return g.n(100) < percent }

// pick returns a random element of s, or false when s is empty.
func pick[T any](g *gen, s []T) (T, bool) {
	var zero T
	if len(s) == 0 {
		return zero, false
	}
	return s[g.n(len(s))], true
}

func collect[T any](seq func(func(T) bool)) []T {
	var out []T
	for v := range seq {
		out = append(out, v)
	}
	return out
}

func (g *gen) replicas(max int) []int32 {
	n := 1 + g.n(max)
	out := make([]int32, 0, n)
	for _, b := range g.r.Perm(12)[:n] {
		out = append(out, int32(b))
	}
	return out
}

func (g *gen) subset(s []int32) []int32 {
	out := []int32{}
	for _, v := range s {
		if g.chance(70) {
			out = append(out, v)
		}
	}
	return out
}

func (g *gen) dirs(n int) [][16]byte {
	if g.chance(40) {
		return nil
	}
	out := make([][16]byte, n)
	for i := range out {
		out[i] = dir(byte(1 + g.n(40)))
	}
	return out
}

// start is the sequence's first records: metadata.version, and in safe mode
// ELR on.
func (g *gen) start() []metadata.Record {
	if g.safe {
		return []metadata.Record{mvRec(metadata.Level(30 + g.n(4))), feature(elrFeature, 1)}
	}
	return []metadata.Record{mvRec(metadata.Level(7 + g.n(27)))}
}

// record returns the next record against im (the state so far).
func (g *gen) record(im *Image) metadata.Record {
	brokers := collect(im.Brokers())
	topics := collect(im.Topics())
	switch k := g.n(100); {
	case k < 4:
		return g.feature()
	case k < 14:
		return g.registerBroker(brokers)
	case k < 26:
		return g.brokerChange(brokers)
	case k < 29:
		return g.controller(im)
	case k < 36:
		return g.topic(topics)
	case k < 56:
		return g.partition(topics)
	case k < 78:
		return g.partitionChange(topics)
	case k < 80:
		if t, ok := pick(g, topics); ok && g.chance(90) {
			return &metadata.RemoveTopicRecord{TopicId: t.id}
		}
		return &metadata.RemoveTopicRecord{TopicId: tid(byte(g.n(30)))}
	case k < 82:
		if t, ok := pick(g, topics); ok && g.chance(70) {
			return &metadata.ClearElrRecord{TopicName: t.name}
		}
		return &metadata.ClearElrRecord{TopicName: []string{"", "", "nope"}[g.n(3)]}
	case k < 97:
		return g.other(im)
	default:
		if g.safe {
			return &metadata.NoOpRecord{}
		}
		return g.randomContent()
	}
}

func (g *gen) feature() metadata.Record {
	if g.safe {
		return feature([]string{"group.version", "transaction.version", "streams.version"}[g.n(3)], int16(g.n(2)))
	}
	switch g.n(4) {
	case 0:
		return mvRec(metadata.Level(6 + g.n(29)))
	case 1:
		return feature(elrFeature, int16(g.n(2)))
	case 2:
		return feature("kraft.version", int16(g.n(3)))
	}
	return feature([]string{"group.version", "no.such.feature"}[g.n(2)], int16(g.n(3)))
}

func (g *gen) registerBroker(brokers []*Broker) metadata.Record {
	id := int32(g.n(12))
	r := registerBroker(id, int64(g.n(1000)))
	if b, ok := pick(g, brokers); ok && g.chance(30) {
		r.BrokerId = b.ID // a new incarnation
	}
	r.LogDirs = g.dirs(1 + g.n(2))
	r.Fenced, r.InControlledShutdown = g.chance(50), g.chance(10)
	if g.chance(30) {
		r.Rack = ptr(fmt.Sprint("rack", g.n(3)))
	}
	if g.chance(20) {
		r.CordonedLogDirs = [][16]byte{}
	}
	if g.chance(20) {
		r.EndPoints = append(r.EndPoints, metadata.RegisterBrokerRecordBrokerEndpoint{Name: "SSL", Host: "h", Port: 1, SecurityProtocol: int16(g.n(5))})
	}
	return r
}

func (g *gen) brokerChange(brokers []*Broker) metadata.Record {
	b, ok := pick(g, brokers)
	if !ok {
		return &metadata.FenceBrokerRecord{Id: 1, Epoch: 1}
	}
	epoch := b.Epoch
	if g.chance(5) {
		epoch++
	}
	switch g.n(10) {
	case 0:
		return &metadata.UnregisterBrokerRecord{BrokerId: b.ID, BrokerEpoch: epoch}
	case 1:
		return &metadata.FenceBrokerRecord{Id: b.ID, Epoch: epoch}
	case 2:
		return &metadata.UnfenceBrokerRecord{Id: b.ID, Epoch: epoch}
	}
	return regChange(b.ID, epoch, func(r *metadata.BrokerRegistrationChangeRecord) {
		r.Fenced = int8(g.n(3)) - 1
		r.InControlledShutdown = int8(g.n(2))
		if !g.safe && g.chance(3) {
			r.Fenced = 5
		}
		if g.chance(20) {
			r.LogDirs = g.dirs(1 + g.n(2))
		}
		if g.chance(20) {
			r.CordonedLogDirs = g.dirs(g.n(2))
		}
	})
}

func (g *gen) controller(im *Image) metadata.Record {
	id := int32(3000 + g.n(3))
	if g.chance(30) {
		return &metadata.UnregisterControllerRecord{ControllerId: id}
	}
	return &metadata.RegisterControllerRecord{ControllerId: id, IncarnationId: uuid.UUID{byte(g.n(9))},
		EndPoints: []metadata.RegisterControllerRecordControllerEndpoint{{Name: "CONTROLLER", Host: "c", Port: 9093}}}
}

func (g *gen) topic(topics []*Topic) metadata.Record {
	name := fmt.Sprintf("t%d%s", g.n(20), []string{"", ".x", "_x"}[g.n(3)])
	id := uuid.UUID{1, byte(g.n(256)), byte(g.n(256))}
	if t, ok := pick(g, topics); ok && g.chance(5) {
		id = t.id
	}
	return topic(name, id)
}

func (g *gen) partition(topics []*Topic) metadata.Record {
	t, ok := pick(g, topics)
	if !ok || g.chance(2) {
		return partition(tid(99), 0, []int32{1}, 1)
	}
	reps := g.replicas(4)
	r := partition(t.id, int32(g.n(6)), reps, -1)
	r.Isr = g.subset(reps)
	if len(r.Isr) > 0 && g.chance(90) {
		r.Leader = r.Isr[g.n(len(r.Isr))]
	}
	r.LeaderEpoch, r.PartitionEpoch = int32(g.n(5)), int32(g.n(5))
	r.Directories = g.dirs(len(reps))
	if g.chance(10) {
		r.AddingReplicas = g.subset(reps)
	}
	if g.chance(20) {
		r.EligibleLeaderReplicas, r.LastKnownElr = g.subset(reps), g.subset(reps)
	}
	if g.chance(5) {
		r.LeaderRecoveryState = 1
	}
	return r
}

func (g *gen) partitionChange(topics []*Topic) metadata.Record {
	t, ok := pick(g, topics)
	if !ok {
		return change(tid(99), 0, nil)
	}
	parts := collect(func(yield func(int32) bool) {
		for pid := range t.Partitions() {
			if !yield(pid) {
				return
			}
		}
	})
	pid, ok := pick(g, parts)
	if !ok || g.chance(2) {
		pid = 100
	}
	cur, _ := t.Partition(pid)
	return change(t.id, pid, func(r *metadata.PartitionChangeRecord) {
		var reps []int32
		if cur.v != nil {
			reps = cur.Replicas()
		}
		if g.chance(15) {
			reps = g.replicas(4)
			r.Replicas = reps
			if g.chance(70) {
				r.Directories = g.dirs(len(reps))
			}
		}
		if g.chance(50) {
			r.Isr = g.subset(reps)
		}
		if g.chance(50) && len(reps) > 0 {
			r.Leader = []int32{-1, reps[g.n(len(reps))], reps[0]}[g.n(3)]
		}
		if g.chance(10) {
			r.LeaderRecoveryState = int8(g.n(2))
		}
		if g.chance(20) {
			r.EligibleLeaderReplicas, r.LastKnownElr = g.subset(reps), g.subset(reps)
		}
		if g.chance(10) {
			r.Directories = g.dirs(len(reps))
		}
		if g.chance(5) {
			r.RemovingReplicas, r.AddingReplicas = g.subset(reps), []int32{}
		}
	})
}

func (g *gen) other(im *Image) metadata.Record {
	user := fmt.Sprint("u", g.n(4))
	switch g.n(8) {
	case 0:
		typ := []int8{topicResource, brokerResource, clientMetricsResource, groupResource, 1}[g.n(5)]
		res := []string{"t1", "", "1", fmt.Sprint("t", g.n(20))}[g.n(4)]
		name := []string{"retention.ms", "min.insync.replicas", "interval.ms", "consumer.session.timeout.ms", "bogus"}[g.n(5)]
		var v *string
		if g.chance(80) {
			v = ptr(fmt.Sprint(g.n(100)))
		}
		return config(typ, res, name, v)
	case 1:
		ent := []metadata.ClientQuotaRecordEntityData{{EntityType: "user", EntityName: ptr(user)}}
		if g.chance(50) {
			ent = append(ent, metadata.ClientQuotaRecordEntityData{EntityType: "client-id"})
		}
		return &metadata.ClientQuotaRecord{Entity: ent, Key: "producer_byte_rate", Value: float64(g.n(9)), Remove: g.chance(30)}
	case 2:
		next := im.NextProducerID() + int64(g.n(3000)) - 100
		return &metadata.ProducerIdsRecord{BrokerId: 1, BrokerEpoch: 1, NextProducerId: max(next, 0)}
	case 3:
		return &metadata.AccessControlEntryRecord{Id: uuid.UUID{7, byte(g.n(6))}, ResourceType: int8(g.n(9)), ResourceName: "r",
			PatternType: 3, Principal: "User:" + user, Host: "*", Operation: int8(g.n(17)), PermissionType: 3}
	case 4:
		return &metadata.RemoveAccessControlEntryRecord{Id: uuid.UUID{7, byte(g.n(6))}}
	case 5:
		if g.chance(30) {
			return &metadata.RemoveUserScramCredentialRecord{Name: user, Mechanism: int8(1 + g.n(2))}
		}
		return &metadata.UserScramCredentialRecord{Name: user, Mechanism: int8(1 + g.n(2)), Salt: []byte{byte(g.n(9))},
			StoredKey: []byte("k"), ServerKey: []byte("s"), Iterations: 4096}
	case 6:
		if g.chance(30) {
			return &metadata.RemoveDelegationTokenRecord{TokenId: user}
		}
		return &metadata.DelegationTokenRecord{TokenId: user, Owner: "User:" + user, Requester: "User:x", Renewers: []string{}, MaxTimestamp: int64(g.n(9))}
	}
	return &metadata.NoOpRecord{}
}

// randomContent is a record of a random replayable type with random fields,
// at its highest version.
func (g *gen) randomContent() metadata.Record {
	keys := metadata.APIKeys()
	for {
		rec, _ := metadata.New(keys[g.n(len(keys))])
		switch rec.(type) {
		case *metadata.BeginTransactionRecord, *metadata.EndTransactionRecord, *metadata.AbortTransactionRecord:
			continue
		}
		_, hi := rec.ValidVersions()
		metadatatest.Fill(g.r, rec, hi)
		return rec
	}
}
