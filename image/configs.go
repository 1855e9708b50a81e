package image

import "slices"

// configSupported is Kafka 4.4's DefaultSupportedConfigChecker, which its
// controllers and brokers apply when they replay a ConfigRecord: a key their
// configuration schema does not define is skipped, not kept. Any broker key
// is kept; topic, client-metrics and group keys must be among the names
// below; every other resource type is skipped whole.
func configSupported(resourceType int8, name string) bool {
	switch resourceType {
	case brokerResource:
		return true
	case topicResource:
		return has(topicConfigNames, name)
	case clientMetricsResource:
		return has(clientMetricsConfigNames, name)
	case groupResource:
		return has(groupConfigNames, name)
	}
	return false
}

func has(sorted []string, s string) bool {
	_, ok := slices.BinarySearch(sorted, s)
	return ok
}

// The name sets of Kafka 4.4.0's LogConfig.configNames(),
// ClientMetricsConfigs.configNames() and GroupConfig.configNames(), printed
// from its jars, sorted.
var (
	topicConfigNames = []string{
		"cleanup.policy", "compression.gzip.level", "compression.lz4.level", "compression.type",
		"compression.zstd.level", "delete.retention.ms", "errors.deadletterqueue.group.enable",
		"file.delete.delay.ms", "flush.messages", "flush.ms", "follower.replication.throttled.replicas",
		"index.interval.bytes", "internal.segment.bytes", "leader.replication.throttled.replicas",
		"local.retention.bytes", "local.retention.ms", "max.compaction.lag.ms",
		"max.decompressed.message.bytes", "max.message.bytes", "message.timestamp.after.max.ms",
		"message.timestamp.before.max.ms", "message.timestamp.type", "min.cleanable.dirty.ratio",
		"min.compaction.lag.ms", "min.insync.replicas", "preallocate", "remote.copy.lag.bytes",
		"remote.copy.lag.ms", "remote.log.copy.disable", "remote.log.delete.on.disable",
		"remote.storage.enable", "retention.bytes", "retention.ms", "segment.bytes", "segment.index.bytes",
		"segment.jitter.ms", "segment.ms", "unclean.leader.election.enable",
	}
	clientMetricsConfigNames = []string{"interval.ms", "match", "metrics"}
	groupConfigNames         = []string{
		"consumer.assignment.interval.ms", "consumer.assignor.offload.enable", "consumer.heartbeat.interval.ms",
		"consumer.session.timeout.ms", "errors.deadletterqueue.copy.record.enable",
		"errors.deadletterqueue.topic.name", "share.assignment.interval.ms", "share.assignor.offload.enable",
		"share.auto.offset.reset", "share.delivery.count.limit", "share.heartbeat.interval.ms",
		"share.isolation.level", "share.partition.max.record.locks", "share.record.lock.duration.ms",
		"share.renew.acknowledge.enable", "share.session.timeout.ms", "streams.acceptable.recovery.lag",
		"streams.assignment.interval.ms", "streams.assignor.name", "streams.assignor.offload.enable",
		"streams.heartbeat.interval.ms", "streams.initial.rebalance.delay.ms", "streams.num.standby.replicas",
		"streams.num.warmup.replicas", "streams.rack.aware.assignment.tags", "streams.session.timeout.ms",
		"streams.task.offset.interval.ms",
	}
)
