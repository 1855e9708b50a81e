// Package replication is the active controller's topic and partition
// operations, as Kafka 4.4.0's ReplicationControlManager (and, for producer
// ids, ProducerIdControlManager) decides them: CreateTopics, DeleteTopics,
// CreatePartitions, AlterPartition, ElectLeaders with the periodic leader
// balancing, AssignReplicasToDirs, and AllocateProducerIds, with Kafka's validation order, error
// codes and messages, and the records Kafka writes, byte for byte.
//
// It is deterministic and pure: every operation reads the controller's
// working image and returns the records to append and the answer; the random
// sources (replica placement and topic ids) are injected. Placement is
// controller/placement, partition changes controller/partitionchange and
// topic configs controller/configs. See docs/design/controller-replication.md.
package replication

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kraftd/kraftd/controller/placement"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// Record is a record an operation writes, with the version to write it at.
type Record struct {
	Record  metadata.Record
	Version int16
}

// Result is what an operation decides: the records to append, in order, and
// the answer to send once the last of them commits. Atomic results go in one
// batch (Kafka's ControllerResult.atomicOf); the others may be split.
type Result[T any] struct {
	Records  []Record
	Atomic   bool
	Response T
}

// Error is a refusal of a whole request (a top-level error code, or the code
// every item answers with): a Kafka error code and Kafka 4.4.0's message.
type Error struct {
	Code    int16
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s", kerr.ErrorForCode(e.Code), e.Message)
}

// Unwrap makes errors.Is(err, kerr.X) work.
func (e *Error) Unwrap() error { return kerr.ErrorForCode(e.Code) }

// MaxRecordsPerRequest is the most records one client request may write
// (Kafka's MAX_RECORDS_PER_USER_OP): beyond it the request fails whole with
// errBatchTooLarge, as Kafka's controller turns its
// BoundedListTooLongException into a PolicyViolationException.
const MaxRecordsPerRequest = 10000

var errBatchTooLarge = &Error{Code: kerr.PolicyViolation.Code, Message: "Unable to perform excessively large batch operation."}

// Op is what every operation is given besides its request.
type Op struct {
	// Image is the controller's working image: the committed metadata and
	// every record appended since, replayed.
	Image *image.Image
	// APIVersion is the version of the request being answered.
	APIVersion int16
	// Settings are the controller's configuration.
	Settings *Settings
	// Random is the replica placer's random source, one for the life of the
	// controller as Kafka's placer keeps its java.util.Random.
	Random placement.Random
	// NewUUID draws a random UUID (Kafka's Uuid.randomUuid draws
	// java.util.UUID.randomUUID); topic ids are drawn from it.
	NewUUID func() uuid.UUID
	// ShuttingDown says which brokers the heartbeat tracker has in
	// controlled shutdown (they take no new replicas); nil uses the
	// registrations' InControlledShutdown.
	ShuttingDown func(*image.Broker) bool
}

// Settings are the controller's static configuration that these operations
// read.
type Settings struct {
	// NodeID is the controller's own node id (its BROKER "<id>" configs
	// take part in effective topic configs).
	NodeID int32
	// DefaultNumPartitions is num.partitions (Kafka's default 1): what a
	// CreateTopics NumPartitions of -1 means.
	DefaultNumPartitions int32
	// DefaultReplicationFactor is default.replication.factor (Kafka's
	// default 1).
	DefaultReplicationFactor int16
	// Static holds the controller's static server properties, for the
	// topic config keys' server synonyms.
	Static map[string]string
	// DeleteTopicEnable is delete.topic.enable (Kafka's default true).
	DeleteTopicEnable bool
}

// DefaultSettings are Kafka's defaults.
func DefaultSettings() *Settings {
	return &Settings{NodeID: 1, DefaultNumPartitions: 1, DefaultReplicationFactor: 1, DeleteTopicEnable: true}
}

// reserved are Kafka's reserved uuids (Uuid.RESERVED: ZERO_UUID and
// ONE_UUID, the metadata topic's id).
func reserved(u uuid.UUID) bool {
	for _, b := range u[:15] {
		if b != 0 {
			return false
		}
	}
	return u[15] < 2
}

// newTopicID is Uuid.randomUuid: a random uuid that is not reserved and
// whose URL-safe base64 form does not start with '-' (its top six bits
// 111110).
func newTopicID(draw func() uuid.UUID) uuid.UUID {
	for {
		u := draw()
		if !reserved(u) && u[0]>>2 != 62 {
			return u
		}
	}
}

func strp(s string) *string { return &s }

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
