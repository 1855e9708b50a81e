//go:build interoplong

package interop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/admin"
	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// Kafka 4.4.0's tool classes the side-by-side script runs besides kafka-topics,
// kafka-configs and kafka-features.
const (
	classConsoleProducer   = "org.apache.kafka.tools.ConsoleProducer"
	classConsoleConsumer   = "org.apache.kafka.tools.consumer.ConsoleConsumer"
	classLeaderElection    = "org.apache.kafka.tools.LeaderElectionCommand"
	classConsumerGroups    = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
	classTransactions      = "org.apache.kafka.tools.TransactionsCommand"
	classBrokerAPIVersions = "org.apache.kafka.tools.BrokerApiVersionsCommand"
)

// sbsBound bounds every wait of the side-by-side script: a hang bound, not a speed goal.
const sbsBound = 90 * time.Second

// sbsStep is one tool run of the script: its output and what must match.
type sbsStep struct{ name, raw, norm string }

// sbsCluster is one of the two clusters: three controllers of one side, three Kafka
// 4.4.0 brokers, and the transcript of the script run against it.
type sbsCluster struct {
	t       *testing.T
	side    kafkatest.Side
	env     *kafkatest.Env
	q       *kafkatest.MixedRaft
	ctx     context.Context
	brokers map[int32]*kafkatest.Broker
	all     []*kafkatest.Broker // every broker process run, for the logs
	ids     []int32
	bs      string
	steps   []sbsStep
}

// TestSideBySideToolsLong runs the same script of Kafka's own tools against three Kafka
// 4.4.0 controllers and then against three kraftd controllers (the active side on), each
// with three Kafka brokers, and requires every tool's output to be the same once what a
// process picks at random is normalized (sidebyside_test.go): kafka-topics create (with
// --config, with the controller's defaults, with manual assignments, and refused creates),
// describe, alter --partitions, list, delete; kafka-configs alter and describe of a topic,
// a broker and the cluster default, min.insync.replicas under ELR, client quotas and SCRAM
// credentials, and refused changes; a broker killed -9 (ISRs shrink, ELR fills and a config
// change clears it, a single-replica partition goes offline, topics are placed and grown
// around the fenced broker) and restarted, then kafka-leader-election, preferred and
// unclean; console producer (acks=all)
// and consumer in a group, every record counted; an idempotent and a transactional franz-go
// producer, the read_committed console consumer seeing exactly the committed records;
// kafka-consumer-groups, kafka-transactions, kafka-features (described, upgraded,
// downgraded, disabled, refused), kafka-broker-api-versions and kafka-metadata-quorum
// through a broker.
func TestSideBySideToolsLong(t *testing.T) {
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	var clusters []*sbsCluster
	// One cluster after the other: on two shared cores the tools' JVMs are CPU-bound, so
	// both at once would take as long, with twelve JVMs competing with the brokers'
	// heartbeats instead of six.
	for _, side := range []kafkatest.Side{kafkatest.SideKafka, kafkatest.SideKraftd} {
		c := &sbsCluster{side: side, env: env}
		clusters = append(clusters, c)
		t.Run(string(side), func(t *testing.T) {
			start := time.Now()
			c.t = t
			c.start()
			c.script()
			t.Logf("%s: %d tool runs in %v", side, len(c.steps), time.Since(start).Round(time.Second))
		})
	}
	sbsCompare(t, clusters[0], clusters[1])
}

// sbsCompare reports every step whose normalized output differs, with both raw outputs.
func sbsCompare(t *testing.T, a, b *sbsCluster) {
	t.Helper()
	n := min(len(a.steps), len(b.steps))
	same := 0
	for i := range n {
		x, y := a.steps[i], b.steps[i]
		if x.name != y.name {
			t.Fatalf("step %d: %s ran %q, %s ran %q", i, a.side, x.name, b.side, y.name)
		}
		if x.norm != y.norm {
			t.Errorf("step %q differs:\n--- %s (normalized):\n%s\n--- %s (normalized):\n%s\n--- %s (raw):\n%s\n--- %s (raw):\n%s",
				x.name, a.side, x.norm, b.side, y.norm, a.side, x.raw, b.side, y.raw)
			continue
		}
		same++
	}
	if len(a.steps) != len(b.steps) {
		t.Errorf("%s ran %d steps, %s %d", a.side, len(a.steps), b.side, len(b.steps))
	}
	t.Logf("%d of %d steps the same on both clusters", same, n)
	if dir := os.Getenv("KRAFTD_INTEROP_KEEP_LOGS"); dir != "" {
		for _, c := range []*sbsCluster{a, b} {
			var w strings.Builder
			for _, s := range c.steps {
				fmt.Fprintf(&w, "=== %s\n%s\n--- normalized\n%s\n\n", s.name, s.raw, s.norm)
			}
			path := filepath.Join(dir, "TestSideBySideToolsLong-"+string(c.side)+".txt")
			if err := os.WriteFile(path, []byte(w.String()), 0o644); err != nil {
				t.Log(err)
			}
		}
	}
}

