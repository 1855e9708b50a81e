package configs

import "slices"

// Type is a ConfigDef type.
type Type int8

const (
	Boolean Type = iota
	String
	Int
	Short
	Long
	Double
	List
	Class
	Password
)

var typeNames = [...]string{"BOOLEAN", "STRING", "INT", "SHORT", "LONG", "DOUBLE", "LIST", "CLASS", "PASSWORD"}

// String is the name Kafka gives the type (ConfigDef.Type's enum name).
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "UNKNOWN"
}

// Synonym is a server property that supplies a topic key's value when the
// topic does not set it (ServerTopicConfigSynonyms), with the factor that
// turns its unit into the topic key's milliseconds (1 when none).
type Synonym struct {
	Name   string
	Factor int64 // 1, 60000 (minutes) or 3600000 (hours)
}

// Key is one topic configuration key as LogConfig defines it.
type Key struct {
	Name       string
	Type       Type
	Default    string // ConfigDef.convertToString of the default
	HasDefault bool   // false only for internal.segment.bytes (default null)
	Validator  Validator
	Internal   bool // defineInternal: accepted, but left out of effective configs unless set
	Synonyms   []Synonym
}

func syn(names ...string) []Synonym {
	s := make([]Synonym, len(names))
	for i, n := range names {
		s[i] = Synonym{n, 1}
	}
	return s
}

const (
	minuteMs = 60 * 1000
	hourMs   = 60 * minuteMs
	maxLong  = "9223372036854775807"
)

