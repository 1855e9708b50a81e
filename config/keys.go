package config

import (
	"fmt"
	"sort"

	"github.com/kraftd/kraftd/security"
)

// knownKeys are the keys Config reads, one list per concern. A new concern
// (security: ssl.*, sasl.*; metrics: metric.reporters, metrics.*) adds its
// file with a read function called from New and its key list here.
var knownKeys = keySet(roleKeys, listenerKeys, quorumKeys, logKeys, socketKeys, metricsKeys, processKeys, activeKeys)

// ignoredKafkaKeys are real Kafka settings that kraftd accepts without effect
// (thread pools, JVM-side tuning, broker settings): no warning for them.
var ignoredKafkaKeys = keySet([]string{
	"num.network.threads", "num.io.threads", "num.partitions",
	"socket.send.buffer.bytes", "socket.receive.buffer.bytes",
	"num.recovery.threads.per.data.dir", "offsets.topic.replication.factor",
	"transaction.state.log.replication.factor", "transaction.state.log.min.isr",
	"share.coordinator.state.topic.replication.factor", "share.coordinator.state.topic.min.isr",
	"log.retention.hours", "log.segment.bytes", "log.retention.check.interval.ms",
	"log.retention.bytes", "inter.broker.listener.name", "broker.id",
	"unstable.api.versions.enable",
	"unstable.feature.versions.enable", "group.initial.rebalance.delay.ms",
	"auto.create.topics.enable",
	"default.replication.factor", "log.flush.interval.messages",
	"log.flush.interval.ms",
})

func keySet(lists ...[]string) map[string]bool {
	set := map[string]bool{}
	for _, l := range lists {
		for _, k := range l {
			set[k] = true
		}
	}
	return set
}

// warnUnknownKeys adds a warning per key that is neither read nor a known
// Kafka setting (likely a typo), sorted for stable output.
func (c *Config) warnUnknownKeys(p *Properties) {
	var unknown []string
	for _, k := range p.Keys {
		if !knownKeys[k] && !ignoredKafkaKeys[k] && !security.IsSecurityKey(k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		where := "from --override"
		if line := p.Lines[k]; line > 0 {
			where = fmt.Sprintf("line %d", line)
		} else if o := p.Origins[k]; o != "" {
			where = "from " + o
		}
		c.Warnings = append(c.Warnings, fmt.Sprintf("unknown configuration key %q (%s) is ignored", k, where))
	}
}
