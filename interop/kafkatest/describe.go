package kafkatest

import (
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
)

// QuorumInfo is a leader's DescribeQuorum v2 answer for its partition.
type QuorumInfo struct {
	LeaderID      int32
	LeaderEpoch   int32
	HighWatermark int64
	Voters        []kmsg.DescribeQuorumResponseTopicPartitionReplicaState
	Observers     []kmsg.DescribeQuorumResponseTopicPartitionReplicaState
}

// DescribeQuorum sends one DescribeQuorum v2 for topic's partition 0 to addr (a leader
// answers; others answer NOT_LEADER_OR_FOLLOWER, returned as an error).
func DescribeQuorum(addr, topic string) (QuorumInfo, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return QuorumInfo{}, fmt.Errorf("kafkatest: DescribeQuorum %s: %w", addr, err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return QuorumInfo{}, err
	}
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.SetVersion(2)
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = topic
	rt.Partitions = append(rt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	client := "kraftd-kafkatest"
	if _, err := c.Write(protocol.AppendRequest(nil, 1, &client, req)); err != nil {
		return QuorumInfo{}, fmt.Errorf("kafkatest: DescribeQuorum %s: %w", addr, err)
	}
	frame, err := protocol.ReadFrame(c, protocol.DefaultMaxFrameSize, nil)
	if err != nil {
		return QuorumInfo{}, fmt.Errorf("kafkatest: DescribeQuorum %s: %w", addr, err)
	}
	r, err := protocol.ParseResponse(frame, req.Key(), req.GetVersion())
	if err != nil {
		return QuorumInfo{}, fmt.Errorf("kafkatest: DescribeQuorum %s: %w", addr, err)
	}
	resp := r.(*kmsg.DescribeQuorumResponse)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return QuorumInfo{}, fmt.Errorf("kafkatest: DescribeQuorum %s: error %d, %d topics", addr, resp.ErrorCode, len(resp.Topics))
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		return QuorumInfo{}, fmt.Errorf("kafkatest: DescribeQuorum %s: partition error %d", addr, p.ErrorCode)
	}
	return QuorumInfo{LeaderID: p.LeaderID, LeaderEpoch: p.LeaderEpoch, HighWatermark: p.HighWatermark,
		Voters: p.CurrentVoters, Observers: p.Observers}, nil
}
