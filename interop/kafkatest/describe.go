package kafkatest

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/admin"
)

// QuorumInfo is a leader's DescribeQuorum answer for its partition.
type QuorumInfo struct {
	LeaderID      int32
	LeaderEpoch   int32
	HighWatermark int64
	Voters        []kmsg.DescribeQuorumResponseTopicPartitionReplicaState
	Observers     []kmsg.DescribeQuorumResponseTopicPartitionReplicaState
}

// DescribeQuorum sends one DescribeQuorum for topic's partition 0 to addr (a leader
// answers; others answer NOT_LEADER_OR_FOLLOWER, returned as an error).
func DescribeQuorum(addr, topic string) (QuorumInfo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := admin.DescribeQuorumAt(ctx, addr, topic)
	if err != nil {
		return QuorumInfo{}, fmt.Errorf("kafkatest: DescribeQuorum %s: %w", addr, err)
	}
	p := resp.Topics[0].Partitions[0]
	return QuorumInfo{LeaderID: p.LeaderID, LeaderEpoch: p.LeaderEpoch, HighWatermark: p.HighWatermark,
		Voters: p.CurrentVoters, Observers: p.Observers}, nil
}
