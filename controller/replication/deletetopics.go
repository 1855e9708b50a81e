package replication

import (
	"encoding/binary"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/internal/jvmorder"
	"github.com/kraftd/kraftd/controller/placement"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// Kafka's default messages of the errors these operations answer without
// one of their own (Errors.message()).
const (
	msgUnknownTopicOrPartition = "This server does not host this topic-partition."
	msgUnknownTopicID          = "This server does not host this topic ID."
)

// DeleteTopics answers a DeleteTopics request (api 20) as ControllerApis
// and ReplicationControlManager.deleteTopics do, the caller having checked
// authorization (cluster-wide here): names and ids are resolved in
// committed (Kafka resolves them at the last committed offset), duplicates
// and inconsistent entries refused, and each topic still in the working
// image gets a RemoveTopicRecord. The records are atomic. Kafka shuffles
// the answers (so their positions say nothing); shuffle, when not nil,
// draws that shuffle (a JVM uses an unseeded Random).
func DeleteTopics(op Op, committed *image.Image, req *kmsg.DeleteTopicsRequest, shuffle placement.Random) Result[*kmsg.DeleteTopicsResponse] {
	resp := kmsg.NewPtrDeleteTopicsResponse()
	resp.Version = req.Version
	type entry struct {
		name *string
		id   uuid.UUID
	}
	var asked []entry
	for _, n := range req.TopicNames {
		asked = append(asked, entry{strp(n), uuid.UUID{}})
	}
	if req.Version >= 6 {
		asked = asked[:0]
		for _, t := range req.Topics {
			asked = append(asked, entry{t.Topic, t.TopicID})
		}
	}
	// A request that fails whole answers each topic of the request with
	// the code alone (DeleteTopicsRequest.getErrorResponse).
	failed := func(code int16) Result[*kmsg.DeleteTopicsResponse] {
		resp.Topics = resp.Topics[:0]
		for _, e := range asked {
			r := kmsg.NewDeleteTopicsResponseTopic()
			r.Topic, r.TopicID, r.ErrorCode = e.name, e.id, code
			resp.Topics = append(resp.Topics, r)
		}
		return Result[*kmsg.DeleteTopicsResponse]{Atomic: true, Response: resp}
	}
	if !op.Settings.DeleteTopicEnable {
		if req.Version < 3 {
			return failed(kerr.InvalidRequest.Code)
		}
		return failed(kerr.TopicDeletionDisabled.Code)
	}
	add := func(name *string, id uuid.UUID, code int16, msg *string) {
		r := kmsg.NewDeleteTopicsResponseTopic()
		r.Topic, r.TopicID, r.ErrorCode, r.ErrorMessage = name, id, code, msg
		resp.Topics = append(resp.Topics, r)
	}

	// The HashSets of ControllerApis, in their iteration orders.
	names, dupNames := newStringSet(), newStringSet()
	ids, dupIDs := newUUIDSet(), newUUIDSet()
	addName := func(n string) {
		if dupNames.has(n) || names.has(n) {
			dupNames.add(n)
			names.remove(n)
			return
		}
		names.add(n)
	}
	for _, n := range req.TopicNames {
		if req.Version < 6 {
			addName(n)
		}
	}
	for _, t := range req.Topics {
		if req.Version < 6 {
			break
		}
		switch {
		case t.Topic == nil && t.TopicID == [16]byte{}:
			add(nil, uuid.UUID{}, kerr.InvalidRequest.Code, strp("Neither topic name nor id were specified."))
		case t.Topic == nil:
			if dupIDs.has(t.TopicID) || ids.has(t.TopicID) {
				dupIDs.add(t.TopicID)
				ids.remove(t.TopicID)
			} else {
				ids.add(t.TopicID)
			}
		case t.TopicID == [16]byte{}:
			addName(*t.Topic)
		default:
			add(t.Topic, t.TopicID, kerr.InvalidRequest.Code, strp("You may not specify both topic name and topic id."))
		}
	}
	for _, n := range dupNames.keys() {
		add(strp(n), uuid.UUID{}, kerr.InvalidRequest.Code, strp("Duplicate topic name."))
	}
	for _, id := range dupIDs.keys() {
		add(nil, id, kerr.InvalidRequest.Code, strp("Duplicate topic id."))
	}

	// Ids to names, then names to ids, at the committed image.
	idToName := newUUIDSet()
	nameOf := map[uuid.UUID]string{}
	// Kafka's lookups answer in HashMaps sized for their inputs, and
	// ControllerApis takes the answers in those maps' order.
	for _, id := range resized(ids.keys(), uuidHash) {
		t, ok := committed.Topic(id)
		if !ok {
			add(nil, id, kerr.UnknownTopicID.Code, strp(msgUnknownTopicID))
			continue
		}
		idToName.add(id)
		nameOf[id] = t.Name()
	}
	for _, n := range resized(names.keys(), jvmorder.StringHash) {
		t, ok := committed.TopicByName(n)
		if !ok {
			add(strp(n), uuid.UUID{}, kerr.UnknownTopicOrPartition.Code, strp(msgUnknownTopicOrPartition))
			continue
		}
		id := t.ID()
		if dupIDs.has(id) || idToName.has(id) {
			dupIDs.add(id)
			idToName.remove(id)
			add(strp(n), id, kerr.InvalidRequest.Code, strp("The provided topic name maps to an ID that was already supplied."))
			continue
		}
		idToName.add(id)
		nameOf[id] = n
	}

	// The deletion itself, on the working image.
	var recs []Record
	for _, id := range idToName.keys() {
		name := nameOf[id]
		if _, ok := op.Image.Topic(id); !ok {
			add(strp(name), id, kerr.UnknownTopicID.Code, strp(msgUnknownTopicID))
			continue
		}
		if len(recs) == MaxRecordsPerRequest {
			// Kafka's bounded record list throws, and deleteTopics answers
			// the topic with the unexpected error (no message); the others
			// go on.
			add(strp(name), id, kerr.UnknownServerError.Code, nil)
			continue
		}
		recs = append(recs, Record{&metadata.RemoveTopicRecord{TopicId: id}, 0})
		add(strp(name), id, 0, nil)
	}
	if shuffle != nil {
		// Collections.shuffle: from the end, swap with a random earlier
		// position.
		for i := len(resp.Topics); i > 1; i-- {
			j := int(shuffle.NextInt(int32(i)))
			resp.Topics[i-1], resp.Topics[j] = resp.Topics[j], resp.Topics[i-1]
		}
	}
	return Result[*kmsg.DeleteTopicsResponse]{Records: recs, Atomic: true, Response: resp}
}

// javaSet is a java.util.HashSet's iteration order with removals: a
// HashMap's table never shrinks, so the order is that of the live keys,
// each at its latest insertion, in a table sized for the most keys the set
// ever held.
type javaSet[K comparable] struct {
	seq  map[K]int // live keys and when each was (last) inserted
	next int
	most int
	hash func(K) int32
}

func (s *javaSet[K]) has(k K) bool { _, ok := s.seq[k]; return ok }

func (s *javaSet[K]) add(k K) {
	if s.has(k) {
		return
	}
	s.seq[k] = s.next
	s.next++
	s.most = max(s.most, len(s.seq))
}

func (s *javaSet[K]) remove(k K) { delete(s.seq, k) }

func (s *javaSet[K]) keys() []K {
	table := 16
	for s.most > table*3/4 {
		table *= 2
	}
	live := make([]K, 0, len(s.seq))
	for k := range s.seq {
		live = append(live, k)
	}
	slices.SortFunc(live, func(a, b K) int { return s.seq[a] - s.seq[b] })
	m := jvmorder.NewHashMapCap[K](table)
	for _, k := range live {
		m.Put(k, s.hash(k))
	}
	return m.Keys()
}

func newSet[K comparable](hash func(K) int32) *javaSet[K] {
	return &javaSet[K]{seq: map[K]int{}, hash: hash}
}

func newStringSet() *javaSet[string] {
	return &javaSet[string]{seq: map[string]int{}, hash: jvmorder.StringHash}
}

func newUUIDSet() *javaSet[uuid.UUID] {
	return &javaSet[uuid.UUID]{seq: map[uuid.UUID]int{}, hash: uuidHash}
}

// uuidHash is Uuid.hashCode.
func uuidHash(u uuid.UUID) int32 {
	h := binary.BigEndian.Uint64(u[:8]) ^ binary.BigEndian.Uint64(u[8:])
	return int32(h>>32) ^ int32(h)
}

// resized is the order of new HashMap<>(len(keys)) filled with keys in
// order.
func resized[K comparable](keys []K, hash func(K) int32) []K {
	m := jvmorder.NewHashMapCap[K](len(keys))
	for _, k := range keys {
		m.Put(k, hash(k))
	}
	return m.Keys()
}