func (c *sbsCluster) start() {
	t := c.t
	s := c.side
	mc := kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{s, s, s}, Controllers: true,
		// The preferred leader election is the tool's, not the periodic task's.
		Props: kafkatest.Props{"auto.leader.rebalance.enable": "false"}}
	if s == kafkatest.SideKraftd {
		mc.KraftdProps = kafkatest.Props{config.ActiveControllerKey: "true"}
	}
	c.q = c.env.NewMixedRaft(t, mc)
	for _, n := range c.q.Nodes {
		c.q.Start(n.ID)
	}
	if _, _, err := c.q.WaitLeader(0, sbsBound); err != nil {
		t.Fatal(err)
	}
	c.ids = []int32{101, 102, 103}
	bs := c.q.StartBrokers(c.ids...)
	c.brokers = map[int32]*kafkatest.Broker{}
	var addrs []string
	for _, b := range bs {
		c.brokers[b.NodeID] = b
		c.all = append(c.all, b)
		addrs = append(addrs, b.Addr)
	}
	t.Cleanup(func() { keepBrokerLogs(t, c.q, c.all...) })
	c.bs = strings.Join(addrs, ",")
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	t.Cleanup(cancel)
	c.ctx = ctx
}

// tool runs a tool class with --bootstrap-server and the brokers, and records its step:
// the output normalized by norm, or a failure normalized by sbsToolFailure.
func (c *sbsCluster) tool(step string, norm func(string) string, class string, args ...string) string {
	return c.toolInput(step, "", norm, class, args...)
}

func (c *sbsCluster) toolInput(step, stdin string, norm func(string) string, class string, args ...string) string {
	c.t.Helper()
	out, err := c.env.RunToolInput(c.ctx, stdin, class, append([]string{"--bootstrap-server", c.bs}, args...)...)
	if err != nil {
		var te *kafkatest.ToolError
		if !errors.As(err, &te) {
			c.t.Fatalf("%s: %v", step, err)
		}
		c.steps = append(c.steps, sbsStep{name: step, raw: te.Stdout + "\n[stderr]\n" + te.Stderr,
			norm: sbsToolFailure(te.ExitCode(), te.Stdout, te.Stderr)})
		return out
	}
	if norm == nil {
		norm = func(s string) string { return strings.TrimSpace(sbsAddrs(s)) }
	}
	c.steps = append(c.steps, sbsStep{name: step, raw: out, norm: norm(out)})
	return out
}