// topicKeys is Kafka 4.4.0's LogConfig ConfigDef in definition order, which
// is the order ConfigDef.parse checks keys in (so the order errors are
// found in). TestTopicSchemaMatchesKafka (test/interop) compares it with
// the jar field by field.
var topicKeys = []Key{
	{"segment.bytes", Int, "1073741824", true, atLeast(1048576), false, syn("log.segment.bytes")},
	{"segment.ms", Long, "604800000", true, atLeast(1), false, []Synonym{{"log.roll.ms", 1}, {"log.roll.hours", hourMs}}},
	{"segment.jitter.ms", Long, "0", true, atLeast(0), false, []Synonym{{"log.roll.jitter.ms", 1}, {"log.roll.jitter.hours", hourMs}}},
	{"segment.index.bytes", Int, "10485760", true, atLeast(4), false, syn("log.index.size.max.bytes")},
	{"flush.messages", Long, maxLong, true, atLeast(1), false, syn("log.flush.interval.messages")},
	{"flush.ms", Long, maxLong, true, atLeast(0), false, syn("log.flush.interval.ms", "log.flush.scheduler.interval.ms")},
	{"retention.bytes", Long, "-1", true, nil, false, syn("log.retention.bytes")},
	{"retention.ms", Long, "604800000", true, atLeast(-1), false, []Synonym{{"log.retention.ms", 1}, {"log.retention.minutes", minuteMs}, {"log.retention.hours", hourMs}}},
	{"max.message.bytes", Int, "1048588", true, atLeast(0), false, syn("message.max.bytes")},
	{"max.decompressed.message.bytes", Int, "2147483639", true, between(1, 2147483639), false, syn("max.decompressed.message.bytes")},
	{"index.interval.bytes", Int, "4096", true, atLeast(0), false, syn("log.index.interval.bytes")},
	{"delete.retention.ms", Long, "86400000", true, atLeast(0), false, syn("log.cleaner.delete.retention.ms")},
	{"min.compaction.lag.ms", Long, "0", true, atLeast(0), false, syn("log.cleaner.min.compaction.lag.ms")},
	{"max.compaction.lag.ms", Long, maxLong, true, atLeast(1), false, syn("log.cleaner.max.compaction.lag.ms")},
	{"file.delete.delay.ms", Long, "60000", true, atLeast(0), false, syn("log.segment.delete.delay.ms")},
	{"min.cleanable.dirty.ratio", Double, "0.5", true, between(0, 1), false, syn("log.cleaner.min.cleanable.ratio")},
	{"cleanup.policy", List, "delete", true, validList{"compact", "delete"}, false, syn("log.cleanup.policy")},
	{"unclean.leader.election.enable", Boolean, "false", true, nil, false, syn("unclean.leader.election.enable")},
	{"min.insync.replicas", Int, "1", true, atLeast(1), false, syn("min.insync.replicas")},
	{"compression.type", String, "producer", true, validString{"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}, false, syn("compression.type")},
	{"compression.gzip.level", Int, "-1", true, gzipLevel{}, false, syn("compression.gzip.level")},
	{"compression.lz4.level", Int, "9", true, between(1, 17), false, syn("compression.lz4.level")},
	{"compression.zstd.level", Int, "3", true, between(-131072, 22), false, syn("compression.zstd.level")},
	{"preallocate", Boolean, "false", true, nil, false, syn("log.preallocate")},
	{"message.timestamp.type", String, "CreateTime", true, validString{"CreateTime", "LogAppendTime"}, false, syn("log.message.timestamp.type")},
	{"message.timestamp.before.max.ms", Long, maxLong, true, atLeast(0), false, syn("log.message.timestamp.before.max.ms")},
	{"message.timestamp.after.max.ms", Long, "3600000", true, atLeast(0), false, syn("log.message.timestamp.after.max.ms")},
	{"leader.replication.throttled.replicas", List, "", true, throttledReplicas{}, false, nil},
	{"follower.replication.throttled.replicas", List, "", true, throttledReplicas{}, false, nil},
	{"remote.storage.enable", Boolean, "false", true, nil, false, nil},
	{"local.retention.ms", Long, "-2", true, atLeast(-2), false, syn("log.local.retention.ms")},
	{"local.retention.bytes", Long, "-2", true, atLeast(-2), false, syn("log.local.retention.bytes")},
	{"remote.log.copy.disable", Boolean, "false", true, nil, false, nil},
	{"remote.copy.lag.ms", Long, "0", true, atLeast(-1), false, syn("log.remote.copy.lag.ms")},
	{"remote.copy.lag.bytes", Long, "-1", true, atLeast(-1), false, syn("log.remote.copy.lag.bytes")},
	{"remote.log.delete.on.disable", Boolean, "false", true, nil, false, nil},
	{"errors.deadletterqueue.group.enable", Boolean, "false", true, nil, false, nil},
	{"internal.segment.bytes", Int, "", false, nil, true, nil},
}

var topicKeyIndex = func() map[string]int {
	m := make(map[string]int, len(topicKeys))
	for i, k := range topicKeys {
		m[k.Name] = i
	}
	return m
}()

// TopicKeys returns the topic schema in LogConfig's definition order.
func TopicKeys() []Key { return slices.Clone(topicKeys) }

// TopicKey returns the topic key called name.
func TopicKey(name string) (Key, bool) {
	i, ok := topicKeyIndex[name]
	if !ok {
		return Key{}, false
	}
	return topicKeys[i], true
}

// brokerListKeys are the LIST-typed keys of Kafka 4.4.0's KafkaConfig with
// their defaults (convertToString; "" for none): the BROKER keys that
// APPEND and SUBTRACT accept (KafkaConfigSchema.isSplittable), starting
// from the default when the resource has no value. Sorted by name; the
// interop test compares it with the jar.
var brokerListKeys = map[string]string{
	"advertised.listeners":                     "",
	"config.providers":                         "",
	"controller.listener.names":                "",
	"controller.quorum.bootstrap.servers":      "",
	"controller.quorum.voters":                 "",
	"cordoned.log.dirs":                        "",
	"early.start.listeners":                    "",
	"group.consumer.assignors":                 "uniform,range",
	"group.coordinator.rebalance.protocols":    "classic,consumer,streams",
	"group.share.assignors":                    "simple",
	"group.streams.assignors":                  "sticky",
	"group.streams.rack.aware.assignment.tags": "",
	"kafka.metrics.reporters":                  "",
	"listeners":                                "PLAINTEXT://:9092",
	"log.cleanup.policy":                       "delete",
	"log.dir":                                  "/tmp/kafka-logs",
	"log.dirs":                                 "",
	"metric.reporters":                         "org.apache.kafka.common.metrics.JmxReporter",
	"process.roles":                            "",
	"sasl.enabled.mechanisms":                  "GSSAPI",
	"sasl.kerberos.principal.to.local.rules":   "DEFAULT",
	"sasl.oauthbearer.expected.audience":       "",
	"ssl.cipher.suites":                        "",
	"ssl.enabled.protocols":                    "TLSv1.2,TLSv1.3",
}

// brokerListKey reports whether a BROKER key is a LIST and its default.
func brokerListKey(name string) (def string, ok bool) {
	def, ok = brokerListKeys[name]
	return def, ok
}

// BrokerListKeys returns the LIST keys of the BROKER schema with their
// defaults ("" for none).
func BrokerListKeys() map[string]string {
	out := make(map[string]string, len(brokerListKeys))
	for k, v := range brokerListKeys {
		out[k] = v
	}
	return out
}
