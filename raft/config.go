package raft

import (
	"errors"
	"fmt"
	"time"

	"github.com/kraftd/kraftd/topics"
	"github.com/kraftd/kraftd/uuid"
)

// Endpoint is one named listener of a node (controller.listener.names entry).
type Endpoint struct {
	Name string // listener name, upper-cased
	Host string
	Port int32
}

// Voter is one member of the static voter set (controller.quorum.voters).
type Voter struct {
	ID          int32
	DirectoryID [16]byte // zero when unknown (static voters never record one)
	Endpoints   []Endpoint
}

// Config is the validated configuration of one raft replica. Durations are
// Kafka's controller.quorum.* settings; DefaultConfig gives Kafka's defaults.
type Config struct {
	NodeID      int32    // -1 for an observer without an id
	DirectoryID [16]byte // this replica's directory id
	ClusterID   string
	TopicName   string   // "__cluster_metadata" or "__raft_performance_test"
	TopicID     [16]byte // Uuid(0,1) or Uuid(0,2)
	Partition   int32    // always 0

	Voters       []Voter    // static voter set (controller.quorum.voters)
	Bootstrap    []Endpoint // controller.quorum.bootstrap.servers (observers); addressed as ids -2, -3, ...
	ListenerName string     // this node's default controller listener name (upper-cased)
	Endpoints    []Endpoint // this node's own controller listeners (sent in BeginQuorumEpoch)

	ElectionTimeout    time.Duration // controller.quorum.election.timeout.ms
	ElectionBackoffMax time.Duration // controller.quorum.election.backoff.max.ms
	FetchTimeout       time.Duration // controller.quorum.fetch.timeout.ms
	RequestTimeout     time.Duration // controller.quorum.request.timeout.ms: enforced by the transport
	AppendLinger       time.Duration // controller.quorum.append.linger.ms
	RetryBackoff       time.Duration // controller.quorum.retry.backoff.ms
	MaxFetchWait       time.Duration // MaxWaitMs a follower sends (500)
	ShutdownTimeout    time.Duration // graceful shutdown bound (5000)
	ObserverSession    time.Duration // observers unseen this long drop out of DescribeQuorum (300000)

	MaxBatchBytes       int // record batch size cap (DefaultMaxBatchBytes)
	MaxFetchBytes       int // MaxBytes a follower asks for in a Fetch (8 MiB, as Kafka)
	MaxSnapshotChunk    int // bytes requested/returned per FetchSnapshot (8 MiB)
	MaxUndrainedBatches int // completed batches waiting for drain before Append refuses (10)
	// AppendFlushBytes: an accumulated batch is written once it holds this
	// many bytes, before the linger ends (0: at the linger only, as Kafka).
	AppendFlushBytes int
	// MaxUncommittedBytes bounds the leader's backlog: bytes appended and
	// not yet committed, accumulated ones included. Beyond it Append
	// refuses with ErrBufferFull (0: no bound, as Kafka).
	MaxUncommittedBytes int
	// MaxReadBytes bounds one log read, which still returns at least one
	// whole batch: a leader's Fetch answer, one listener delivery, one
	// step of the voter-record scan (1 MiB). Kafka reads up to 8 MiB;
	// smaller reads keep a node's memory flat while a follower catches
	// up (each answer is live until written, then garbage until the next
	// GC) at no cost in throughput: 1 MiB is far more than a round's
	// appends.
	MaxReadBytes int

	// FetchPace: a follower receiving records at FetchPaceRate bytes/s or
	// more waits FetchPace after each answer before its next Fetch. Each
	// fetch round costs every node a write, an fsync and frames both ways
	// whatever it carries; at high rates pacing makes the rounds fewer and
	// larger for FetchPace of commit latency, while below the rate fetches
	// go at once. The rate is an answer's bytes over the time since the
	// previous answer with records (at least FetchPace), pauses included,
	// so pacing neither starts nor stops by itself at a steady rate. A
	// follower below the leader's high watermark (catching up) fetches at
	// once. FetchPace 0 turns pacing off.
	FetchPace     time.Duration
	FetchPaceRate int64

	// PreVote enables KIP-996 pre-vote (Prospective state, Vote v2). When a
	// peer answers a pre-vote with UNSUPPORTED_VERSION the node becomes
	// Candidate at once, as Kafka 4.x does.
	PreVote bool
	// AutoJoin is controller.quorum.auto.join.enable (KIP-1186) for a
	// controller: as an observer of a kraft.version 1 quorum it asks the
	// leader to add it as a voter.
	AutoJoin bool
	// FsyncAsObserver makes observers fsync appended data (controllers do,
	// brokers do not). Voters always fsync.
	FsyncAsObserver bool
	// DeferLeadership makes this node step aside for the voters named by
	// Driver.SetPreferredLeaders (deferral.go) unless it is one of them.
	DeferLeadership bool

	// Flusher, when set, takes the leader's fsyncs off the driver's
	// goroutine: the driver hands it each FlushJob after sending the new
	// records to followers, and the caller reports the job's end with
	// Driver.FlushDone. The leader counts itself toward the high
	// watermark only at its flushed offset, so followers that flushed can
	// commit without it. Nil: the leader fsyncs within its round.
	Flusher func(FlushJob)

	// Observer, when set, is told of the driver's events (observe.go).
	Observer Observer
}