// toolUntil runs a tool until its output satisfies ok (changes reach the brokers through
// the metadata log) and records the last run.
func (c *sbsCluster) toolUntil(step string, ok func(string) bool, norm func(string) string, class string, args ...string) {
	c.t.Helper()
	deadline := time.Now().Add(sbsBound)
	for {
		out, err := c.env.RunTool(c.ctx, class, append([]string{"--bootstrap-server", c.bs}, args...)...)
		if (err == nil && ok(out)) || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	c.tool(step, norm, class, args...)
}

// has, lacks and lineHas are toolUntil's conditions.
func has(want string) func(string) bool {
	return func(out string) bool { return strings.Contains(out, want) }
}
func lacks(gone string) func(string) bool {
	return func(out string) bool { return !strings.Contains(out, gone) }
}

// lineHas: some line holds both a and b (a feature's line and its level).
func lineHas(a, b string) func(string) bool {
	return func(out string) bool {
		return slices.ContainsFunc(strings.Split(out, "\n"), func(l string) bool { return strings.Contains(l, a) && strings.Contains(l, b) })
	}
}

// describeTopic records kafka-topics --describe of topic, normalized with killed as K.
func (c *sbsCluster) describeTopic(step, topic string, killed int32) {
	c.t.Helper()
	c.tool(step, func(s string) string { return sbsTopicDescribe(s, c.ids, killed) }, classTopics, "--describe", "--topic", topic)
}

// sbsParts is the partitions of every topic a broker's Metadata lists.
type sbsParts map[string][]kmsg.MetadataResponseTopicPartition

// waitMetadata waits until the Metadata of every running broker satisfies ok.
func (c *sbsCluster) waitMetadata(what string, ok func(sbsParts) bool) sbsParts {
	c.t.Helper()
	deadline := time.Now().Add(sbsBound)
	for {
		var last sbsParts
		all := true
		for _, id := range c.ids {
			b := c.brokers[id]
			if exited, _ := b.Exited(); exited {
				continue
			}
			parts, err := sbsMetadata(c.ctx, b.Addr)
			if err != nil || !ok(parts) {
				all = false
				break
			}
			last = parts
		}
		if all && last != nil {
			return last
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: the brokers' metadata never showed %s within %v", c.side, what, sbsBound)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func sbsMetadata(ctx context.Context, addr string) (sbsParts, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := admin.Request(ctx, addr, kmsg.NewPtrMetadataRequest())
	if err != nil {
		return nil, err
	}
	parts := sbsParts{}
	for _, tp := range resp.(*kmsg.MetadataResponse).Topics {
		if tp.ErrorCode == 0 && tp.Topic != nil {
			parts[*tp.Topic] = tp.Partitions
		}
	}
	return parts, nil
}

// ready: topic has n partitions, each led, with isr in-sync replicas.
func ready(topic string, n, isr int) func(sbsParts) bool {
	return func(p sbsParts) bool {
		ps, ok := p[topic]
		if !ok || len(ps) != n {
			return false
		}
		for _, pt := range ps {
			if pt.Leader < 0 || len(pt.ISR) != isr {
				return false
			}
		}
		return true
	}
}

const (
	sbsOrders   = "sbs-orders"
	sbsCompact  = "sbs-compact"
	sbsELR      = "sbs-elr"
	sbsSingle   = "sbs-single"
	sbsDefaults = "sbs-defaults"
	sbsTwo      = "sbs-two"
	sbsThree    = "sbs-three"
	sbsAssigned = "sbs.assigned"
	sbsIdem     = "sbs-idempotent"
	sbsTx       = "sbs-transactional"
	sbsGroup    = "sbs-group"
	sbsTxID     = "sbs-tx"
)

func (c *sbsCluster) script() {
	c.topicsAndConfigs()
	c.quotasAndScram()
	c.preferredElection()
	c.consoleRoundTrip()
	c.transactions()
	c.features()
	c.tool("kafka-broker-api-versions", sbsAPIVersions, classBrokerAPIVersions)
	c.tool("kafka-metadata-quorum describe --status", sbsQuorumStatus, kafkatest.ClassMetadataQuorum, "describe", "--status")
	c.tool("kafka-metadata-quorum describe --replication", sbsReplication, kafkatest.ClassMetadataQuorum, "describe", "--replication")
	c.tool("delete "+sbsCompact, nil, classTopics, "--delete", "--topic", sbsCompact)
	c.waitMetadata(sbsCompact+" deleted", func(p sbsParts) bool { _, ok := p[sbsCompact]; return !ok })
	c.tool("list after delete", nil, classTopics, "--list")
	c.tool("describe deleted", nil, classTopics, "--describe", "--topic", sbsCompact)
}

func (c *sbsCluster) topicsAndConfigs() {
	c.tool("create "+sbsOrders, nil, classTopics, "--create", "--topic", sbsOrders, "--partitions", "6", "--replication-factor", "3")
	c.tool("create "+sbsCompact+" with configs", nil, classTopics, "--create", "--topic", sbsCompact, "--partitions", "3",
		"--replication-factor", "3", "--config", "cleanup.policy=compact", "--config", "min.insync.replicas=2",
		"--config", "segment.bytes=1048576")
	c.tool("create existing", nil, classTopics, "--create", "--topic", sbsOrders, "--partitions", "1", "--replication-factor", "1")
	c.tool("create replication factor 4", nil, classTopics, "--create", "--topic", "sbs-too-many", "--partitions", "1", "--replication-factor", "4")
	c.tool("create invalid config value", nil, classTopics, "--create", "--topic", "sbs-bad-value", "--partitions", "1",
		"--replication-factor", "1", "--config", "retention.ms=soon")
	c.tool("create unknown config", nil, classTopics, "--create", "--topic", "sbs-bad-name", "--partitions", "1",
		"--replication-factor", "1", "--config", "no.such.config=1")
	// Under ELR (on by default), a partition whose ISR falls below min.insync.replicas
	// keeps the replicas it loses in its ELR.
	c.tool("create "+sbsELR, nil, classTopics, "--create", "--topic", sbsELR, "--partitions", "3",
		"--replication-factor", "3", "--config", "min.insync.replicas=3")
	c.waitMetadata(sbsOrders+" ready", ready(sbsOrders, 6, 3))
	c.waitMetadata(sbsCompact+" ready", ready(sbsCompact, 3, 3))
	// One replica each: the partition on the broker killed later goes offline.
	c.tool("create "+sbsSingle, nil, classTopics, "--create", "--topic", sbsSingle, "--partitions", "3", "--replication-factor", "1")
	// The controller's num.partitions and default.replication.factor.
	c.tool("create "+sbsDefaults, nil, classTopics, "--create", "--topic", sbsDefaults)
	c.waitMetadata(sbsOrders+" ready", ready(sbsOrders, 6, 3))
	c.waitMetadata(sbsCompact+" ready", ready(sbsCompact, 3, 3))
	c.waitMetadata(sbsELR+" ready", ready(sbsELR, 3, 3))
	c.waitMetadata(sbsSingle+" ready", ready(sbsSingle, 3, 1))
	c.waitMetadata(sbsDefaults+" ready", ready(sbsDefaults, 1, 1))
	c.describeTopic("describe "+sbsOrders, sbsOrders, 0)
	c.describeTopic("describe "+sbsCompact, sbsCompact, 0)
	c.describeTopic("describe "+sbsELR, sbsELR, 0)
	c.describeTopic("describe "+sbsSingle, sbsSingle, sbsAnyBroker)
	c.describeTopic("describe "+sbsDefaults, sbsDefaults, sbsAnyBroker)
	// Its one replica lands on a broker chosen at random (on both systems, as Kafka's
	// placer starts at a random broker): gone before a broker is killed, so the elections
	// below fail for the same partitions on both.
	c.tool("delete "+sbsDefaults, nil, classTopics, "--delete", "--topic", sbsDefaults)
	c.waitMetadata(sbsDefaults+" deleted", func(p sbsParts) bool { _, ok := p[sbsDefaults]; return !ok })

	c.tool("create with replica assignment", nil, classTopics, "--create", "--topic", sbsAssigned,
		"--replica-assignment", "101:102:103,103:102:101,102:101:103")
	c.waitMetadata(sbsAssigned+" ready", ready(sbsAssigned, 3, 3))
	c.tool("describe replica assignment", sbsTopicIDs, classTopics, "--describe", "--topic", sbsAssigned)
	c.tool("alter --partitions with assignment", nil, classTopics, "--alter", "--topic", sbsAssigned, "--partitions", "4",
		"--replica-assignment", "101:102:103,103:102:101,102:101:103,103:101:102")
	c.waitMetadata(sbsAssigned+" with 4 partitions", ready(sbsAssigned, 4, 3))
	c.tool("describe replica assignment after alter", sbsTopicIDs, classTopics, "--describe", "--topic", sbsAssigned)
	c.tool("create colliding name", nil, classTopics, "--create", "--topic", "sbs_assigned", "--partitions", "1", "--replication-factor", "1")
	c.tool("create duplicate replicas", nil, classTopics, "--create", "--topic", "sbs-duplicate", "--replica-assignment", "101:101")
	c.tool("create unknown broker", nil, classTopics, "--create", "--topic", "sbs-unknown-broker", "--replica-assignment", "101:999")
	c.tool("create uneven assignment", nil, classTopics, "--create", "--topic", "sbs-uneven", "--replica-assignment", "101:102,103")
	c.tool("delete "+sbsAssigned, nil, classTopics, "--delete", "--topic", sbsAssigned)
	c.waitMetadata(sbsAssigned+" deleted", func(p sbsParts) bool { _, ok := p[sbsAssigned]; return !ok })

	c.tool("alter --partitions 8", nil, classTopics, "--alter", "--topic", sbsOrders, "--partitions", "8")
	c.waitMetadata(sbsOrders+" with 8 partitions", ready(sbsOrders, 8, 3))
	c.describeTopic("describe after alter", sbsOrders, 0)
	c.tool("alter --partitions 4", nil, classTopics, "--alter", "--topic", sbsOrders, "--partitions", "4")
	c.tool("list", nil, classTopics, "--list")

	topic := []string{"--entity-type", "topics", "--entity-name", sbsOrders}
	c.tool("configs alter topic", nil, classConfigs, append([]string{"--alter", "--add-config", "retention.ms=3600000,max.message.bytes=2000000"}, topic...)...)
	c.toolUntil("configs describe topic", has("max.message.bytes=2000000"), nil, classConfigs, append([]string{"--describe"}, topic...)...)
	c.tool("configs delete topic config", nil, classConfigs, append([]string{"--alter", "--delete-config", "max.message.bytes"}, topic...)...)
	c.toolUntil("configs describe topic after delete", lacks("max.message.bytes"), nil, classConfigs, append([]string{"--describe"}, topic...)...)
	c.tool("configs invalid topic value", nil, classConfigs, append([]string{"--alter", "--add-config", "retention.ms=soon"}, topic...)...)
	c.tool("configs unknown topic config", nil, classConfigs, append([]string{"--alter", "--add-config", "no.such.config=1"}, topic...)...)
	c.tool("configs missing topic", nil, classConfigs, "--alter", "--entity-type", "topics", "--entity-name", "sbs-missing", "--add-config", "retention.ms=1")
	c.describeTopic("describe with configs", sbsOrders, 0)

	def := []string{"--entity-type", "brokers", "--entity-default"}
	c.tool("configs describe cluster default", nil, classConfigs, append([]string{"--describe"}, def...)...)
	c.tool("configs alter cluster default", nil, classConfigs, append([]string{"--alter", "--add-config", "log.cleaner.threads=2,log.retention.ms=7200000"}, def...)...)
	c.toolUntil("configs describe cluster default after alter", has("log.cleaner.threads=2"), nil, classConfigs, append([]string{"--describe"}, def...)...)
	broker := []string{"--entity-type", "brokers", "--entity-name", "101"}
	c.tool("configs alter broker 101", nil, classConfigs, append([]string{"--alter", "--add-config", "log.cleaner.threads=3"}, broker...)...)
	c.toolUntil("configs describe broker 101", has("log.cleaner.threads=3"), nil, classConfigs, append([]string{"--describe"}, broker...)...)
	c.tool("configs invalid broker value", nil, classConfigs, append([]string{"--alter", "--add-config", "log.cleaner.threads=many"}, def...)...)
	c.tool("configs read-only broker config", nil, classConfigs, append([]string{"--alter", "--add-config", "log.dirs=/tmp/elsewhere"}, broker...)...)
	c.tool("configs delete cluster default", nil, classConfigs, append([]string{"--alter", "--delete-config", "log.retention.ms"}, def...)...)
	c.toolUntil("configs describe cluster default after delete", lacks("log.retention.ms"), nil, classConfigs, append([]string{"--describe"}, def...)...)

	// min.insync.replicas under ELR: the cluster value may change, not go; no broker may
	// set its own.
	c.tool("configs cluster min.insync.replicas=2", nil, classConfigs, append([]string{"--alter", "--add-config", "min.insync.replicas=2"}, def...)...)
	c.toolUntil("configs describe cluster min.insync.replicas=2", has("min.insync.replicas=2"), nil, classConfigs, append([]string{"--describe"}, def...)...)
	c.describeTopic("describe with cluster min.insync.replicas=2", sbsOrders, 0)
	c.tool("configs broker min.insync.replicas under ELR", nil, classConfigs, append([]string{"--alter", "--add-config", "min.insync.replicas=2"}, broker...)...)
	c.tool("configs delete cluster min.insync.replicas under ELR", nil, classConfigs, append([]string{"--alter", "--delete-config", "min.insync.replicas"}, def...)...)
	c.tool("configs cluster min.insync.replicas=1", nil, classConfigs, append([]string{"--alter", "--add-config", "min.insync.replicas=1"}, def...)...)
	c.toolUntil("configs describe cluster min.insync.replicas=1", has("min.insync.replicas=1"), nil, classConfigs, append([]string{"--describe"}, def...)...)
}

// features describes the finalized features and changes them with kafka-features
// (UpdateFeatures), refusals included, ELR turned off and on again among them.
func (c *sbsCluster) features() {
	c.tool("kafka-features describe", sbsEpochs, classFeatures, "describe")
	c.tool("features upgrade to the current level", nil, classFeatures, "upgrade", "--feature", "group.version=1")
	c.tool("features upgrade dry run", nil, classFeatures, "upgrade", "--feature", "streams.version=1", "--dry-run")
	c.tool("features disable streams.version", nil, classFeatures, "disable", "--feature", "streams.version")
	c.tool("features downgrade transaction.version", nil, classFeatures, "downgrade", "--feature", "transaction.version=1")
	c.tool("features disable eligible.leader.replicas.version", nil, classFeatures, "disable", "--feature", "eligible.leader.replicas.version")
	c.toolUntil("kafka-features describe after the changes", lineHas("eligible.leader.replicas.version", "FinalizedVersionLevel: 0"), sbsEpochs, classFeatures, "describe")
	c.tool("features upgrade above the supported level", nil, classFeatures, "upgrade", "--feature", "group.version=7")
	c.tool("features upgrade an unknown feature", nil, classFeatures, "upgrade", "--feature", "no.such.feature=1")
	c.tool("features downgrade metadata.version", nil, classFeatures, "downgrade", "--metadata", "4.0-IV3")
	c.tool("features upgrade without --feature", nil, classFeatures, "upgrade", "--release-version", "4.4-IV2")
	c.toolUntil("kafka-features describe after the release upgrade", lineHas("kraft.version", "FinalizedVersionLevel: 1"), sbsEpochs, classFeatures, "describe")
	c.tool("configs describe cluster default after ELR came back", nil, classConfigs, "--describe", "--entity-type", "brokers", "--entity-default")
}

// quotasAndScram sets, describes and deletes client quotas (AlterClientQuotas) and SCRAM
// credentials (AlterUserScramCredentials) with kafka-configs, refusals included.
func (c *sbsCluster) quotasAndScram() {
	client := []string{"--entity-type", "clients", "--entity-name", "sbs-client"}
	user := []string{"--entity-type", "users", "--entity-name", "sbs-user"}
	c.tool("quota alter client", nil, classConfigs, append([]string{"--alter", "--add-config", "producer_byte_rate=1024,consumer_byte_rate=2048"}, client...)...)
	c.tool("quota alter user and client", nil, classConfigs, append([]string{"--alter", "--add-config", "request_percentage=50"}, append(user, client...)...)...)
	c.tool("quota alter default user", nil, classConfigs, "--alter", "--entity-type", "users", "--entity-default", "--add-config", "producer_byte_rate=4096")
	c.tool("quota alter ip", nil, classConfigs, "--alter", "--entity-type", "ips", "--entity-name", "10.1.2.3", "--add-config", "connection_creation_rate=10")
	c.toolUntil("quota describe client", has("consumer_byte_rate"), sbsEntityConfigs, classConfigs, append([]string{"--describe"}, client...)...)
	c.toolUntil("quota describe user and client", has("request_percentage"), sbsEntityConfigs, classConfigs, append([]string{"--describe"}, append(user, client...)...)...)
	c.toolUntil("quota describe ip", has("connection_creation_rate"), sbsEntityConfigs, classConfigs, "--describe", "--entity-type", "ips", "--entity-name", "10.1.2.3")
	c.tool("quota negative value", nil, classConfigs, append([]string{"--alter", "--add-config", "producer_byte_rate=-5"}, client...)...)
	c.tool("quota unknown key", nil, classConfigs, append([]string{"--alter", "--add-config", "no_such_quota=1"}, client...)...)
	c.tool("quota delete", nil, classConfigs, append([]string{"--alter", "--delete-config", "consumer_byte_rate"}, client...)...)
	c.toolUntil("quota describe client after delete", lacks("consumer_byte_rate"), sbsEntityConfigs, classConfigs, append([]string{"--describe"}, client...)...)

	// Kafka alters one credential of a user per request.
	c.tool("scram alter two mechanisms at once", nil, classConfigs, append([]string{"--alter", "--add-config",
		"SCRAM-SHA-256=[iterations=8192,password=pw],SCRAM-SHA-512=[password=pw2]"}, user...)...)
	c.tool("scram alter", nil, classConfigs, append([]string{"--alter", "--add-config", "SCRAM-SHA-256=[iterations=8192,password=pw]"}, user...)...)
	c.tool("scram alter second mechanism", nil, classConfigs, append([]string{"--alter", "--add-config", "SCRAM-SHA-512=[password=pw2]"}, user...)...)
	c.toolUntil("scram describe", has("SCRAM-SHA-512"), sbsEntityConfigs, classConfigs, append([]string{"--describe"}, user...)...)
	c.tool("scram too few iterations", nil, classConfigs, append([]string{"--alter", "--add-config", "SCRAM-SHA-256=[iterations=100,password=pw]"}, user...)...)
	c.tool("scram delete", nil, classConfigs, append([]string{"--alter", "--delete-config", "SCRAM-SHA-512"}, user...)...)
	c.tool("scram delete missing", nil, classConfigs, "--alter", "--delete-config", "SCRAM-SHA-512", "--entity-type", "users", "--entity-name", "sbs-nobody")
	c.toolUntil("scram describe after delete", lacks("SCRAM-SHA-512"), sbsEntityConfigs, classConfigs, append([]string{"--describe"}, user...)...)
	c.tool("users describe", func(s string) string { return sbsSortedLines(sbsEntityConfigs(s)) }, classConfigs, "--describe", "--entity-type", "users")
}

// preferredElection kills -9 the broker leading the most partitions of sbs-orders, waits
// until it is fenced and out of every ISR, restarts it, waits until every ISR is whole
// again, and runs kafka-leader-election on the partitions left on non-preferred leaders.
func (c *sbsCluster) preferredElection() {
	t := c.t
	parts := c.waitMetadata("sbs-orders led", ready(sbsOrders, 8, 3))
	leads := map[int32]int{}
	for _, p := range parts[sbsOrders] {
		leads[p.Leader]++
	}
	killed := c.ids[0]
	for _, id := range c.ids {
		if leads[id] > leads[killed] {
			killed = id
		}
	}
	b := c.brokers[killed]
	b.Kill()
	killedAt := time.Now()
	movedOff := func(p sbsParts) bool {
		for _, topic := range []string{sbsOrders, sbsCompact, sbsELR} {
			for _, pt := range p[topic] {
				if pt.Leader < 0 || pt.Leader == killed || slices.Contains(pt.ISR, killed) {
					return false
				}
			}
		}
		return !slices.ContainsFunc(p[sbsSingle], func(pt kmsg.MetadataResponseTopicPartition) bool { return pt.Leader == killed })
	}
	c.waitMetadata(fmt.Sprintf("broker %d out of every ISR", killed), movedOff)
	t.Logf("%s: broker %d (leading %d of 8 partitions) killed -9: out of every ISR after %v", c.side, killed, leads[killed],
		time.Since(killedAt).Round(100*time.Millisecond))
	c.describeTopic("describe with the broker killed", sbsOrders, killed)
	c.describeTopic("describe "+sbsCompact+" with the broker killed", sbsCompact, killed)
	c.describeTopic("describe "+sbsELR+" with the broker killed", sbsELR, killed)
	c.describeTopic("describe "+sbsSingle+" with the broker killed", sbsSingle, killed)
	c.tool("unclean election while a partition is offline", sbsElectionOutput, classLeaderElection, "--election-type", "unclean", "--all-topic-partitions")
	c.tool("election while the preferred leader is down", sbsElectionOutput, classLeaderElection, "--election-type", "preferred", "--all-topic-partitions")

	// Placement leaves the fenced broker out; a config change clears the ELR it fills.
	c.tool("create replication factor 3 with a broker down", nil, classTopics, "--create", "--topic", sbsThree, "--partitions", "3", "--replication-factor", "3")
	c.waitMetadata(sbsThree+" led", func(p sbsParts) bool { return len(p[sbsThree]) == 3 && ready(sbsThree, 3, 2)(p) })
	c.tool("describe "+sbsThree+" placed with a broker down", func(s string) string { return sbsTopicDescribeOrdered(s, c.ids, killed) },
		classTopics, "--describe", "--topic", sbsThree)
	c.tool("create replication factor 2 with a broker down", nil, classTopics, "--create", "--topic", sbsTwo, "--partitions", "4", "--replication-factor", "2")
	c.waitMetadata(sbsTwo+" ready", ready(sbsTwo, 4, 2))
	c.describeTopic("describe "+sbsTwo+" placed with a broker down", sbsTwo, killed)
	c.tool("alter --partitions with a broker down", nil, classTopics, "--alter", "--topic", sbsCompact, "--partitions", "4")
	c.waitMetadata(sbsCompact+" with 4 partitions", ready(sbsCompact, 4, 2))
	c.describeTopic("describe "+sbsCompact+" grown with a broker down", sbsCompact, killed)
	c.tool("configs min.insync.replicas=2 while the ELR is filled", nil, classConfigs, "--alter", "--entity-type", "topics",
		"--entity-name", sbsELR, "--add-config", "min.insync.replicas=2")
	c.toolUntil("describe "+sbsELR+" after its min.insync.replicas changed", has("Configs: min.insync.replicas=2"),
		func(s string) string { return sbsTopicDescribe(s, c.ids, killed) }, classTopics, "--describe", "--topic", sbsELR)

	cfg := c.q.BrokerConfig(killed)
	cfg.NoFormat, cfg.Dir, cfg.Port = true, b.LogDir, b.Port
	nb := c.env.StartBroker(t, cfg)
	c.brokers[killed] = nb
	c.all = append(c.all, nb)
	c.waitMetadata("every ISR whole", func(p sbsParts) bool {
		return ready(sbsOrders, 8, 3)(p) && ready(sbsCompact, 4, 3)(p) && ready(sbsELR, 3, 3)(p) && ready(sbsSingle, 3, 1)(p) &&
			ready(sbsTwo, 4, 2)(p) && ready(sbsThree, 3, 3)(p)
	})
	c.describeTopic("describe after the restart", sbsOrders, killed)
	c.describeTopic("describe "+sbsELR+" after the restart", sbsELR, killed)
	c.describeTopic("describe "+sbsSingle+" after the restart", sbsSingle, killed)
	c.tool("describe "+sbsThree+" after the restart", func(s string) string { return sbsTopicDescribeOrdered(s, c.ids, killed) },
		classTopics, "--describe", "--topic", sbsThree)
	c.tool("preferred election", sbsElectionOutput, classLeaderElection, "--election-type", "preferred", "--all-topic-partitions")
	c.waitMetadata("preferred leaders", func(p sbsParts) bool {
		for _, topic := range []string{sbsOrders, sbsCompact, sbsELR} {
			for _, pt := range p[topic] {
				if len(pt.Replicas) == 0 || pt.Leader != pt.Replicas[0] {
					return false
				}
			}
		}
		return true
	})
	c.describeTopic("describe after the election", sbsOrders, killed)
	c.tool("preferred election again", sbsElectionOutput, classLeaderElection, "--election-type", "preferred", "--all-topic-partitions")
	c.tool("preferred election of one partition", sbsElectionOutput, classLeaderElection, "--election-type", "preferred",
		"--topic", sbsOrders, "--partition", "0")
	c.tool("unclean election of one partition", sbsElectionOutput, classLeaderElection, "--election-type", "unclean",
		"--topic", sbsOrders, "--partition", "1")
	c.tool("election of a missing topic", sbsElectionOutput, classLeaderElection, "--election-type", "preferred",
		"--topic", "sbs-missing", "--partition", "0")
}

// consoleRoundTrip sends 100 lines with the console producer (acks=all) and reads them
// back with the console consumer in a group, which creates __consumer_offsets.
func (c *sbsCluster) consoleRoundTrip() {
	const n = 100
	var lines []string
	for i := range n {
		lines = append(lines, fmt.Sprintf("line-%03d", i))
	}
	c.toolInput("console producer", strings.Join(lines, "\n")+"\n", nil, classConsoleProducer,
		"--topic", sbsOrders, "--command-property", "acks=all")
	out := c.tool("console consumer", sbsSortedLines, classConsoleConsumer, "--topic", sbsOrders, "--group", sbsGroup,
		"--from-beginning", "--max-messages", strconv.Itoa(n), "--timeout-ms", "45000")
	if got := sbsSortedLines(out); got != strings.Join(lines, "\n") {
		c.t.Errorf("%s: the console consumer read:\n%s\nwant the %d lines produced", c.side, got, n)
	}
	c.tool("consumer groups list", sbsSortedLines, classConsumerGroups, "--list")
	c.tool("consumer groups describe", sbsGroupDescribe, classConsumerGroups, "--describe", "--group", sbsGroup)
	c.tool("list with internal topics", nil, classTopics, "--list")
}

// transactions writes with an idempotent and a transactional franz-go producer (two
// committed transactions around an aborted one) and reads both topics back with the
// console consumer at read_committed.
func (c *sbsCluster) transactions() {
	t := c.t
	for _, topic := range []string{sbsIdem, sbsTx} {
		c.tool("create "+topic, nil, classTopics, "--create", "--topic", topic, "--partitions", "3", "--replication-factor", "3")
		c.waitMetadata(topic+" ready", ready(topic, 3, 3))
	}
	seeds := strings.Split(c.bs, ",")
	idem, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic(sbsIdem))
	if err != nil {
		t.Fatal(err)
	}
	defer idem.Close()
	var idemWant []string
	var rs []*kgo.Record
	for i := range 200 {
		v := fmt.Sprintf("idempotent-%03d", i)
		idemWant = append(idemWant, v)
		rs = append(rs, kgo.StringRecord(v))
	}
	if err := idem.ProduceSync(c.ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("%s: idempotent produce: %v", c.side, err)
	}

	tx, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.TransactionalID(sbsTxID), kgo.DefaultProduceTopic(sbsTx),
		kgo.TransactionTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	var committed []string
	for _, batch := range []struct {
		prefix string
		n      int
		commit bool
	}{{"committed-a", 50, true}, {"aborted", 20, false}, {"committed-b", 30, true}} {
		if err := tx.BeginTransaction(); err != nil {
			t.Fatalf("%s: begin transaction: %v", c.side, err)
		}
		var rs []*kgo.Record
		for i := range batch.n {
			v := fmt.Sprintf("%s-%03d", batch.prefix, i)
			rs = append(rs, kgo.StringRecord(v))
			if batch.commit {
				committed = append(committed, v)
			}
		}
		if err := tx.ProduceSync(c.ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("%s: transactional produce: %v", c.side, err)
		}
		if err := tx.EndTransaction(c.ctx, kgo.TransactionEndTry(batch.commit)); err != nil {
			t.Fatalf("%s: end transaction (commit %v): %v", c.side, batch.commit, err)
		}
	}

	out := c.tool("console consumer idempotent", sbsSortedLines, classConsoleConsumer, "--topic", sbsIdem,
		"--from-beginning", "--max-messages", "200", "--timeout-ms", "45000")
	if got := sbsSortedLines(out); got != strings.Join(idemWant, "\n") {
		t.Errorf("%s: the console consumer read %d lines of %s, want the 200 produced", c.side, strings.Count(got, "\n")+1, sbsIdem)
	}
	out = c.tool("console consumer read_committed", sbsSortedLines, classConsoleConsumer, "--topic", sbsTx,
		"--from-beginning", "--isolation-level", "read_committed", "--max-messages", strconv.Itoa(len(committed)), "--timeout-ms", "45000")
	slices.Sort(committed)
	if got := sbsSortedLines(out); got != strings.Join(committed, "\n") {
		t.Errorf("%s: the read_committed console consumer read:\n%s\nwant the %d committed records", c.side, got, len(committed))
	}
	c.checkCommitted(committed)
	c.tool("transactions list", func(s string) string {
		return sbsTable(s, "TransactionalId", "TransactionalId", "TransactionState")
	}, classTransactions, "list")
	c.tool("transactions describe", func(s string) string {
		return sbsTable(s, "CoordinatorId", "TransactionalId", "ProducerEpoch", "TransactionState", "TopicPartitions")
	}, classTransactions, "describe", "--transactional-id", sbsTxID)
}

// checkCommitted reads sbs-transactional to its end with franz-go: at read_committed
// exactly the committed records, each once; at read_uncommitted the aborted ones too.
func (c *sbsCluster) checkCommitted(committed []string) {
	t := c.t
	for _, iso := range []struct {
		name      string
		level     kgo.IsolationLevel
		committed bool
	}{{"read_committed", kgo.ReadCommitted(), true}, {"read_uncommitted", kgo.ReadUncommitted(), false}} {
		cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(c.bs, ",")...), kgo.ConsumeTopics(sbsTx),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(iso.level))
		if err != nil {
			t.Fatal(err)
		}
		want := len(committed)
		if !iso.committed {
			want += 20
		}
		seen := map[string]int{}
		total := 0
		ctx, cancel := context.WithTimeout(c.ctx, sbsBound)
		for total < want && ctx.Err() == nil {
			cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++; total++ })
		}
		// Nothing more comes: a short extra poll finds no record beyond want.
		extra, cancelExtra := context.WithTimeout(c.ctx, 3*time.Second)
		cl.PollFetches(extra).EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++; total++ })
		cancelExtra()
		cancel()
		cl.Close()
		if total != want {
			t.Errorf("%s: a %s consumer read %d records of %s, want %d", c.side, iso.name, total, sbsTx, want)
		}
		for v, n := range seen {
			if n != 1 || (iso.committed && strings.HasPrefix(v, "aborted-")) {
				t.Errorf("%s: a %s consumer read %s %d times", c.side, iso.name, v, n)
			}
		}
	}
}
