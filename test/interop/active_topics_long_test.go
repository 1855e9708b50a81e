//go:build interoplong

package interop

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

const classTopics = "org.apache.kafka.tools.TopicCommand"

// TestKraftdActiveControllerTopicsLong: against a kraftd-only quorum (the active side on)
// with three Kafka 4.4.0 brokers, Kafka's admin tools bootstrapped to a broker (which
// forwards to kraftd in Envelopes, or sends CreateTopics itself) create a topic with three
// replicas, describe it, add partitions, set and describe a topic config, and delete the
// topic.
func TestKraftdActiveControllerTopicsLong(t *testing.T) {
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	K := kafkatest.SideKraftd
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{K, K, K}, Controllers: true,
		KraftdProps: kafkatest.Props{config.ActiveControllerKey: "true"}})
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	if _, _, err := q.WaitLeader(0, activeBound); err != nil {
		t.Fatal(err)
	}
	brokers := q.StartBrokers(101, 102, 103)
	t.Cleanup(func() { keepBrokerLogs(t, q, brokers...) })
	cl := kafkatest.NewClient(t, brokers[0].Addr, brokers[1].Addr, brokers[2].Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	waitBrokers(t, ctx, cl, []int32{101, 102, 103})

	bs := brokers[0].Addr
	run := func(class string, args ...string) string {
		t.Helper()
		out, err := env.RunTool(ctx, class, append([]string{"--bootstrap-server", bs}, args...)...)
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", class, args, err, out)
		}
		return out
	}
	run(classTopics, "--create", "--topic", "orders", "--partitions", "2", "--replication-factor", "3")
	waitDescribe := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(activeBound)
		for {
			out := run(classTopics, "--describe", "--topic", "orders")
			if strings.Contains(out, want) {
				return out
			}
			if time.Now().After(deadline) {
				t.Fatalf("kafka-topics --describe never showed %q:\n%s", want, out)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	out := waitDescribe("PartitionCount: 2")
	if !strings.Contains(out, "ReplicationFactor: 3") {
		t.Errorf("kafka-topics --describe:\n%s", out)
	}
	run(classTopics, "--alter", "--topic", "orders", "--partitions", "4")
	waitDescribe("PartitionCount: 4")

	run(classConfigs, "--alter", "--entity-type", "topics", "--entity-name", "orders", "--add-config", "retention.ms=60000")
	deadline := time.Now().Add(activeBound)
	for {
		out := run(classConfigs, "--describe", "--entity-type", "topics", "--entity-name", "orders")
		if strings.Contains(out, "retention.ms=60000") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kafka-configs --describe never showed retention.ms=60000:\n%s", out)
		}
		time.Sleep(500 * time.Millisecond)
	}

	run(classTopics, "--delete", "--topic", "orders")
	deadline = time.Now().Add(activeBound)
	for strings.Contains(run(classTopics, "--list"), "orders") {
		if time.Now().After(deadline) {
			t.Fatal("topic orders still listed after kafka-topics --delete")
		}
		time.Sleep(500 * time.Millisecond)
	}
}
