package image

import (
	"cmp"
	"iter"
	"strings"

	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// Image is the cluster metadata as of one offset of __cluster_metadata:
// Kafka's MetadataImage plus the indexes its controller keeps beside it. It
// is immutable, and safe to read from any number of goroutines; what its
// methods return is shared with it and with the images around it and must
// not be modified. A Builder makes the next one.
type Image struct {
	st state
}

// state is an image's content. Every map is persistent (pmap), so copying a
// state is O(1) and a Builder's changes never reach the image it started
// from.
type state struct {
	prov Provenance

	mv       metadata.Level // 0 until a FeatureLevelRecord sets metadata.version
	features pmap[string, int16]

	brokers     pmap[int32, *Broker]
	controllers pmap[int32, *Controller]
	dirOwners   pmap[string, int32] // idKey(log directory) -> the broker that registered it
	fenced      int                 // brokers fenced
	shutting    int                 // brokers in controlled shutdown

	topics     pmap[string, *Topic] // by idKey
	topicNames pmap[string, uuid.UUID]
	ordinals   pmap[uint32, uuid.UUID] // Topic.ord -> topic id
	nextOrd    uint32
	collisions pmap[string, struct{}] // collisionKey of the names with '.' or '_'
	partitions int

	// The broker indexes: broker -> the partitions (partKey) whose ISR holds
	// it, marked when it leads them; broker -> those whose ELR holds it.
	isr        pmap[int32, pmap[uint64, bool]]
	elr        pmap[int32, pmap[uint64, struct{}]]
	leaderless pmap[uint64, struct{}] // leader -1
	imbalanced pmap[uint64, struct{}] // leader is not the preferred replica

	configs     pmap[string, string]  // configKey
	quotas      pmap[string, float64] // quotaKey
	producerIDs producerIDs
	acls        pmap[string, *ACL]             // by idKey
	aclContents pmap[string, struct{}]         // the ACLs' content, as Kafka's controller keeps it (existingAcls)
	scram       pmap[string, *ScramCredential] // scramKey
	tokens      pmap[string, *DelegationToken]
}

// Provenance is where an image stands in the log.
type Provenance struct {
	// Offset is the last offset the image contains (a record, or a control
	// batch's last offset): -1 for the empty image; a snapshot's end offset
	// minus one when just loaded from it.
	Offset int64
	// Epoch is the leader epoch of the batch that held it.
	Epoch int32
}

// producerIDs is Kafka's ProducerIdsImage with the controller's notion of
// whether a block was ever allocated (its next id must then grow).
type producerIDs struct {
	next int64 // -1: none
	set  bool
}

var empty = &Image{st: state{prov: Provenance{Offset: -1, Epoch: -1}, producerIDs: producerIDs{next: -1}}}

// Empty returns the image before any record.
func Empty() *Image { return empty }

// Provenance returns the offset and epoch the image stands at.
func (im *Image) Provenance() Provenance { return im.st.prov }

// MetadataVersion returns the finalized metadata.version, false before one.
func (im *Image) MetadataVersion() (metadata.Level, bool) { return im.st.mv, im.st.mv != 0 }

// FeatureLevel returns a finalized feature's level, 0 when not finalized.
// metadata.version is MetadataVersion's; kraft.version lives in raft's
// control records, not here.
func (im *Image) FeatureLevel(name string) int16 {
	l, _ := im.st.features.get(name)
	return l
}

// Features yields the finalized features other than metadata.version, by
// name.
func (im *Image) Features() iter.Seq2[string, int16] {
	return func(yield func(string, int16) bool) {
		for k, v := range im.st.features.all() {
			if !yield(k, v) {
				return
			}
		}
	}
}

// ELREnabled is Kafka's FeaturesImage.isElrEnabled:
// eligible.leader.replicas.version is at least 1.
func (im *Image) ELREnabled() bool { return im.FeatureLevel(elrFeature) >= 1 }

const elrFeature = "eligible.leader.replicas.version"

// Broker returns a registered broker.
func (im *Image) Broker(brokerID int32) (*Broker, bool) { return im.st.brokers.get(brokerID) }

// Brokers yields the registered brokers by id.
func (im *Image) Brokers() iter.Seq[*Broker] { return values(&im.st.brokers) }

// Controller returns a registered controller.
func (im *Image) Controller(controllerID int32) (*Controller, bool) {
	return im.st.controllers.get(controllerID)
}

// Controllers yields the registered controllers by id.
func (im *Image) Controllers() iter.Seq[*Controller] { return values(&im.st.controllers) }

// DirectoryOwner returns the broker that registered a log directory.
func (im *Image) DirectoryOwner(dir uuid.UUID) (int32, bool) { return im.st.dirOwners.get(idKey(dir)) }

// Topic returns a topic by id.
func (im *Image) Topic(topicID uuid.UUID) (*Topic, bool) { return im.st.topics.get(idKey(topicID)) }

// TopicByName returns a topic by name.
func (im *Image) TopicByName(name string) (*Topic, bool) {
	tid, ok := im.st.topicNames.get(name)
	if !ok {
		return nil, false
	}
	return im.Topic(tid)
}

// Topics yields the topics by id.
func (im *Image) Topics() iter.Seq[*Topic] { return values(&im.st.topics) }

// Partition returns one partition.
func (im *Image) Partition(topicID uuid.UUID, partition int32) (Partition, bool) {
	t, ok := im.Topic(topicID)
	if !ok {
		return Partition{}, false
	}
	return t.Partition(partition)
}

// CollidingTopics yields the existing topics whose names differ from name
// only in '.' versus '_' (Kafka refuses to create such a topic: both map to
// one metric name), name itself included when it exists.
func (im *Image) CollidingTopics(name string) iter.Seq[string] {
	return func(yield func(string) bool) {
		prefix := collisionKey(collisionForm(name), "")
		for k := range im.st.collisions.from(prefix) {
			if !strings.HasPrefix(k, prefix) || !yield(k[len(prefix):]) {
				return
			}
		}
	}
}

// Config returns one configuration value of a resource.
func (im *Image) Config(resourceType int8, resource, name string) (string, bool) {
	return im.st.configs.get(configKey(resourceType, resource, name))
}

// Configs yields a resource's configuration, by key.
func (im *Image) Configs(resourceType int8, resource string) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		prefix := string(configPrefix(resourceType, resource))
		for k, v := range im.st.configs.from(prefix) {
			if !strings.HasPrefix(k, prefix) || !yield(k[len(prefix):], v) {
				return
			}
		}
	}
}

