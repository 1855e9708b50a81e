//go:build interoplong

package interop

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// TestKraftdActiveQuorumFormatsLong: kraftd-only quorums with the active side on, formatted
// three ways, serve three Kafka 4.4.0 brokers: each broker registers and starts, a topic
// with three replicas and min.insync.replicas=2 is created through a broker, and records
// produced to it by an idempotent producer (acks=all) are read back; no broker logs a
// metadata fault and no kraftd node an error or a connection closed unanswered.
//
//   - standalone-then-join: dynamic (KIP-853): node 1 formatted by kraftd's `controller
//     format --standalone`; node 2, formatted --no-initial-controllers with
//     controller.quorum.auto.join.enable, adds itself; node 3, formatted the same way
//     without auto-join, is added by Kafka's kafka-metadata-quorum add-controller;
//   - initial-controllers: dynamic, every node formatted by kraftd's format with the same
//     --initial-controllers;
//   - kafka-storage-static: static voters, every node formatted by Kafka's kafka-storage.
func TestKraftdActiveQuorumFormatsLong(t *testing.T) {
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	active := kafkatest.Props{config.ActiveControllerKey: "true"}
	t.Run("standalone-then-join", func(t *testing.T) {
		q := newChangeQuorum(t, env, 1, 2, 3)
		n1 := q.startKraftd(1, active, "--standalone")
		q.waitMembers(members{voters: []int32{1}}, failoverBound)
		q.startKraftd(2, active.Clone().Merge(kafkatest.Props{"controller.quorum.auto.join.enable": "true"}), "--no-initial-controllers")
		_, d := q.waitMembers(members{voters: []int32{1, 2}}, failoverBound)
		t.Logf("node 2 joined by itself: %s", formatQuorum(d))
		n3 := q.startKraftd(3, active, "--no-initial-controllers")
		q.waitObserverAt(n1, 3, d.HighWatermark, failoverBound)
		q.addWithKafka(n1, n3)
		_, d = q.waitMembers(members{voters: []int32{1, 2, 3}}, failoverBound)
		t.Logf("node 3 added by kafka-metadata-quorum add-controller: %s", formatQuorum(d))
		activeServesBrokers(t, env, q.clusterID, nil, q.bootstrap)
		for _, n := range q.nodes {
			kraftdErrors(t, n.label(), n.proc.Log())
		}
	})
	t.Run("initial-controllers", func(t *testing.T) {
		q := newChangeQuorum(t, env, 1, 2, 3)
		dirs := map[int32]string{}
		var initial []string
		for id := int32(1); id <= 3; id++ {
			dirs[id] = kafkatest.NewUUID()
			initial = append(initial, fmt.Sprintf("%d@127.0.0.1:%d:%s", id, q.ports[id], dirs[id]))
		}
		for id := int32(1); id <= 3; id++ {
			if n := q.startKraftd(id, active, "--initial-controllers", strings.Join(initial, ",")); n.dirID != dirs[id] {
				t.Fatalf("kraftd %d formatted with directory id %s, want %s from --initial-controllers", id, n.dirID, dirs[id])
			}
		}
		_, d := q.waitMembers(members{voters: []int32{1, 2, 3}}, failoverBound)
		t.Logf("formatted with --initial-controllers: %s", formatQuorum(d))
		activeServesBrokers(t, env, q.clusterID, nil, q.bootstrap)
		for _, n := range q.nodes {
			kraftdErrors(t, n.label(), n.proc.Log())
		}
	})
	t.Run("kafka-storage-static", func(t *testing.T) {
		K := kafkatest.SideKraftd
		// Any flag makes the harness format kraftd nodes with kafka-storage.
		q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{K, K, K}, Controllers: true,
			KafkaFormatArgs: []string{"--ignore-formatted"}, KraftdProps: active})
		for _, n := range q.Nodes {
			q.Start(n.ID)
		}
		id, epoch, _, err := q.WaitActiveNode(0, failoverBound)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("kraftd node %d is the active controller at epoch %d", id, epoch)
		activeServesBrokers(t, env, q.ClusterID(1), q.Voters, nil)
		for _, n := range q.Nodes {
			kraftdErrors(t, fmt.Sprintf("kraftd %d", n.ID), n.Logs())
		}
	})
}

// activeServesBrokers starts brokers 101-103 on the quorum (static voters or bootstrap
// servers), waits until a broker lists all three, creates a topic through a broker and
// produces to it and reads it back; no broker logs a metadata fault.
func activeServesBrokers(t *testing.T, env *kafkatest.Env, clusterID string, voters, bootstrap []string) {
	t.Helper()
	var cfgs []kafkatest.BrokerConfig
	for id := int32(101); id <= 103; id++ {
		cfgs = append(cfgs, kafkatest.BrokerConfig{NodeID: id, ClusterID: clusterID, Voters: voters, BootstrapServers: bootstrap})
	}
	brokers := env.StartBrokers(t, cfgs...)
	var addrs []string
	for _, b := range brokers {
		addrs = append(addrs, b.Addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cl := kafkatest.NewClient(t, addrs...)
	waitBrokers(t, ctx, cl, []int32{101, 102, 103})
	minISR := "2"
	if err := createTopicWith(ctx, addrs, "served", 3, 3, map[string]*string{"min.insync.replicas": &minISR}, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := kafkatest.WaitTopicsEverywhere(ctx, addrs, map[string]int{"served": 3}); err != nil {
		t.Fatal(err)
	}
	idempotent(t, ctx, addrs, "served", 100)
	want := make([]string, 100)
	for i := range want {
		want[i] = fmt.Sprintf("idempotent-%d", i)
	}
	if err := cl.ConsumeAll(ctx, "served", want); err != nil {
		t.Fatal(err)
	}
	for _, b := range brokers {
		metadataFaults(t, fmt.Sprintf("broker %d", b.NodeID), b.Log())
	}
}
