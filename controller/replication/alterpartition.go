package replication

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/configs"
	"github.com/kraftd/kraftd/controller/partitionchange"
	"github.com/kraftd/kraftd/controller/placement"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// CheckBrokerEpoch is ClusterControlManager.checkBrokerEpoch: the broker is
// registered with this epoch, else STALE_BROKER_EPOCH.
func CheckBrokerEpoch(im *image.Image, broker int32, epoch int64) *Error {
	b, ok := im.Broker(broker)
	if !ok {
		return &Error{Code: kerr.StaleBrokerEpoch.Code, Message: sprintf("No broker registration found for broker id %d", broker)}
	}
	if b.Epoch != epoch {
		return &Error{Code: kerr.StaleBrokerEpoch.Code, Message: sprintf("Expected broker epoch %d, but got broker epoch %d", b.Epoch, epoch)}
	}
	return nil
}

// AlterPartition answers a partition leader's ISR change (api 56, v2-3) as
// ReplicationControlManager.alterPartition does: a stale broker epoch fails
// the request (the top-level error); each partition is validated in Kafka's
// order and, if it passes, changed through the partition change builder.
// The answer holds each partition's state after its change. The result is
// not atomic.
func AlterPartition(op Op, req *kmsg.AlterPartitionRequest) Result[*kmsg.AlterPartitionResponse] {
	im := op.Image
	resp := kmsg.NewPtrAlterPartitionResponse()
	resp.Version = req.Version
	if len(req.Topics) == 0 {
		// QuorumController answers an empty request itself, before the
		// broker epoch is checked.
		return Result[*kmsg.AlterPartitionResponse]{Response: resp}
	}
	if err := CheckBrokerEpoch(im, req.BrokerID, req.BrokerEpoch); err != nil {
		resp.ErrorCode = err.Code
		return Result[*kmsg.AlterPartitionResponse]{Response: resp}
	}
	var recs []Record
	for _, td := range req.Topics {
		rt := kmsg.NewAlterPartitionResponseTopic()
		rt.TopidID = td.TopicID
		t, ok := im.Topic(td.TopicID)
		if !ok || uuid.UUID(td.TopicID) == (uuid.UUID{}) {
			for _, pd := range td.Partitions {
				rp := kmsg.NewAlterPartitionResponseTopicPartition()
				rp.Partition = pd.Partition
				rp.ErrorCode = kerr.UnknownTopicID.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		unclean := configs.UncleanLeaderElection(configs.TopicLayers(im, op.Settings.Static, op.Settings.NodeID, t.Name()))
		for _, pd := range td.Partitions {
			rp := kmsg.NewAlterPartitionResponseTopicPartition()
			rp.Partition = pd.Partition
			states := pd.NewEpochISR
			if req.Version < 3 {
				states = make([]kmsg.AlterPartitionRequestTopicPartitionNewEpochISR, len(pd.NewISR))
				for i, b := range pd.NewISR {
					states[i] = kmsg.AlterPartitionRequestTopicPartitionNewEpochISR{BrokerID: b, BrokerEpoch: -1}
				}
			}
			p, ok := t.Partition(pd.Partition)
			if code := validateAlterPartition(im, req.BrokerID, p, ok, pd, states); code != 0 {
				rp.ErrorCode = code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			isr := make([]int32, len(states))
			for i, s := range states {
				isr[i] = s.BrokerID
			}
			cur := partitionchange.FromImage(p)
			b := partitionchange.New(cur, changeContext(op, t, pd.Partition, cur, nil))
			if unclean {
				b.SetElection(partitionchange.Unclean)
			}
			b.SetTargetISR(isr).SetTargetLeaderRecoveryState(pd.LeaderRecoveryState)
			rec, version, err := b.Build()
			after := state{leader: p.Leader(), leaderEpoch: p.LeaderEpoch(), partitionEpoch: p.PartitionEpoch(),
				isr: slices.Clone(p.ISR()), lrs: p.LeaderRecoveryState()}
			if err != nil {
				// Only inputs Kafka throws on reach here (a broker listed
				// twice in the replicas cannot pass validation).
				rp.ErrorCode = kerr.UnknownServerError.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			if rec != nil {
				recs = append(recs, Record{rec, version})
				after = after.merge(rec)
				if rec.Leader != req.BrokerID && rec.Leader != partitionchange.NoLeaderChange {
					// Only a completed reassignment moves the leader: the
					// change is written and the sender told to refresh.
					rp.ErrorCode = kerr.NewLeaderElected.Code
					rt.Partitions = append(rt.Partitions, rp)
					continue
				}
			}
			rp.LeaderID = after.leader
			rp.ISR = after.isr
			rp.LeaderRecoveryState = after.lrs
			rp.LeaderEpoch = after.leaderEpoch
			rp.PartitionEpoch = after.partitionEpoch
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return Result[*kmsg.AlterPartitionResponse]{Records: recs, Response: resp}
}

// state is what AlterPartition answers of a partition.
type state struct {
	leader, leaderEpoch, partitionEpoch int32
	isr                                 []int32
	lrs                                 int8
}

// merge is PartitionRegistration.merge for the answered fields: a named
// leader (even the same one) bumps the leader epoch, every change the
// partition epoch.
func (s state) merge(r *metadata.PartitionChangeRecord) state {
	if r.Leader != partitionchange.NoLeaderChange {
		s.leader = r.Leader
		s.leaderEpoch++
	}
	if r.Isr != nil {
		s.isr = slices.Clone(r.Isr)
	}
	if r.LeaderRecoveryState != -1 {
		s.lrs = r.LeaderRecoveryState
	}
	s.partitionEpoch++
	return s
}

// validateAlterPartition is validateAlterPartitionData: Kafka's checks in
// its order; 0 when the change may go ahead.
func validateAlterPartition(im *image.Image, broker int32, p image.Partition, exists bool,
	pd kmsg.AlterPartitionRequestTopicPartition, states []kmsg.AlterPartitionRequestTopicPartitionNewEpochISR) int16 {
	switch {
	case !exists:
		return kerr.UnknownTopicOrPartition.Code
	case pd.LeaderEpoch > p.LeaderEpoch(), pd.PartitionEpoch > p.PartitionEpoch():
		// The sender saw newer metadata: this controller is likely no
		// longer active.
		return kerr.NotController.Code
	case pd.LeaderEpoch < p.LeaderEpoch():
		return kerr.FencedLeaderEpoch.Code
	case broker != p.Leader():
		return kerr.InvalidRequest.Code
	case pd.PartitionEpoch < p.PartitionEpoch():
		return kerr.InvalidUpdateVersion.Code
	}
	isr := make([]int32, len(states))
	for i, s := range states {
		isr[i] = s.BrokerID
	}
	if !validISR(p.Replicas(), isr) || !slices.Contains(isr, p.Leader()) {
		return kerr.InvalidRequest.Code
	}
	switch pd.LeaderRecoveryState {
	case partitionchange.Recovered, partitionchange.Recovering:
	default:
		// Kafka's LeaderRecoveryState.of throws here, failing the whole
		// request with an unexpected error; kraftd refuses the partition.
		return kerr.InvalidRequest.Code
	}
	if pd.LeaderRecoveryState == partitionchange.Recovering && len(isr) > 1 {
		return kerr.InvalidRequest.Code
	}
	if p.LeaderRecoveryState() == partitionchange.Recovered && pd.LeaderRecoveryState == partitionchange.Recovering {
		return kerr.InvalidRequest.Code
	}
	for _, s := range states {
		b, ok := im.Broker(s.BrokerID)
		if !ok || b.InControlledShutdown || b.Fenced || s.BrokerEpoch != -1 && s.BrokerEpoch != b.Epoch {
			return kerr.IneligibleReplica.Code
		}
	}
	return 0
}

// validISR is Replicas.validateIsr: no broker twice, none negative, all
// replicas.
func validISR(replicas, isr []int32) bool {
	seen := make(map[int32]bool, len(isr))
	for _, b := range isr {
		if b < 0 || seen[b] || !slices.Contains(replicas, b) {
			return false
		}
		seen[b] = true
	}
	return true
}

// topicMinISR is getTopicEffectiveMinIsr: the effective
// min.insync.replicas capped at partition 0's replication factor. A value
// Kafka could not parse (it would throw) counts as 1.
func topicMinISR(t *image.Topic, l configs.Layers) int {
	rf := 0
	if p, ok := t.Partition(0); ok {
		rf = len(p.Replicas())
	}
	n, ok := configs.EffectiveMinIsr(l, rf)
	if !ok {
		return min(1, rf)
	}
	return int(n)
}

func defaultDir(im *image.Image) func(int32) uuid.UUID {
	return func(id int32) uuid.UUID {
		b, _ := im.Broker(id)
		return placement.DefaultDir(b)
	}
}
