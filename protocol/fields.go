package protocol

import (
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Which fields each version of a served api carries, where kmsg does not decide it
// itself. versions.go keeps the version ranges, this file what a version adds that the
// encoder must know about: a version bump changes a line in each.
//
// kmsg leaves out a regular field at a version that does not define it, but writes a
// tagged field whenever it holds a non-default value, whatever the version; Kafka's
// generated readers reject a known tag at a version that does not define it ("Tag N is
// not valid for version V") and close the connection (docs/design/kafka-4.4-findings.md 1.7).
// Tags that start with the api's first flexible version are safe, as kmsg writes no tag
// block below it; the tables below list every other tag of the served apis (Kafka
// 4.4.0's message schemas).
//
// Lowering the version drops the fields it lacks, silently. For a field Kafka marks not
// ignorable, dropping a non-default value changes what the request asks, so Kafka's
// serializer refuses (UnsupportedVersionException) and so does EncodeRequest. Checked
// for the requests kraftd sends (Kafka 4.4.0's message schemas):
//   - Vote: PreVote (v2+, not ignorable): a pre-vote sent at v0-1 is a real vote that
//     bumps the voter's epoch and may be granted and persisted; refused. VoterId and the
//     directory ids (v1+, ignorable) only let the receiver check it is the intended
//     voter: dropping them is harmless.
//   - Fetch: LastFetchedEpoch (v12+, not ignorable): without it the leader cannot
//     detect a diverging follower log, which would then never be truncated; refused.
//     ReplicaDirectoryId (v17+), HighWatermark (v18+), ClusterId (v12+ tag),
//     ReplicaState (v15+, carried into ReplicaId below it) and Topic/TopicId (raft
//     sets both) are ignorable; dropping them loses a check or an optimisation only.
//   - BeginQuorumEpoch: VoterId, VoterDirectoryId, LeaderEndpoints (v1+) are ignorable.
//   - EndQuorumEpoch: raft fills both PreferredSuccessors (v0) and
//     PreferredCandidates (v1+), so either version carries the successors.
//   - FetchSnapshot: ReplicaDirectoryId (v1+ tag) is ignorable.
//   - AddRaftVoter, RemoveRaftVoter, UpdateRaftVoter: one version each, nothing dropped.

// versionedField is a field that only versions from since on carry.
type versionedField struct {
	key   int16
	since int16  // first version that defines the field
	name  string // Kafka's name, for errors
	// set reports whether m holds a non-default value for the field.
	set func(m message) bool
	// reset sets the field to its default in m, a copy the encoder owns whose nested
	// slices are still the caller's: reset copies a slice before changing it. Nil for
	// fields that are refused rather than dropped.
	reset func(m message)
}

// taggedRequestFields lists the request tags that start above their api's first
// flexible version; the encoder resets them below it.
var taggedRequestFields = []versionedField{
	// Fetch is flexible from v12.
	{int16(kmsg.Fetch), 15, "ReplicaState", fetchReplicaStateSet, fetchReplicaStateReset},
	{int16(kmsg.Fetch), 17, "ReplicaDirectoryId", fetchDirectorySet, fetchDirectoryReset},
	{int16(kmsg.Fetch), 18, "HighWatermark", fetchHighWatermarkSet, fetchHighWatermarkReset},
	// FetchSnapshot is flexible from v0.
	{int16(kmsg.FetchSnapshot), 1, "ReplicaDirectoryId", fetchSnapshotDirectorySet, fetchSnapshotDirectoryReset},
}

// taggedResponseFields is taggedRequestFields for responses. BeginQuorumEpoch and
// EndQuorumEpoch NodeEndpoints start at v1, their first flexible version: not listed.
var taggedResponseFields = []versionedField{
	{int16(kmsg.Fetch), 16, "NodeEndpoints",
		func(m message) bool { return m.(*kmsg.FetchResponse).Brokers != nil },
		func(m message) { m.(*kmsg.FetchResponse).Brokers = nil }},
	{int16(kmsg.Vote), 1, "NodeEndpoints",
		func(m message) bool { return m.(*kmsg.VoteResponse).NodeEndpoints != nil },
		func(m message) { m.(*kmsg.VoteResponse).NodeEndpoints = nil }},
	{int16(kmsg.FetchSnapshot), 1, "NodeEndpoints",
		func(m message) bool { return m.(*kmsg.FetchSnapshotResponse).NodeEndpoints != nil },
		func(m message) { m.(*kmsg.FetchSnapshotResponse).NodeEndpoints = nil }},
}

// meaningfulRequestFields lists the request fields Kafka marks not ignorable: a request
// holding one is refused at a version below the field's rather than sent without it.
var meaningfulRequestFields = []versionedField{
	{int16(kmsg.Vote), 2, "PreVote", votePreVoteSet, nil},
	{int16(kmsg.Fetch), 12, "LastFetchedEpoch", fetchLastFetchedEpochSet, nil},
}

// fetchReplicaIDMisplaced reports whether req holds the fetching replica's id only in
// the field version v does not carry: it moved from ReplicaId (v0-14) to the
// ReplicaState tag (v15+). Callers may fill either and send one request at any
// version, as with Kafka's request builder; moveFetchReplicaID moves it.
func fetchReplicaIDMisplaced(req *kmsg.FetchRequest, v int16) bool {
	if v >= 15 {
		return req.ReplicaState.ID == -1 && req.ReplicaID != -1
	}
	return req.ReplicaID == -1 && req.ReplicaState.ID != -1
}

func moveFetchReplicaID(req *kmsg.FetchRequest, v int16) {
	if v >= 15 {
		req.ReplicaState.ID = req.ReplicaID
	} else {
		req.ReplicaID = req.ReplicaState.ID
	}
}

func fetchReplicaStateSet(m message) bool {
	s := &m.(*kmsg.FetchRequest).ReplicaState
	return s.ID != -1 || s.Epoch != -1 || s.UnknownTags.Len() > 0
}

func fetchReplicaStateReset(m message) {
	m.(*kmsg.FetchRequest).ReplicaState = kmsg.NewFetchRequestReplicaState()
}

func fetchDirectorySet(m message) bool {
	return anyFetchPartition(m, func(p *kmsg.FetchRequestTopicPartition) bool { return p.ReplicaDirectoryID != [16]byte{} })
}

func fetchDirectoryReset(m message) {
	editFetchPartitions(m, func(p *kmsg.FetchRequestTopicPartition) { p.ReplicaDirectoryID = [16]byte{} })
}

func fetchHighWatermarkSet(m message) bool {
	return anyFetchPartition(m, func(p *kmsg.FetchRequestTopicPartition) bool { return p.HighWatermark != math.MaxInt64 })
}

func fetchHighWatermarkReset(m message) {
	editFetchPartitions(m, func(p *kmsg.FetchRequestTopicPartition) { p.HighWatermark = math.MaxInt64 })
}

func fetchLastFetchedEpochSet(m message) bool {
	return anyFetchPartition(m, func(p *kmsg.FetchRequestTopicPartition) bool { return p.LastFetchedEpoch != -1 })
}

func anyFetchPartition(m message, f func(*kmsg.FetchRequestTopicPartition) bool) bool {
	topics := m.(*kmsg.FetchRequest).Topics
	for i := range topics {
		for j := range topics[i].Partitions {
			if f(&topics[i].Partitions[j]) {
				return true
			}
		}
	}
	return false
}

// editFetchPartitions applies f to every partition of m, on copies of the topic and
// partition slices.
func editFetchPartitions(m message, f func(*kmsg.FetchRequestTopicPartition)) {
	req := m.(*kmsg.FetchRequest)
	topics := make([]kmsg.FetchRequestTopic, len(req.Topics))
	for i, t := range req.Topics {
		t.Partitions = append([]kmsg.FetchRequestTopicPartition(nil), t.Partitions...)
		for j := range t.Partitions {
			f(&t.Partitions[j])
		}
		topics[i] = t
	}
	req.Topics = topics
}

func fetchSnapshotDirectorySet(m message) bool {
	for _, t := range m.(*kmsg.FetchSnapshotRequest).Topics {
		for _, p := range t.Partitions {
			if p.ReplicaDirectoryID != [16]byte{} {
				return true
			}
		}
	}
	return false
}

// fetchSnapshotDirectoryReset clears the directory ids on copies of the topic and
// partition slices.
func fetchSnapshotDirectoryReset(m message) {
	req := m.(*kmsg.FetchSnapshotRequest)
	topics := make([]kmsg.FetchSnapshotRequestTopic, len(req.Topics))
	for i, t := range req.Topics {
		t.Partitions = append([]kmsg.FetchSnapshotRequestTopicPartition(nil), t.Partitions...)
		for j := range t.Partitions {
			t.Partitions[j].ReplicaDirectoryID = [16]byte{}
		}
		topics[i] = t
	}
	req.Topics = topics
}

func votePreVoteSet(m message) bool {
	for _, t := range m.(*kmsg.VoteRequest).Topics {
		for _, p := range t.Partitions {
			if p.PreVote {
				return true
			}
		}
	}
	return false
}