// Kafka's defaults of the controller.quorum.* settings (QuorumConfig) and
// of kraftd's fetch pacing: DefaultConfig's, and config's for the keys.
const (
	DefaultElectionTimeout    = 1000 * time.Millisecond // controller.quorum.election.timeout.ms
	DefaultElectionBackoffMax = 1000 * time.Millisecond // controller.quorum.election.backoff.max.ms
	DefaultFetchTimeout       = 2000 * time.Millisecond // controller.quorum.fetch.timeout.ms
	DefaultRequestTimeout     = 2000 * time.Millisecond // controller.quorum.request.timeout.ms
	DefaultAppendLinger       = 25 * time.Millisecond   // controller.quorum.append.linger.ms
	DefaultRetryBackoff       = 20 * time.Millisecond   // controller.quorum.retry.backoff.ms
	DefaultFetchPace          = 1500 * time.Microsecond // kraftd.controller.quorum.fetch.pace.us
	DefaultFetchPaceRate      = 16 << 20                // kraftd.controller.quorum.fetch.pace.bytes.per.second
	// DefaultMaxBatchBytes is KafkaRaftClient's MAX_BATCH_SIZE_BYTES: the
	// largest batch a leader writes and the metadata log accepts.
	DefaultMaxBatchBytes = 8 << 20
	// DefaultAppendFlushBytes (kraftd.controller.quorum.append.flush.bytes)
	// is about what a leader at linger 0 writes a round at its highest
	// rate: batches of that size keep leader, followers and their fsyncs
	// streaming, where one batch a linger makes each wait for the others.
	DefaultAppendFlushBytes = 128 << 10
	// DefaultMaxUncommittedBytes (kraftd.controller.quorum.append.max.uncommitted.bytes):
	// room for a full batch and the rounds in flight behind it.
	DefaultMaxUncommittedBytes = 2 * DefaultMaxBatchBytes
)

// DefaultConfig returns Kafka's defaults for the timing and size settings.
// Identity fields (NodeID, ClusterID, Voters, ...) must be filled by the caller.
func DefaultConfig() Config {
	return Config{
		NodeID:              -1,
		TopicName:           topics.ClusterMetadata,
		TopicID:             uuid.MetadataTopicID,
		ElectionTimeout:     DefaultElectionTimeout,
		ElectionBackoffMax:  DefaultElectionBackoffMax,
		FetchTimeout:        DefaultFetchTimeout,
		RequestTimeout:      DefaultRequestTimeout,
		AppendLinger:        DefaultAppendLinger,
		RetryBackoff:        DefaultRetryBackoff,
		MaxFetchWait:        500 * time.Millisecond,
		ShutdownTimeout:     5000 * time.Millisecond,
		ObserverSession:     300000 * time.Millisecond,
		MaxBatchBytes:       DefaultMaxBatchBytes,
		MaxFetchBytes:       8 << 20,
		MaxReadBytes:        1 << 20,
		MaxSnapshotChunk:    8 << 20,
		MaxUndrainedBatches: 10,
		AppendFlushBytes:    DefaultAppendFlushBytes,
		MaxUncommittedBytes: DefaultMaxUncommittedBytes,
		FetchPace:           DefaultFetchPace,
		FetchPaceRate:       DefaultFetchPaceRate,
		PreVote:             true,
		FsyncAsObserver:     true,
	}
}

// Validate checks the configuration for values the core cannot work with.
func (c *Config) Validate() error {
	var errs []error
	if c.NodeID < -1 {
		errs = append(errs, fmt.Errorf("node id %d: must be >= 0, or -1 for an id-less observer", c.NodeID))
	}
	if c.TopicName == "" {
		errs = append(errs, errors.New("topic name is empty"))
	}
	if c.Partition < 0 {
		errs = append(errs, fmt.Errorf("partition %d is negative", c.Partition))
	}
	seen := make(map[int32]bool, len(c.Voters))
	for _, v := range c.Voters {
		if v.ID < 0 {
			errs = append(errs, fmt.Errorf("voter id %d is negative", v.ID))
		}
		if seen[v.ID] {
			errs = append(errs, fmt.Errorf("voter id %d listed twice", v.ID))
		}
		seen[v.ID] = true
	}
	if len(c.Voters) == 0 && len(c.Bootstrap) == 0 {
		errs = append(errs, errors.New("neither voters nor bootstrap servers are configured"))
	}
	if c.ElectionTimeout < 0 || c.ElectionBackoffMax < 0 || c.FetchTimeout <= 0 ||
		c.AppendLinger < 0 || c.RetryBackoff < 0 || c.MaxFetchWait < 0 || c.ShutdownTimeout < 0 || c.FetchPace < 0 {
		errs = append(errs, errors.New("timeouts must be >= 0 (fetch timeout > 0)"))
	}
	if c.MaxBatchBytes < 1024 {
		errs = append(errs, fmt.Errorf("max batch bytes %d: must be at least 1024", c.MaxBatchBytes))
	}
	if c.MaxFetchBytes <= 0 || c.MaxReadBytes <= 0 || c.MaxSnapshotChunk <= 0 {
		errs = append(errs, errors.New("fetch, read and snapshot chunk sizes must be positive"))
	}
	if c.FetchPace > 0 && c.FetchPace >= c.FetchTimeout {
		errs = append(errs, fmt.Errorf("fetch pace %v: must be below the fetch timeout %v", c.FetchPace, c.FetchTimeout))
	}
	if c.FetchPace > 0 && c.FetchPaceRate <= 0 {
		errs = append(errs, fmt.Errorf("fetch pace rate %d: must be positive when pacing is on", c.FetchPaceRate))
	}
	if c.MaxUndrainedBatches <= 0 {
		errs = append(errs, errors.New("max undrained batches must be positive"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("raft: invalid config: %w", err)
	}
	return nil
}
