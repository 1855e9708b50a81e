package raft

// Every api the driver serves or sends has one registration, written beside
// its handler (voteAPI in vote.go, ...) and listed in apis below. The driver
// dispatches requests and responses by key through it; Apis hands the
// served ones' protocol descriptions to the node's table, so the versions a
// node advertises and decodes are the ones written here.
//
// A request goes through, in order: the edge checks its registration asks
// for (the cluster id, then the single-partition shape: Kafka's
// hasValidClusterId and RaftUtil.hasValidTopicPartition, answered at the
// top level), its own check (validate.go and the handler's file), then its
// handler. A response is checked (checkResponse), matched to the request
// it answers, then handed to onResponse; a request the transport could not
// complete goes to onSendError.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
)

// apis are the driver's registrations, one per api.
var apis = []*api{
	voteAPI, beginQuorumEpochAPI, endQuorumEpochAPI, fetchAPI, fetchSnapshotAPI, describeQuorumAPI,
	addRaftVoterAPI, removeRaftVoterAPI, updateRaftVoterAPI, updateFeaturesAPI, apiVersionsAPI,
}

// apiByKey indexes apis by key; it never changes after package initialization.
var apiByKey = func() (t [protocol.MaxKey]*api) {
	for _, a := range apis {
		t[a.Key] = a
	}
	return t
}()

// lookupAPI returns the registration of key, nil for an api the driver
// neither serves nor sends.
func lookupAPI(key int16) *api {
	if key < 0 || key >= protocol.MaxKey {
		return nil
	}
	return apiByKey[key]
}

// Apis returns the protocol registrations of the apis the driver serves
// (those whose requests Step takes), for the node's api table.
func Apis() []protocol.Api {
	var out []protocol.Api
	for _, a := range apis {
		if a.handle != nil {
			out = append(out, a.Api)
		}
	}
	return out
}

// api is an api's registration in the driver.
type api struct {
	protocol.Api
	// checkClusterID: a request whose cluster id is not this cluster's is
	// refused at the edge (top-level INCONSISTENT_CLUSTER_ID).
	checkClusterID bool
	// partition reads the request's topic and partition for the shape
	// check; when set, a request not naming exactly the raft partition is
	// refused at the edge (top-level INVALID_REQUEST). Nil: the api has
	// its own rule (FetchSnapshot, DescribeQuorum) or names no partition.
	partition func(kmsg.Request) partitionShape
	// check refuses a request whose fields fail the api's range checks.
	check func(*Driver, kmsg.Request) *refusal
	// handle answers a request that passed the checks; nil when answered
	// later (parked, or waiting for a commit) or nothing may be
	// acknowledged (d.fatal). Nil handle: the driver does not serve the api.
	handle func(*Driver, time.Time, kmsg.Request, RequestRef) kmsg.Response
	// answer is the answer with the raft partition's error code, for a
	// request its check refused below the top level.
	answer func(*Driver, kmsg.Request, int16) kmsg.Response
	// checkResponse says why a response cannot be used, or "".
	checkResponse func(kmsg.Response) string
	// onResponse handles the answer to a request the driver sent; false
	// makes its destination back off.
	onResponse func(*Driver, time.Time, pending, kmsg.Response) bool
	// onSendError handles a request the transport could not complete
	// (nil: requestFailed); false makes its destination back off.
	onSendError func(*Driver, time.Time, pending, error) bool
}

// rpc is a registration written with the api's own message types;
// register turns it into an api (the key is the types').
type rpc[Req kmsg.Request, Resp kmsg.Response] struct {
	versions       protocol.VersionRange
	clusterID      func(Req) *string
	topError       func(Resp) *int16
	partitionError func(Resp) int16
	checkClusterID bool
	partition      func(Req) partitionShape
	check          func(*Driver, Req) *refusal
	handle         func(*Driver, time.Time, Req, RequestRef) kmsg.Response
	answer         func(*Driver, Req, int16) Resp
	checkResponse  func(Resp) string
	onResponse     func(*Driver, time.Time, pending, Resp) bool
	onSendError    func(*Driver, time.Time, pending, error) bool
}

// register builds the registration. The driver looks an api up by the
// message's own key, so the type assertions below cannot fail.
func (r rpc[Req, Resp]) register() *api {
	a := &api{
		Api: protocol.Typed[Req, Resp]{Versions: r.versions, ClusterID: r.clusterID, TopError: r.topError,
			PartitionError: r.partitionError}.Api(),
		checkClusterID: r.checkClusterID,
		onSendError:    r.onSendError,
	}
	if f := r.partition; f != nil {
		a.partition = func(req kmsg.Request) partitionShape { return f(req.(Req)) }
	}
	if f := r.check; f != nil {
		a.check = func(d *Driver, req kmsg.Request) *refusal { return f(d, req.(Req)) }
	}
	if f := r.handle; f != nil {
		a.handle = func(d *Driver, now time.Time, req kmsg.Request, ref RequestRef) kmsg.Response {
			return f(d, now, req.(Req), ref)
		}
	}
	if f := r.answer; f != nil {
		a.answer = func(d *Driver, req kmsg.Request, code int16) kmsg.Response { return f(d, req.(Req), code) }
	}
	if f := r.checkResponse; f != nil {
		a.checkResponse = func(resp kmsg.Response) string { return f(resp.(Resp)) }
	}
	if f := r.onResponse; f != nil {
		a.onResponse = func(d *Driver, now time.Time, p pending, resp kmsg.Response) bool {
			return f(d, now, p, resp.(Resp))
		}
	}
	return a
}

// partitionShape is what the single-partition check reads of a raft
// message: how many topics it names and, of the first, its name (or id),
// how many partitions it names and the first one's index.
type partitionShape struct {
	topics     int
	byID       bool     // the api names topics by id (Fetch v13+)
	topic      string   // by name
	topicID    [16]byte // by id
	partitions int
	partition  int32 // -1 when there is none
}

// shapeOf reads the shape of a message's topics: topic gives a topic's
// name, id and partitions, index a partition's index.
func shapeOf[T, P any](byID bool, topics []T, topic func(*T) (string, [16]byte, []P), index func(*P) int32) partitionShape {
	s := partitionShape{topics: len(topics), byID: byID, partition: -1}
	if len(topics) > 0 {
		var ps []P
		s.topic, s.topicID, ps = topic(&topics[0])
		s.partitions = len(ps)
		if len(ps) > 0 {
			s.partition = index(&ps[0])
		}
	}
	return s
}

// isRaftPartition is Kafka's RaftUtil.hasValidTopicPartition: the message
// names exactly one topic and one partition, the raft partition.
func (d *Driver) isRaftPartition(s partitionShape) bool {
	if s.topics != 1 || s.partitions != 1 || s.partition != d.cfg.Partition {
		return false
	}
	if s.byID {
		return s.topicID == d.cfg.TopicID
	}
	return s.topic == d.cfg.TopicName
}