// ConfigEntry is one configuration value of one resource.
type ConfigEntry struct {
	ResourceType int8 // Kafka's ConfigResource.Type id: TOPIC 2, BROKER 4, CLIENT_METRICS 16, GROUP 32
	ResourceName string
	Name, Value  string
}

// AllConfigs yields every configuration value, by resource type, resource
// name and key.
func (im *Image) AllConfigs() iter.Seq[ConfigEntry] {
	return func(yield func(ConfigEntry) bool) {
		for k, v := range im.st.configs.all() {
			typ, res, name := splitConfigKey(k)
			if !yield(ConfigEntry{typ, res, name, v}) {
				return
			}
		}
	}
}

// ClientQuota is one quota value of one entity.
type ClientQuota struct {
	Entity QuotaEntity
	Key    string
	Value  float64
}

// ClientQuotas yields every client quota, by entity and key.
func (im *Image) ClientQuotas() iter.Seq[ClientQuota] {
	return func(yield func(ClientQuota) bool) {
		for k, v := range im.st.quotas.all() {
			entity, key := splitQuotaKey(k)
			if !yield(ClientQuota{decodeEntity(entity), key, v}) {
				return
			}
		}
	}
}

// EntityQuotas yields one entity's quota values by key; the entity's parts
// may come in any order, the last of a type counting, as replay keys them.
func (im *Image) EntityQuotas(entity QuotaEntity) iter.Seq2[string, float64] {
	parts := make([]metadata.ClientQuotaRecordEntityData, len(entity))
	for i, p := range entity {
		parts[i] = metadata.ClientQuotaRecordEntityData{EntityType: p.Type, EntityName: p.Name}
	}
	prefix := quotaKey(entityKey(parts), "")
	return func(yield func(string, float64) bool) {
		for k, v := range im.st.quotas.from(prefix) {
			if !strings.HasPrefix(k, prefix) || !yield(k[len(prefix):], v) {
				return
			}
		}
	}
}

// NextProducerID is the first producer id of the next block to hand out, -1
// before any.
func (im *Image) NextProducerID() int64 { return im.st.producerIDs.next }

// ACL returns an access control entry by id.
func (im *Image) ACL(aclID uuid.UUID) (*ACL, bool) { return im.st.acls.get(idKey(aclID)) }

