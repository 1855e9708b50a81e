package raft_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/topics"
	"github.com/kraftd/kraftd/uuid"
)

// The driver serves the raft apis of a Kafka controller's listener, each
// registered once at versions kmsg can encode.
func TestApisRegistered(t *testing.T) {
	tbl, err := protocol.NewTable(raft.Apis())
	if err != nil {
		t.Fatal(err)
	}
	want := []int16{int16(kmsg.Fetch), int16(kmsg.Vote), int16(kmsg.BeginQuorumEpoch), int16(kmsg.EndQuorumEpoch),
		int16(kmsg.DescribeQuorum), int16(kmsg.UpdateFeatures), int16(kmsg.FetchSnapshot), int16(kmsg.AddRaftVoter),
		int16(kmsg.RemoveRaftVoter), int16(kmsg.UpdateRaftVoter)}
	slices.Sort(want)
	if got := tbl.Keys(); !slices.Equal(got, want) {
		t.Fatalf("driver serves %v, want %v", got, want)
	}
	// Every served api is answered: a default request gets a reply of its
	// own api (or is held, as a voter change to a non-leader is not).
	c := newCtx(t, 1, withPreVote(false))
	for _, a := range tbl.Apis() {
		req := kmsg.RequestForKey(int16(a.Key))
		req.SetVersion(a.Versions.Max)
		if resp := c.request(req); resp == nil || resp.Key() != req.Key() {
			t.Errorf("%s: answered %v", a.Name(), resp)
		}
	}
}

// shape is a request's topics and partitions for TestShapeRefused.
type shape struct {
	topics, partitions int
	topic              string   // every topic's name ("" for the raft topic)
	topicID            [16]byte // every topic's id (zero for the raft topic's)
	partition          int32
}

// shapedRequest is a request of the api at version v naming the topics and
// partitions of s, other fields zero; ok is false for an api whose request
// names no topics. Every raft api names them alike: Topics, each with Topic
// (and TopicID for Fetch) and Partitions, each with Partition.
func shapedRequest(key, v int16, s shape) (req kmsg.Request, ok bool) {
	req = kmsg.RequestForKey(key)
	req.SetVersion(v)
	topicsField := reflect.ValueOf(req).Elem().FieldByName("Topics")
	if !topicsField.IsValid() {
		return nil, false
	}
	name, id := s.topic, s.topicID
	if name == "" {
		name = topics.ClusterMetadata
	}
	if id == ([16]byte{}) {
		id = [16]byte(uuid.MetadataTopicID)
	}
	for range s.topics {
		t := reflect.New(topicsField.Type().Elem()).Elem()
		t.FieldByName("Topic").SetString(name)
		if f := t.FieldByName("TopicID"); f.IsValid() {
			f.Set(reflect.ValueOf(id))
		}
		parts := t.FieldByName("Partitions")
		for range s.partitions {
			p := reflect.New(parts.Type().Elem()).Elem()
			p.FieldByName("Partition").SetInt(int64(s.partition))
			parts.Set(reflect.Append(parts, p))
		}
		topicsField.Set(reflect.Append(topicsField, t))
	}
	return req, true
}

// partitionCodes are the error codes of every partition of a raft answer.
func partitionCodes(resp kmsg.Response) []int16 {
	var codes []int16
	topicsField := reflect.ValueOf(resp).Elem().FieldByName("Topics")
	for i := range topicsField.Len() {
		parts := topicsField.Index(i).FieldByName("Partitions")
		for j := range parts.Len() {
			codes = append(codes, int16(parts.Index(j).FieldByName("ErrorCode").Int()))
		}
	}
	return codes
}

// Kafka's RaftUtil.hasValidTopicPartition, once for every raft api: a
// request naming no topic or partition, two of either, or another topic or
// partition is refused, at the top level (INVALID_REQUEST) or for each
// partition it names (UNKNOWN_TOPIC_OR_PARTITION, FetchSnapshot and
// DescribeQuorum as Kafka), and never served; one naming exactly the raft
// partition gets past the check.
func TestShapeRefused(t *testing.T) {
	tbl := protocol.MustTable(raft.Apis())
	c := newCtx(t, 1, withPreVote(false))
	c.electLocal()
	checked := 0
	for _, a := range tbl.Apis() {
		refused := func(s shape) (bool, string) {
			req, ok := shapedRequest(int16(a.Key), a.Versions.Max, s)
			if !ok {
				return true, ""
			}
			resp := c.request(req)
			if resp == nil {
				return false, "no answer"
			}
			if tbl.TopError(resp) == kerr.InvalidRequest.Code {
				return true, "top-level INVALID_REQUEST"
			}
			codes := partitionCodes(resp)
			for _, code := range codes {
				if code != kerr.UnknownTopicOrPartition.Code {
					return false, fmt.Sprintf("partition codes %v", codes)
				}
			}
			return true, "UNKNOWN_TOPIC_OR_PARTITION"
		}
		if _, ok := shapedRequest(int16(a.Key), a.Versions.Max, shape{}); !ok {
			continue
		}
		checked++
		for _, s := range []shape{
			{topics: 0}, {topics: 1, partitions: 0}, {topics: 2, partitions: 1}, {topics: 1, partitions: 2},
			{topics: 2, partitions: 2}, {topics: 1, partitions: 1, partition: 1},
			{topics: 1, partitions: 1, topic: "other", topicID: [16]byte{9}},
		} {
			if ok, how := refused(s); !ok {
				t.Errorf("%s with %+v: not refused (%s)", a.Name(), s, how)
			}
		}
		if ok, how := refused(shape{topics: 1, partitions: 1}); ok {
			t.Errorf("%s naming the raft partition refused: %s", a.Name(), how)
		}
	}
	if checked != 6 {
		t.Errorf("%d apis name topics, want 6 (Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch, FetchSnapshot, DescribeQuorum)", checked)
	}
}
