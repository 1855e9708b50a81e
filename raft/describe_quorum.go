package raft

// DescribeQuorum (key 55): v0-v2.
//
// Behavior: no cluster id. Wrong topic/partition -> partition
// UNKNOWN_TOPIC_OR_PARTITION echoing the request; not leader -> partition
// NOT_LEADER_OR_FOLLOWER with the standard message and no leader info;
// leader -> NONE with leader id, epoch, HW (-1 until known), every voter
// (the leader included, both its timestamps "now") and the observers seen
// in the last 5 minutes. Timestamps are ms of the driver's clock; unknown
// values are -1.
//
// Version notes: v1 adds LastFetchTimestamp/LastCaughtUpTimestamp; v2 adds
// ErrorMessage, ReplicaDirectoryId and Nodes (each voter's listeners).

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
)

// describeQuorumAPI: a wrong topic or partition is answered by the handler.
var describeQuorumAPI = rpc[*kmsg.DescribeQuorumRequest, *kmsg.DescribeQuorumResponse]{
	versions: protocol.VersionRange{Min: 0, Max: 2},
	topError: func(r *kmsg.DescribeQuorumResponse) *int16 { return &r.ErrorCode },
	partitionError: func(r *kmsg.DescribeQuorumResponse) int16 {
		return protocol.FirstNonZero(r.Topics, func(t *kmsg.DescribeQuorumResponseTopic) []kmsg.DescribeQuorumResponseTopicPartition {
			return t.Partitions
		}, func(p *kmsg.DescribeQuorumResponseTopicPartition) int16 { return p.ErrorCode })
	},
	handle: (*Driver).handleDescribeQuorum,
}.register()

func (d *Driver) handleDescribeQuorum(now time.Time, req *kmsg.DescribeQuorumRequest, _ RequestRef) kmsg.Response {
	resp := kmsg.NewPtrDescribeQuorumResponse()
	if !d.isRaftPartition(shapeOf(false, req.Topics, func(t *kmsg.DescribeQuorumRequestTopic) (string, [16]byte, []kmsg.DescribeQuorumRequestTopicPartition) {
		return t.Topic, [16]byte{}, t.Partitions
	}, func(p *kmsg.DescribeQuorumRequestTopicPartition) int32 { return p.Partition })) {
		for _, rt := range req.Topics {
			t := kmsg.NewDescribeQuorumResponseTopic()
			t.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				p := kmsg.NewDescribeQuorumResponseTopicPartition()
				p.Partition = rp.Partition
				p.ErrorCode = errUnknownTopic
				p.LeaderID, p.LeaderEpoch, p.HighWatermark = -1, -1, -1
				t.Partitions = append(t.Partitions, p)
			}
			resp.Topics = append(resp.Topics, t)
		}
		return resp
	}
	t := kmsg.NewDescribeQuorumResponseTopic()
	t.Topic = d.cfg.TopicName
	p := kmsg.NewDescribeQuorumResponseTopicPartition()
	p.Partition = d.cfg.Partition
	l := d.asLeader()
	if l == nil {
		p.ErrorCode = errNotLeader
		msg := "The server is not the leader for that topic-partition."
		p.ErrorMessage = &msg
		p.LeaderID, p.LeaderEpoch, p.HighWatermark = -1, -1, -1
		t.Partitions = append(t.Partitions, p)
		resp.Topics = append(resp.Topics, t)
		return resp
	}
	p.LeaderID = int32(d.self())
	p.LeaderEpoch = int32(d.epoch)
	p.HighWatermark = l.highWatermark
	ms := func(t time.Time) int64 {
		if t.IsZero() {
			return -1
		}
		return t.UnixMilli()
	}
	state := func(r *replicaState) kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
		s := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		s.ReplicaID = int32(r.id)
		s.ReplicaDirectoryID = r.dir
		s.LogEndOffset = r.endOffset
		s.LastFetchTimestamp = ms(r.lastFetch)
		s.LastCaughtUpTimestamp = ms(r.lastCaughtUp)
		if r.id == d.self() {
			s.LogEndOffset = d.log.EndOffset().Offset
			s.LastFetchTimestamp, s.LastCaughtUpTimestamp = now.UnixMilli(), now.UnixMilli()
		}
		return s
	}
	for _, v := range d.voters.Nodes() {
		if r := l.voters[v.Key.ID]; r != nil {
			p.CurrentVoters = append(p.CurrentVoters, state(r))
		}
	}
	l.expireObservers(now, d.cfg.ObserverSession)
	ids := make([]int32, 0, len(l.observers))
	for id := range l.observers {
		ids = append(ids, int32(id))
	}
	slices.Sort(ids)
	for _, id := range ids {
		p.Observers = append(p.Observers, state(l.observers[NodeID(id)]))
	}
	if p.CurrentVoters == nil {
		p.CurrentVoters = []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{}
	}
	if p.Observers == nil {
		p.Observers = []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{}
	}
	t.Partitions = append(t.Partitions, p)
	resp.Topics = append(resp.Topics, t)
	for _, v := range d.voters.Nodes() {
		n := kmsg.NewDescribeQuorumResponseNode()
		n.NodeID = int32(v.Key.ID)
		eps := v.Endpoints
		if v.Key.ID == d.self() && len(d.cfg.Endpoints) > 0 {
			eps = d.cfg.Endpoints
		}
		for _, e := range eps {
			ln := kmsg.NewDescribeQuorumResponseNodeListener()
			ln.Name, ln.Host, ln.Port = e.Name, e.Host, uint16(e.Port)
			n.Listeners = append(n.Listeners, ln)
		}
		resp.Nodes = append(resp.Nodes, n)
	}
	return resp
}

// DescribeQuorum answers a DescribeQuorum request directly (for callers that
// serve it outside Step, e.g. an admin path). Same result as through Step.
func (d *Driver) DescribeQuorum(now time.Time, req *kmsg.DescribeQuorumRequest) *kmsg.DescribeQuorumResponse {
	resp := d.handleDescribeQuorum(now, req, nil).(*kmsg.DescribeQuorumResponse)
	resp.Version = req.Version
	return resp
}
