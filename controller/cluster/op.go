// Package cluster is the active controller's broker lifecycle, as Kafka
// 4.4.0's ClusterControlManager, BrokerHeartbeatManager and the broker half
// of ReplicationControlManager run it: broker and controller registration,
// heartbeats and the fencing state machine, session expiry, controlled
// shutdown and unregistration, with the PartitionChangeRecords that move
// leaders and ISRs when a broker comes or goes.
//
// It is deterministic: time comes in as monotonic durations, offsets and the
// image as arguments; it does no I/O and starts no goroutine. Every
// operation reads the controller's working image and returns the records to
// append and the answer; the caller appends and replays the records and
// answers once they commit. See docs/design/controller-cluster.md.
package cluster

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
)

// Record is a record an operation writes, with the version to write it at.
type Record struct {
	Record  metadata.Record
	Version int16
}

// Result is what an operation decides: the records to append, in order, and
// the answer to send once the last of them commits (at once if there are
// none and nothing else is pending). Atomic results must be appended in one
// batch; the others may be split across batches (Kafka's
// ControllerResult.of versus atomicOf).
type Result[T any] struct {
	Records  []Record
	Atomic   bool
	Response T
}

// Op is what every operation is given besides its request.
type Op struct {
	// Image is the controller's working image: the committed metadata and
	// every record appended since, replayed.
	Image *image.Image
	// Now is the controller's monotonic time, from any fixed origin.
	Now time.Duration
	// NextOffset is the offset the first record of this operation will be
	// written at (Kafka's OffsetControlManager.nextWriteOffset): a new
	// broker epoch.
	NextOffset int64
	// APIVersion is the version of the request being answered.
	APIVersion int16
	// KraftVersion is the finalized kraft.version, which lives in raft's
	// control records rather than in the image.
	KraftVersion int16
}

// Error is a refusal: a Kafka error code and Kafka 4.4.0's message for it.
// Responses without a message field carry the code alone.
type Error struct {
	Code    int16
	Message string
	// Detail is what Kafka logs where its answer hides the cause (an
	// unexpected exception is answered with UNKNOWN_SERVER_ERROR's own
	// message); empty otherwise.
	Detail string
}

func (e *Error) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("%s: %s", kerr.ErrorForCode(e.Code), e.Detail)
	}
	return fmt.Sprintf("%s: %s", kerr.ErrorForCode(e.Code), e.Message)
}

// Unwrap makes errors.Is(err, kerr.X) work.
func (e *Error) Unwrap() error { return kerr.ErrorForCode(e.Code) }

func refuse(code int16, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// unexpected is Kafka's answer to an exception that is not an API error:
// UNKNOWN_SERVER_ERROR with that error's default message; the cause goes to
// the log (and the active controller resigns, which kraftd does not:
// kafka-4.4-findings.md 10.2).
func unexpected(format string, args ...any) *Error {
	return &Error{
		Code:    kerr.UnknownServerError.Code,
		Message: "The server experienced an unexpected error when processing the request.",
		Detail:  "java.lang.RuntimeException: " + fmt.Sprintf(format, args...),
	}
}

// Settings are the controller's configuration that the lifecycle reads.
type Settings struct {
	// ClusterID is the cluster's id, as formatted.
	ClusterID string
	// NodeID is the controller's own node id.
	NodeID int32
	// SessionTimeout is broker.session.timeout.ms (Kafka's default 9 s).
	SessionTimeout time.Duration
	// Static holds the controller's own static configuration (server
	// properties) for the topic settings the lifecycle reads:
	// min.insync.replicas and unclean.leader.election.enable. Missing keys
	// take Kafka's defaults (1 and false).
	Static map[string]string
}

// DefaultSessionTimeout is broker.session.timeout.ms's default.
const DefaultSessionTimeout = 9 * time.Second

// FenceStalePeriod is how often the stale-broker task runs
// (QuorumController.maybeFenceStaleBrokerPeriodNs): an eighth of the session
// timeout, at least a millisecond.
func (s Settings) FenceStalePeriod() time.Duration {
	return max(time.Millisecond, s.SessionTimeout/8)
}

// Config resource types, as in the image.
const (
	resourceTopic  int8 = 2
	resourceBroker int8 = 4
)

// topicConfig is a topic's effective value of key as Kafka's
// KafkaConfigSchema.resolveEffectiveTopicConfig finds it for the keys read
// here (each its own broker synonym): the topic's, then this controller's
// node-level broker config, then the cluster-level one, then the static
// configuration, then def.
func (s Settings) topicConfig(im *image.Image, topic, key, def string) string {
	if v, ok := im.Config(resourceTopic, topic, key); ok {
		return v
	}
	if v, ok := im.Config(resourceBroker, strconv.Itoa(int(s.NodeID)), key); ok {
		return v
	}
	if v, ok := im.Config(resourceBroker, "", key); ok {
		return v
	}
	if v, ok := s.Static[key]; ok {
		return v
	}
	return def
}

// minISR is the topic's effective min.insync.replicas capped at its
// replication factor (that of partition 0, as Kafka takes it). A value that
// is not a number counts as 1 (Kafka throws; validation keeps such values
// out of its configs).
func (s Settings) minISR(im *image.Image, t *image.Topic) int {
	v, err := strconv.Atoi(strings.TrimSpace(s.topicConfig(im, t.Name(), "min.insync.replicas", "1")))
	if err != nil {
		v = 1
	}
	if p, ok := t.Partition(0); ok {
		v = min(v, len(p.Replicas()))
	}
	return v
}

// unclean is whether the topic allows unclean leader election
// (Boolean.parseBoolean: "true" in any case).
func (s Settings) unclean(im *image.Image, t *image.Topic) bool {
	return strings.EqualFold(s.topicConfig(im, t.Name(), "unclean.leader.election.enable", "false"), "true")
}