// ACLs yields the access control entries by id.
func (im *Image) ACLs() iter.Seq[*ACL] { return values(&im.st.acls) }

// ScramCredentials yields the SCRAM credentials by mechanism and user.
func (im *Image) ScramCredentials() iter.Seq[*ScramCredential] { return values(&im.st.scram) }

// ScramCredential returns a user's credential for a mechanism (1
// SCRAM-SHA-256, 2 SCRAM-SHA-512).
func (im *Image) ScramCredential(mechanism int8, user string) (*ScramCredential, bool) {
	return im.st.scram.get(scramKey(mechanism, user))
}

// DelegationTokens yields the delegation tokens by id.
func (im *Image) DelegationTokens() iter.Seq[*DelegationToken] { return values(&im.st.tokens) }

// TopicPartition names a partition.
type TopicPartition struct {
	TopicID   uuid.UUID
	Partition int32
}

// PartitionsInISR yields the partitions whose ISR holds broker (Kafka's
// BrokersToIsrs), topic by topic in the order they were created.
func (im *Image) PartitionsInISR(broker int32) iter.Seq[TopicPartition] {
	return im.brokerEntries(broker, false)
}

// PartitionsLedBy yields the partitions broker leads while in their ISR
// (Kafka's partitionsLedByBroker, which the controlled-shutdown check asks).
func (im *Image) PartitionsLedBy(broker int32) iter.Seq[TopicPartition] {
	return im.brokerEntries(broker, true)
}

func (im *Image) brokerEntries(broker int32, leaderOnly bool) iter.Seq[TopicPartition] {
	return func(yield func(TopicPartition) bool) {
		entries, _ := im.st.isr.get(broker)
		for k, leads := range entries.all() {
			if (!leaderOnly || leads) && !yield(im.resolve(k)) {
				return
			}
		}
	}
}

// PartitionsInELR yields the partitions whose ELR holds broker (Kafka's
// BrokersToElrs).
func (im *Image) PartitionsInELR(broker int32) iter.Seq[TopicPartition] {
	return func(yield func(TopicPartition) bool) {
		entries, _ := im.st.elr.get(broker)
		for k := range entries.all() {
			if !yield(im.resolve(k)) {
				return
			}
		}
	}
}

// LeaderlessPartitions yields the partitions with leader -1: the offline
// ones, which unfencing a broker tries to elect.
func (im *Image) LeaderlessPartitions() iter.Seq[TopicPartition] {
	return im.partitionSet(&im.st.leaderless)
}

// ImbalancedPartitions yields the partitions whose leader is not their
// preferred replica, which the preferred leader election visits.
func (im *Image) ImbalancedPartitions() iter.Seq[TopicPartition] {
	return im.partitionSet(&im.st.imbalanced)
}

func (im *Image) partitionSet(m *pmap[uint64, struct{}]) iter.Seq[TopicPartition] {
	return func(yield func(TopicPartition) bool) {
		for k := range m.all() {
			if !yield(im.resolve(k)) {
				return
			}
		}
	}
}

func (im *Image) resolve(k uint64) TopicPartition {
	ord, part := splitPartKey(k)
	tid, _ := im.st.ordinals.get(ord)
	return TopicPartition{tid, part}
}

// Counts are the figures behind Kafka's controller metadata metrics.
type Counts struct {
	Topics, Partitions   int
	OfflinePartitions    int // leader -1
	ImbalancedPartitions int // leader is not the preferred replica
	// Brokers: Active counts the unfenced ones, in controlled shutdown or
	// not, as Kafka's ActiveBrokerCount does.
	FencedBrokers, ActiveBrokers, ControlledShutdownBrokers int
	Controllers                                             int
}

// Counts returns the metric figures, each in O(1).
func (im *Image) Counts() Counts {
	return Counts{
		Topics:                    im.st.topics.len(),
		Partitions:                im.st.partitions,
		OfflinePartitions:         im.st.leaderless.len(),
		ImbalancedPartitions:      im.st.imbalanced.len(),
		FencedBrokers:             im.st.fenced,
		ActiveBrokers:             im.st.brokers.len() - im.st.fenced,
		ControlledShutdownBrokers: im.st.shutting,
		Controllers:               im.st.controllers.len(),
	}
}

func values[K cmp.Ordered, V any](m *pmap[K, V]) iter.Seq[V] {
	return func(yield func(V) bool) {
		for _, v := range m.all() {
			if !yield(v) {
				return
			}
		}
	}
}
