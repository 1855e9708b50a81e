package admin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/topics"
)

// Quorum is what DescribeQuorum learned: the cluster id from
// DescribeCluster and the leader's DescribeQuorum answer for
// __cluster_metadata-0.
type Quorum struct {
	ClusterID string
	Partition kmsg.DescribeQuorumResponseTopicPartition
	Nodes     []kmsg.DescribeQuorumResponseNode // endpoints of voters and observers
}

// DescribeQuorum does what `kafka-metadata-quorum describe` does. With
// bootstrap controllers: DescribeCluster (controller endpoint type) to one
// to learn the cluster id and the leader, then DescribeQuorum to the
// leader. With bootstrap brokers: both to the broker, which forwards
// DescribeQuorum to the active controller. It asks the bootstrap addresses
// in turn and retries, with backoff, until an answer or ctx ends (the
// leader may be unknown during an election); errors that a retry cannot
// fix end it at once.
func DescribeQuorum(ctx context.Context, b Bootstrap) (*Quorum, error) {
	if len(b.Addrs) == 0 {
		return nil, errors.New("admin: describe quorum: no bootstrap address")
	}
	var q *Quorum
	err := withRetries(ctx, "describe quorum: ", func(n int) (retry bool, err error) {
		q, retry, err = describeOnce(ctx, b.Addrs[n%len(b.Addrs)], b.Brokers)
		return retry, err
	})
	return q, err
}

// describeOnce asks one bootstrap address for the cluster (and a bootstrap
// controller for the leader) and then the leader, or the broker, for the
// quorum; retry tells whether another attempt may succeed.
func describeOnce(ctx context.Context, addr string, broker bool) (q *Quorum, retry bool, err error) {
	var dc *kmsg.DescribeClusterResponse
	target := addr
	if broker {
		dc, retry, err = describeCluster(ctx, addr, 1)
	} else {
		dc, target, retry, err = findLeader(ctx, addr)
	}
	if err != nil {
		return nil, retry, err
	}
	dq, err := DescribeQuorumAt(ctx, target, topics.ClusterMetadata)
	if err != nil {
		err = fmt.Errorf("DescribeQuorum to %s: %w", target, err)
		var ke *kerr.Error
		if errors.As(err, &ke) && !kerr.IsRetriable(ke) && ke != kerr.NotLeaderForPartition {
			return nil, false, err
		}
		return nil, !errors.Is(err, errMalformed), err
	}
	return &Quorum{ClusterID: dc.ClusterID, Partition: dq.Topics[0].Partitions[0], Nodes: dq.Nodes}, false, nil
}

// describeCluster sends DescribeCluster for endpointType (1 brokers, 2
// controllers) to addr.
func describeCluster(ctx context.Context, addr string, endpointType int8) (dc *kmsg.DescribeClusterResponse, retry bool, err error) {
	req := kmsg.NewPtrDescribeClusterRequest()
	req.EndpointType = endpointType
	resp, err := Request(ctx, addr, req)
	if err != nil {
		return nil, true, fmt.Errorf("DescribeCluster to %s: %w", addr, err)
	}
	dc = resp.(*kmsg.DescribeClusterResponse)
	if err := kerr.ErrorForCode(dc.ErrorCode); err != nil {
		// A controller answers UNSUPPORTED_VERSION until its quorum's first
		// active controller committed a metadata.version: a moment after a
		// new cluster's first election, worth waiting for.
		retry := kerr.IsRetriable(err) || (dc.ErrorCode == kerr.UnsupportedVersion.Code &&
			dc.ErrorMessage != nil && strings.Contains(*dc.ErrorMessage, "no finalized MetadataVersion"))
		return nil, retry, fmt.Errorf("DescribeCluster to %s: %w%s", addr, err, errMsg(dc.ErrorMessage))
	}
	if dc.Version >= 1 && dc.EndpointType != endpointType {
		return nil, false, fmt.Errorf("DescribeCluster to %s: endpoint type %d, want %d: %w", addr, dc.EndpointType, endpointType, kerr.MismatchedEndpointType)
	}
	return dc, false, nil
}

// findLeader sends DescribeCluster for controllers to addr and returns the
// answer and the leader's address.
func findLeader(ctx context.Context, addr string) (dc *kmsg.DescribeClusterResponse, leaderAddr string, retry bool, err error) {
	if dc, retry, err = describeCluster(ctx, addr, 2); err != nil {
		return nil, "", retry, err
	}
	if dc.ControllerID < 0 {
		return nil, "", true, fmt.Errorf("DescribeCluster to %s: no leader known yet", addr)
	}
	for _, b := range dc.Brokers {
		if b.NodeID == dc.ControllerID {
			leaderAddr = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
		}
	}
	if leaderAddr == "" {
		return nil, "", true, fmt.Errorf("DescribeCluster to %s: leader %d has no endpoint in the answer", addr, dc.ControllerID)
	}
	return dc, leaderAddr, false, nil
}

// errMalformed marks an answer that does not describe the one partition
// asked for.
var errMalformed = errors.New("admin: the answer does not describe the one partition asked for")

// DescribeQuorumAt sends one DescribeQuorum for topic's partition 0 to addr.
// Only the leader answers without error; a Kafka error in the answer (as
// NOT_LEADER_OR_FOLLOWER from a follower) is returned as a *kerr.Error. On
// success the response holds exactly that one partition.
func DescribeQuorumAt(ctx context.Context, addr, topic string) (*kmsg.DescribeQuorumResponse, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	t := kmsg.NewDescribeQuorumRequestTopic()
	t.Topic = topic
	t.Partitions = append(t.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, t)
	resp, err := Request(ctx, addr, req)
	if err != nil {
		return nil, err
	}
	dq := resp.(*kmsg.DescribeQuorumResponse)
	if err := kerr.ErrorForCode(dq.ErrorCode); err != nil {
		return nil, fmt.Errorf("%w%s", err, errMsg(dq.ErrorMessage))
	}
	if len(dq.Topics) != 1 || len(dq.Topics[0].Partitions) != 1 || dq.Topics[0].Topic != topic {
		return nil, fmt.Errorf("%w: %s-0", errMalformed, topic)
	}
	p := dq.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return nil, fmt.Errorf("%w%s", err, errMsg(p.ErrorMessage))
	}
	return dq, nil
}

func errMsg(p *string) string {
	if p == nil || *p == "" {
		return ""
	}
	return ": " + *p
}
