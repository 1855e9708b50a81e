package rafttest

import (
	"encoding/binary"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/storage"
	"github.com/kraftd/kraftd/topics"
	"github.com/kraftd/kraftd/uuid"
)

// ClusterID is the cluster id of an InteractionEnv's nodes and of the
// requests built here.
const ClusterID = "test-cluster-id-00000A"

// Apis are the apis of a node's network server and raft driver, as a
// node's table has them: the versions tests encode and decode at.
var Apis = protocol.MustTable(network.Apis(), raft.Apis())

// DirectoryID is node id's directory id in an InteractionEnv (dynamic
// quorums, static voters with directory ids).
func DirectoryID(id int32) [16]byte { return [16]byte{0: byte(id), 15: 0xd1} }

// WriteBootstrapSnapshot writes into l the 0-0 snapshot that kafka-storage
// format --initial-controllers writes for voters: each at 127.0.0.1, port
// 9000+id, on listener CONTROLLER, with directory DirectoryID(id).
func WriteBootstrapSnapshot(l *MemLog, voters []int32) error {
	var ics []storage.InitialController
	for _, v := range voters {
		ics = append(ics, storage.InitialController{NodeID: v, Host: "127.0.0.1", Port: uint16(9000 + v),
			DirectoryID: uuid.UUID(DirectoryID(v))})
	}
	w, err := l.CreateSnapshot(raft.OffsetAndEpoch{})
	if err == nil {
		_, err = w.Write(storage.BootstrapSnapshot(1, ics, "CONTROLLER", nil, time.Unix(0, 0)))
	}
	if err == nil {
		err = w.Freeze()
	}
	return err
}

// Offsets of record batch header fields (Kafka's v2 layout), for Reseal.
const (
	BatchLastOffsetDeltaAt = 23
	BatchRecordCountAt     = 57
)

// Reseal sets the 4-byte header field at byte at of batch b to v and
// recomputes the CRC, as a peer forging a header would. It returns b.
func Reseal(b []byte, at int, v uint32) []byte {
	binary.BigEndian.PutUint32(b[at:], v)
	binary.BigEndian.PutUint32(b[17:], protocol.CRC32C(b[21:]))
	return b
}

func strp(s string) *string { return &s }

// The request builders make requests of the raft partition of
// __cluster_metadata in cluster ClusterID, with the fields a JVM peer
// fills.

// VoteRequest is candidate's Vote v2 in epoch, its log ending at
// lastOffset in lastEpoch.
func VoteRequest(candidate, epoch, lastEpoch int32, lastOffset int64, preVote bool) *kmsg.VoteRequest {
	r := kmsg.NewPtrVoteRequest()
	r.Version = 2
	r.ClusterID = strp(ClusterID)
	t := kmsg.NewVoteRequestTopic()
	t.Topic = topics.ClusterMetadata
	p := kmsg.NewVoteRequestTopicPartition()
	p.CandidateEpoch = epoch
	p.CandidateID = candidate
	p.LastOffsetEpoch = lastEpoch
	p.LastOffset = lastOffset
	p.PreVote = preVote
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	return r
}

// BeginQuorumEpochRequest is leader's BeginQuorumEpoch v1 for epoch.
func BeginQuorumEpochRequest(leader, epoch int32) *kmsg.BeginQuorumEpochRequest {
	r := kmsg.NewPtrBeginQuorumEpochRequest()
	r.Version = 1
	r.ClusterID = strp(ClusterID)
	t := kmsg.NewBeginQuorumEpochRequestTopic()
	t.Topic = topics.ClusterMetadata
	p := kmsg.NewBeginQuorumEpochRequestTopicPartition()
	p.LeaderID, p.LeaderEpoch = leader, epoch
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	return r
}

// EndQuorumEpochRequest is leader's EndQuorumEpoch v1 for epoch, naming
// preferred as its successors.
func EndQuorumEpochRequest(leader, epoch int32, preferred ...int32) *kmsg.EndQuorumEpochRequest {
	r := kmsg.NewPtrEndQuorumEpochRequest()
	r.Version = 1
	r.ClusterID = strp(ClusterID)
	t := kmsg.NewEndQuorumEpochRequestTopic()
	t.Topic = topics.ClusterMetadata
	p := kmsg.NewEndQuorumEpochRequestTopicPartition()
	p.LeaderID, p.LeaderEpoch = leader, epoch
	for _, id := range preferred {
		c := kmsg.NewEndQuorumEpochRequestTopicPartitionPreferredCandidate()
		c.CandidateID = id
		p.PreferredCandidates = append(p.PreferredCandidates, c)
	}
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	return r
}

// FetchRequest is replica's Fetch v17 in epoch at offset, the last fetched
// epoch lastEpoch, waiting up to maxWaitMs.
func FetchRequest(replica, epoch int32, offset int64, lastEpoch int32, maxWaitMs int32) *kmsg.FetchRequest {
	r := kmsg.NewPtrFetchRequest()
	r.Version = 17
	r.ClusterID = strp(ClusterID)
	r.ReplicaState.ID = replica
	r.MaxWaitMillis = maxWaitMs
	t := kmsg.NewFetchRequestTopic()
	t.TopicID = uuid.MetadataTopicID
	p := kmsg.NewFetchRequestTopicPartition()
	p.CurrentLeaderEpoch = epoch
	p.FetchOffset = offset
	p.LastFetchedEpoch = lastEpoch
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	return r
}

// voterChangeRequest is an admin's AddRaftVoter / RemoveRaftVoter, or a
// voter's UpdateRaftVoter, for node voter (directory DirectoryID, listener
// CONTROLLER at 127.0.0.1:port, 9000+voter when port is 0).
func voterChangeRequest(api string, voter, epoch, port int32, noAck bool) kmsg.Request {
	if port == 0 {
		port = 9000 + voter
	}
	switch api {
	case "AddRaftVoter":
		r := kmsg.NewPtrAddRaftVoterRequest()
		r.ClusterID = strp(ClusterID)
		r.VoterID, r.VoterDirectoryID = voter, DirectoryID(voter)
		l := kmsg.NewAddRaftVoterRequestListener()
		l.Name, l.Host, l.Port = "CONTROLLER", "127.0.0.1", uint16(port)
		r.Listeners = append(r.Listeners, l)
		r.AckWhenCommitted = !noAck
		return r
	case "RemoveRaftVoter":
		r := kmsg.NewPtrRemoveRaftVoterRequest()
		r.ClusterID = strp(ClusterID)
		r.VoterID, r.VoterDirectoryID = voter, DirectoryID(voter)
		return r
	}
	r := kmsg.NewPtrUpdateRaftVoterRequest()
	r.ClusterID = strp(ClusterID)
	r.CurrentLeaderEpoch = epoch
	r.VoterID, r.VoterDirectoryID = voter, DirectoryID(voter)
	l := kmsg.NewUpdateRaftVoterRequestListener()
	l.Name, l.Host, l.Port = "CONTROLLER", "127.0.0.1", uint16(port)
	r.Listeners = append(r.Listeners, l)
	r.KRaftVersionFeature.MinSupportedVersion, r.KRaftVersionFeature.MaxSupportedVersion = 0, 1
	return r
}

// updateFeaturesRequest is kafka-features' UpdateFeatures v2 for one
// feature.
func updateFeaturesRequest(feature string, level int16, typ int8, validateOnly bool) kmsg.Request {
	r := kmsg.NewPtrUpdateFeaturesRequest()
	r.Version = 2
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = feature, level, typ
	r.FeatureUpdates = append(r.FeatureUpdates, u)
	r.ValidateOnly = validateOnly
	return r
}
