package config

import "strings"

// ActiveControllerKey turns the active controller on or off (kraftd's own
// key; default true unless kraftd.controller.leadership.deferral.enable is
// set true): a kraftd voter of __cluster_metadata that raft makes leader
// becomes Kafka's active controller (docs/design/controller.md). Off, it is
// a standby only and, by default, defers leadership to a controller that
// can be active. Read with the quorum keys (readQuorum).
const ActiveControllerKey = "kraftd.controller.active.enable"

// activeKeys are the keys of the active controller.
var activeKeys = []string{
	ActiveControllerKey, "metadata.max.idle.interval.ms", "broker.session.timeout.ms",
	"broker.heartbeat.interval.ms", "min.insync.replicas",
	"num.partitions", "default.replication.factor", "delete.topic.enable",
	"auto.leader.rebalance.enable", "leader.imbalance.check.interval.seconds",
	"unclean.leader.election.interval.ms",
}

// Kafka's defaults.
const (
	defaultMaxIdleIntervalMs    = 500
	defaultSessionTimeoutMs     = 9000
	defaultHeartbeatIntervalMs  = 2000
	defaultStaticMinInsyncRepls = "1"
)

// readActive reads the active controller's settings.
func (c *Config) readActive(r *reader) {
	c.MaxIdleIntervalMs = r.int("metadata.max.idle.interval.ms", defaultMaxIdleIntervalMs, 0)
	c.BrokerSessionTimeoutMs = r.int("broker.session.timeout.ms", defaultSessionTimeoutMs, 1)
	c.BrokerHeartbeatIntervalMs = r.int("broker.heartbeat.interval.ms", defaultHeartbeatIntervalMs, 1)
	c.MinInsyncReplicas = r.get("min.insync.replicas", defaultStaticMinInsyncRepls)
	c.NumPartitions = r.int32("num.partitions", 1, 1)
	c.DefaultReplicationFactor = int16(r.int32("default.replication.factor", 1, 1))
	c.DeleteTopicEnable = r.bool("delete.topic.enable", true)
	c.AutoLeaderRebalance = r.bool("auto.leader.rebalance.enable", true)
	c.LeaderImbalanceCheckIntervalSeconds = r.int("leader.imbalance.check.interval.seconds", 300, 1)
	c.UncleanElectionIntervalMs = r.int("unclean.leader.election.interval.ms", 300000, 1)
	if c.ActiveController {
		refusePluggedKeys(r)
	}
}

// pluggedKeys name Java classes Kafka's active controller would load and
// consult on every request (spec 8.3). kraftd runs no Java code, so an
// active-capable node refuses to start with one rather than serve without
// the checks the operator asked for. A standby-only node decides nothing
// they would check.
var pluggedKeys = []string{"authorizer.class.name", "alter.config.policy.class.name", "create.topic.policy.class.name"}

func refusePluggedKeys(r *reader) {
	for _, k := range pluggedKeys {
		if v, ok := r.p.Get(k); ok && strings.TrimSpace(v) != "" {
			r.bad("%s: kraftd cannot load Java classes and has no equivalent of %q; remove the key (or set %s=false)", k, v, ActiveControllerKey)
		}
	}
}
