package kafkatest

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/admin"
	"github.com/kraftd/kraftd/security"
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
	return DescribeQuorumSecure(addr, topic, nil)
}

// DescribeQuorumSecure is DescribeQuorum over TLS and SASL as sec says (nil: plaintext).
func DescribeQuorumSecure(addr, topic string, sec *security.ClientSide) (QuorumInfo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := admin.DescribeQuorumAt(admin.WithSecurity(ctx, sec), addr, topic)
	if err != nil {
		return QuorumInfo{}, fmt.Errorf("kafkatest: DescribeQuorum %s: %w", addr, err)
	}
	p := resp.Topics[0].Partitions[0]
	return QuorumInfo{LeaderID: p.LeaderID, LeaderEpoch: p.LeaderEpoch, HighWatermark: p.HighWatermark,
		Voters: p.CurrentVoters, Observers: p.Observers}, nil
}

// WaitQuorum polls the leader at addr with DescribeQuorum for topic until ok accepts the
// answer or timeout passes; the error then tells the last answer or failure.
func WaitQuorum(addr, topic string, timeout time.Duration, ok func(QuorumInfo) bool) (QuorumInfo, error) {
	deadline := time.Now().Add(timeout)
	for {
		q, err := DescribeQuorum(addr, topic)
		if err == nil && ok(q) {
			return q, nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return q, fmt.Errorf("kafkatest: quorum at %s not as wanted after %v: %w", addr, timeout, err)
			}
			return q, fmt.Errorf("kafkatest: quorum at %s not as wanted after %v: last answer %+v", addr, timeout, q)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
