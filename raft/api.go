package raft

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// RequestRef identifies an inbound request so its reply can be routed. It is
// opaque to raft and handed back to Transport.Reply unchanged.
type RequestRef any

// Message is one input to the driver: an inbound request, or the answer to an
// Outbound the driver sent earlier.
type Message struct {
	// Inbound request: Request set, Ref identifies where the reply goes.
	Request kmsg.Request
	Ref     RequestRef

	// Inbound response to an Outbound we sent: Corr matches Outbound.Corr and
	// From = Outbound.To. Err is set (and Response nil) when sending failed,
	// timed out or the connection closed.
	From     int32
	Corr     uint64
	Response kmsg.Response
	Err      error
}

// Outbound is a request the driver wants sent to node To (negative ids -2,
// -3, ... name Config.Bootstrap[0], [1], ...). The transport picks the version
// (highest both sides support, clamped to the versions the node serves) and must answer
// every Outbound exactly once with a Message (response or Err).
type Outbound struct {
	To      int32
	Corr    uint64
	Request kmsg.Request
}

// Transport carries the driver's outputs. Both methods are called
// synchronously from Step/Poll and must not block.
type Transport interface {
	Send(o Outbound)
	// Reply answers an inbound request; resp's version is the request's.
	Reply(ref RequestRef, resp kmsg.Response)
}

// Listener receives committed data and leadership news. Callbacks run on the
// driver's goroutine, inside Step/Poll; a panicking listener is logged and
// detached, replication continues.
type Listener interface {
	// HandleCommit delivers committed batches in offset order, each once.
	HandleCommit(batches []CommittedBatch)
	// HandleLoadSnapshot tells the listener to discard its state and load
	// the snapshot; commits continue from id.Offset. r is closed by the
	// driver after the call returns.
	HandleLoadSnapshot(id OffsetAndEpoch, r SnapshotReader)
	// HandleLeaderChange reports a new epoch or a newly known leader.
	HandleLeaderChange(leader LeaderAndEpoch)
	// BeginShutdown is called once when Shutdown starts.
	BeginShutdown()
}

// CommittedBatch is one committed record batch, data or control.
type CommittedBatch struct {
	BaseOffset int64
	LastOffset int64
	Epoch      int32
	Control    bool
	// Records are the record values (for control batches the raw control
	// record values; their keys give the type, see protocol/control.go).
	// They alias the log's bytes: read-only, and a kept value keeps its
	// whole read buffer alive, so copy what you keep.
	Records [][]byte
	// AppendTimeNanos is the leader-side append time when known, else 0.
	AppendTimeNanos int64
	// MaxTimestamp is the batch header's (ms): what Kafka's Batch calls its
	// appendTimestamp.
	MaxTimestamp int64
}

// LeaderAndEpoch names the leader of an epoch; LeaderID is -1 when unknown.
type LeaderAndEpoch struct {
	LeaderID int32
	Epoch    int32
}

// Status is a snapshot of the replica's quorum view.
type Status struct {
	NodeID        int32
	Role          Role
	Epoch         int32
	LeaderID      int32
	HighWatermark int64 // -1 when unknown
	LogEndOffset  int64
	LogEndEpoch   int32 // epoch of the last batch (of the snapshot when the log is empty)
	VotedID       int32
	// Voters is the voter set in force (immutable: safe to share with
	// other goroutines); IsVoter: it holds this replica.
	Voters  VoterSet
	IsVoter bool
	// KRaftVersion is the finalized kraft.version at the log end.
	KRaftVersion int16

	// Leader only. CommittedInEpoch: an entry of this epoch is committed
	// (the high watermark is known). Observers: the observers tracked for
	// DescribeQuorum. VoterChangePending: an AddRaftVoter or RemoveRaftVoter
	// awaits its commit.
	CommittedInEpoch   bool
	Observers          int
	VoterChangePending bool

	// Follower only. LastFetch: when the leader last answered a Fetch or
	// FetchSnapshot (zero before the first answer of the epoch).
	// LeaderHighWatermark: the high watermark the leader sent last, -1
	// while unknown (and on other roles).
	LastFetch           time.Time
	LeaderHighWatermark int64
}

// Equal reports whether two statuses say the same.
func (s Status) Equal(o Status) bool {
	return s.NodeID == o.NodeID && s.Role == o.Role && s.Epoch == o.Epoch && s.LeaderID == o.LeaderID &&
		s.HighWatermark == o.HighWatermark && s.LogEndOffset == o.LogEndOffset && s.VotedID == o.VotedID &&
		s.LogEndEpoch == o.LogEndEpoch && s.Voters.Equal(o.Voters) && s.IsVoter == o.IsVoter &&
		s.KRaftVersion == o.KRaftVersion && s.CommittedInEpoch == o.CommittedInEpoch &&
		s.Observers == o.Observers && s.VoterChangePending == o.VoterChangePending &&
		s.LastFetch.Equal(o.LastFetch) && s.LeaderHighWatermark == o.LeaderHighWatermark
}

// Errors returned by the driver API.
var (
	// ErrNotLeader: Append/Resign on a replica that is not the leader of
	// the given epoch.
	ErrNotLeader = errors.New("raft: not the leader")
	// ErrInvalidEpoch: Append/Resign with an epoch newer than the local one.
	ErrInvalidEpoch = errors.New("raft: epoch is newer than the local epoch")
	// ErrRecordTooLarge: the records of one Append do not fit in one batch.
	ErrRecordTooLarge = errors.New("raft: records do not fit in one batch")
	// ErrBufferFull: too many completed batches wait for the next drain.
	ErrBufferFull = errors.New("raft: append buffer full")
	// ErrShutdown: the driver is shutting down or stopped after a fatal error.
	ErrShutdown = errors.New("raft: driver shut down")
)

// ErrConnectionRefused is what a Transport wraps in Message.Err when the
// destination's address refused the connection: nothing listens there, the
// process is gone. A follower whose leader refuses it starts its election
// without waiting out the fetch timeout (docs/design/state-machine.md 4.6).
var ErrConnectionRefused = errors.New("raft: connection refused")

// EndpointLearner is an optional Transport extension: the driver tells it
// the address of a node it learned from the wire (NodeEndpoints in raft
// responses, LeaderEndpoints in BeginQuorumEpoch), on the default listener,
// so an observer configured only with bootstrap servers can reach the
// leader. Called on the driver goroutine, only when the address changes.
//
// The driver keeps at most maxObservers learned addresses; when it drops
// them it calls ForgetEndpoint for each, so a transport that mirrors them
// stays bounded too, whatever node ids peers advertise.
type EndpointLearner interface {
	LearnEndpoint(id int32, host string, port int32)
	ForgetEndpoint(id int32)
}
