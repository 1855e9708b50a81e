//go:build interoplong

package interop

import (
	"context"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// activeBound bounds every wait of the active-controller scenario: a hang bound, not a
// speed goal.
const activeBound = 90 * time.Second

// TestKraftdActiveControllerBrokersLong: a kraftd-only quorum (K,K,K, formatted by
// kafka-storage format, the active side on) activates: kafka-dump-log
// --cluster-metadata-decoder shows the bootstrap records in a metadata transaction. Three
// Kafka 4.4.0 brokers register, heartbeat and start ("Kafka Server started" needs their
// registration and unfencing); a client sees all three through a broker. A broker killed
// -9 drops out of the brokers a broker lists (fenced by the stale-broker task once its
// session expires); restarted, it registers again and starts. SIGTERM: the broker is
// granted its controlled shutdown and exits.
func TestKraftdActiveControllerBrokersLong(t *testing.T) {
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	K := kafkatest.SideKraftd
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{K, K, K}, Controllers: true,
		KafkaFormatArgs: []string{"--release-version", "4.4-IV2"},
		KraftdProps:     kafkatest.Props{config.ActiveControllerKey: "true"}})
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	leader, epoch, err := q.WaitLeader(0, activeBound)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kraftd node %d leads epoch %d", leader, epoch)

	brokers := q.StartBrokers(101, 102, 103)
	t.Cleanup(func() { keepBrokerLogs(t, q, brokers...) })
	addrs := []string{brokers[0].Addr, brokers[1].Addr, brokers[2].Addr}
	cl := kafkatest.NewClient(t, addrs...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	waitBrokers(t, ctx, cl, []int32{101, 102, 103})

	checkActivationDump(t, env, q, leader)

	// kill -9: fenced once its session (9 s) expires, so it leaves the brokers listed.
	brokers[2].Kill()
	waitBrokers(t, ctx, cl, []int32{101, 102})
	cfg := q.BrokerConfig(103)
	cfg.NoFormat, cfg.Dir, cfg.Port = true, brokers[2].LogDir, brokers[2].Port
	restarted := env.StartBroker(t, cfg)
	brokers = append(brokers, restarted)
	waitBrokers(t, ctx, cl, []int32{101, 102, 103})

	// SIGTERM: a controlled shutdown the controller grants; the JVM exits on its own.
	brokers[1].Terminate()
	select {
	case <-brokers[1].Done():
	case <-time.After(activeBound):
		t.Fatalf("broker 102 did not exit within %v of SIGTERM", activeBound)
	}
	if !strings.Contains(brokers[1].Log(), "controlled shutdown") {
		t.Errorf("broker 102's log does not mention its controlled shutdown")
	}
	waitBrokers(t, ctx, cl, []int32{101, 103})
}

// waitBrokers waits until a broker's Metadata lists exactly ids (the unfenced brokers).
func waitBrokers(t *testing.T, ctx context.Context, cl *kafkatest.Client, ids []int32) {
	t.Helper()
	deadline := time.Now().Add(activeBound)
	var got []int32
	for time.Now().Before(deadline) {
		md, err := cl.Admin.BrokerMetadata(ctx)
		if err == nil {
			got = got[:0]
			for _, b := range md.Brokers {
				got = append(got, b.NodeID)
			}
			slices.Sort(got)
			if slices.Equal(got, ids) {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("brokers listed %v, want %v", got, ids)
}

// checkActivationDump reads the leader's segments with kafka-dump-log: after the
// LeaderChange record, BeginTransaction "Bootstrap records", metadata.version first among
// the FeatureLevel records, then EndTransaction.
func checkActivationDump(t *testing.T, env *kafkatest.Env, q *kafkatest.MixedRaft, leader int32) {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(q.Node(leader).PartitionDir, "*.log"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no segments in %s", q.Node(leader).PartitionDir)
	}
	sort.Strings(segs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := env.DumpLog(ctx, kafkatest.DumpOptions{DeepIteration: true, ClusterMetadataDecoder: true}, segs[0])
	if err != nil {
		t.Fatal(err)
	}
	files, err := kafkatest.ParseDumpLog(out)
	if err != nil || len(files) == 0 {
		t.Fatalf("dump: %v", err)
	}
	var kinds []string
	for _, b := range files[0].Batches {
		for _, r := range b.Records {
			kinds = append(kinds, r.Rest)
		}
	}
	begin := slices.IndexFunc(kinds, func(s string) bool { return strings.Contains(s, `"BEGIN_TRANSACTION_RECORD"`) })
	end := slices.IndexFunc(kinds, func(s string) bool { return strings.Contains(s, `"END_TRANSACTION_RECORD"`) })
	if begin < 0 || end < begin || !strings.Contains(kinds[begin], "Bootstrap records") {
		t.Fatalf("no bootstrap transaction in the dump:\n%s", strings.Join(kinds[:min(len(kinds), 30)], "\n"))
	}
	if first := kinds[begin+1]; !strings.Contains(first, "FEATURE_LEVEL_RECORD") || !strings.Contains(first, "metadata.version") {
		t.Errorf("the first bootstrap record is not metadata.version: %s", first)
	}
	noops := 0
	for _, k := range kinds[end:] {
		if strings.Contains(k, "NO_OP_RECORD") {
			noops++
		}
	}
	if noops == 0 {
		t.Errorf("no NoOpRecord after the activation")
	}
}
