//go:build interoplong

package interop

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// authorizerProps give controllers and brokers Kafka's StandardAuthorizer so
// the workload can create ACLs. Everyone is a super user: until the initial
// ACL load the authorizer refuses every other principal, raft's Vote and
// Fetch included, and these ACLs are only there to be replicated.
var authorizerProps = kafkatest.Props{
	"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
	"super.users":           "User:ANONYMOUS",
}

// TestImageAgainstJVMControllersLong: a quorum of two Kafka 4.4.0 controllers
// and a kraftd voter (J,J,K) with three JVM brokers under a workload that
// writes every kind of metadata the brokers can ask for (topics created,
// deleted and grown, topic and broker configs, a broker killed -9 and
// restarted, idempotent producers, SCRAM users, client quotas, ACLs), the
// JVM controllers snapshotting every few KB. Then, all stopped:
//
//   - every record of every segment and snapshot on every node decodes
//     (protocol/metadata; raft's control records with protocol's codecs)
//     and encodes back to its bytes;
//   - at each JVM snapshot's offset, kraftd's image of its own copy of the
//     log (controller metadata --offset) holds the snapshot's records, as
//     sets;
//   - at offsets no snapshot covers, it holds what Kafka's MetadataDelta and
//     MetadataImage.write build from the same segments;
//   - each snapshot kraftd wrote itself (at its own triggers, the same
//     4096 bytes) holds what Kafka's image classes build from kraftd's
//     segments at its offset, and what a JVM snapshot at the same offset
//     holds where there is one, as sets.
func TestImageAgainstJVMControllersLong(t *testing.T) {
	t.Parallel() // see interop/doc.go
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	J, K := kafkatest.SideKafka, kafkatest.SideKraftd
	props := kafkatest.Props{"metadata.log.max.record.bytes.between.snapshots": "4096"}
	for k, v := range authorizerProps {
		props[k] = v
	}
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{J, J, K}, Controllers: true,
		Props: props, KraftdProps: kafkatest.Props{config.LeadershipDeferralKey: "true"}})
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	if active, err := q.WaitActiveController(time.Minute); err != nil || q.Node(active).Side != J {
		t.Fatalf("active controller %d (%v), want a JVM controller", active, err)
	}
	cfgs := make([]kafkatest.BrokerConfig, 3)
	for i := range cfgs {
		cfgs[i] = q.BrokerConfig(int32(101 + i))
		cfgs[i].Props = props // brokers snapshot every few KB too
	}
	brokers := env.StartBrokers(t, cfgs...)
	t.Cleanup(func() { keepBrokerLogs(t, q, brokers...) })
	var addrs []string
	for _, b := range brokers {
		addrs = append(addrs, b.Addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cl := kafkatest.NewClient(t, addrs...)
	adm := cl.Admin

	for _, tp := range []struct {
		name  string
		parts int32
		rf    int16
	}{{"orders", 3, 3}, {"events", 2, 2}, {"scratch", 1, 1}, {"audit.log", 4, 3}} {
		if err := cl.CreateTopic(ctx, tp.name, tp.parts, tp.rf); err != nil {
			t.Fatal(err)
		}
	}
	idempotent(t, ctx, addrs, "orders", 50)

	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	str := func(s string) *string { return &s }
	res, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: str("3600000")}, {Name: "min.insync.replicas", Value: str("2")}}, "orders")
	must("alter topic configs", firstErr(err, res))
	res, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "cleanup.policy", Value: str("compact")}}, "events")
	must("alter topic configs", firstErr(err, res))
	res, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "log.cleaner.threads", Value: str("2")}}, 101)
	must("alter broker configs", firstErr(err, res))
	res, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "log.retention.ms", Value: str("86400000")}})
	must("alter cluster configs", firstErr(err, res))
	cp, err := adm.CreatePartitions(ctx, 2, "events")
	must("create partitions", err)
	must("create partitions", cp.Error())
	del, err := adm.DeleteTopics(ctx, "scratch")
	must("delete topics", err)
	must("delete topics", del.Error())

	// A request names each user once.
	for _, u := range []kadm.UpsertSCRAM{
		{User: "alice", Mechanism: kadm.ScramSha256, Iterations: 8192, Password: "alice-secret"},
		{User: "bob", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "bob-secret"},
		{User: "bob", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "bob-secret"},
	} {
		scram, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{u})
		must("alter SCRAM", err)
		must("alter SCRAM", scram.Error())
	}
	scram, err := adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "bob", Mechanism: kadm.ScramSha256}}, nil)
	must("delete SCRAM", err)
	must("delete SCRAM", scram.Error())

	alice, none := "alice", (*string)(nil)
	quotas, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: &alice}}, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1048576}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: &alice}, {Type: "client-id", Name: none}}, Ops: []kadm.AlterClientQuotaOp{{Key: "consumer_byte_rate", Value: 2097152}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: none}}, Ops: []kadm.AlterClientQuotaOp{{Key: "request_percentage", Value: 200}}},
	})
	must("alter quotas", err)
	for _, q := range quotas {
		must("alter quotas", q.Err)
	}

	acl := kadm.NewACLs().Allow("User:alice").AllowHosts("*").Topics("orders").ResourcePatternType(kadm.ACLPatternLiteral).
		Operations(kadm.OpRead, kadm.OpDescribe)
	created, err := adm.CreateACLs(ctx, acl)
	must("create ACLs", err)
	for _, c := range created {
		must("create ACLs", c.Err)
	}
	pre := kadm.NewACLs().Deny("User:mallory").DenyHosts("10.0.0.1").Groups("billing-").ResourcePatternType(kadm.ACLPatternPrefixed).
		Operations(kadm.OpRead)
	created, err = adm.CreateACLs(ctx, pre)
	must("create ACLs", err)
	for _, c := range created {
		must("create ACLs", c.Err)
	}

	// kill -9 of broker 103, then its restart: fencing, ISR shrinks and leader
	// moves, a registration with a new incarnation, unfencing, ISR expansion.
	b3 := brokers[2]
	b3.Kill()
	idempotent(t, ctx, addrs[:2], "orders", 30)
	time.Sleep(12 * time.Second) // past broker.session.timeout.ms (9 s): the controller fences it
	cfg := cfgs[2]
	cfg.Port, cfg.Dir, cfg.NoFormat = b3.Port, b3.LogDir, true
	brokers[2] = env.StartBroker(t, cfg)
	if err := brokers[2].WaitStarted(registrationWait); err != nil {
		t.Fatal(err)
	}
	if err := cl.CreateTopic(ctx, "after-restart", 6, 3); err != nil {
		t.Fatal(err)
	}
	idempotent(t, ctx, addrs, "after-restart", 30)
	res, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Op: kadm.DeleteConfig}}, "orders")
	must("delete topic config", firstErr(err, res))
	if err := kafkatest.WaitTopicsEverywhere(ctx, addrs, map[string]int{"orders": 3, "events": 4, "audit.log": 4, "after-restart": 6}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.WaitCaughtUp(0, time.Minute); err != nil {
		t.Logf("voters caught up: %v", err)
	}
	stopAll(t, q, brokers)

	// (a) every record of every node re-encodes to its bytes.
	total := 0
	for _, n := range q.Nodes {
		total += reencodeAll(t, fmt.Sprintf("%s controller %d", n.Side, n.ID), n.PartitionDir)
	}
	for _, b := range brokers {
		total += reencodeAll(t, fmt.Sprintf("broker %d", b.NodeID), b.PartitionDir)
	}
	t.Logf("%d metadata and control records on %d nodes decode and re-encode to their bytes", total, len(q.Nodes)+len(brokers))

	// (b) kraftd's image at each JVM snapshot's offset is the snapshot.
	kdir := q.Node(3).PartitionDir
	kend, batchEnds := logBatchEnds(t, kdir)
	covered := map[int64]bool{}
	compared, scramLosses := 0, 0
	type copyDir struct{ label, dir string }
	var dirs []copyDir
	for _, n := range q.Nodes[:2] {
		dirs = append(dirs, copyDir{fmt.Sprintf("JVM controller %d", n.ID), n.PartitionDir})
	}
	for _, b := range brokers {
		dirs = append(dirs, copyDir{fmt.Sprintf("broker %d", b.NodeID), b.PartitionDir})
	}
	for _, cd := range dirs {
		dir := cd.dir
		l, err := metadatalog.OpenReadOnly(dir)
		if err != nil {
			t.Fatal(err)
		}
		snaps := l.Snapshots()
		paths, labels := make([]string, len(snaps)), make([]string, len(snaps))
		for i, s := range snaps {
			paths[i] = l.SnapshotPath(s)
			labels[i] = cd.label + ": " + filepath.Base(paths[i])
		}
		l.Close()
		for i, s := range snaps {
			if s.Offset == 0 || s.Offset > kend {
				continue
			}
			k := kraftdImage(t, kdir, s.Offset-1)
			if k.offset != s.Offset-1 {
				t.Errorf("%s: kraftd's image as of %d stands at %d: the snapshot is not at a batch end of kraftd's log", labels[i], s.Offset-1, k.offset)
				continue
			}
			snapRecs := snapshotFileRecords(t, paths[i])
			onlyKraftd, onlyKafka := diffImages(t, k.records, snapRecs)
			if len(onlyKraftd)+len(onlyKafka) > 0 {
				// Kafka 4.4.0's ScramDelta.apply can drop a credential
				// (docs/design/kafka-4.4-findings.md): tolerated where
				// that is the only difference and Kafka's own replay of
				// the node's log, batch by batch, agrees with kraftd.
				own := kafkaImages(t, dir, "", []int64{s.Offset - 1})[0]
				a, b := diffImages(t, k.records, own.records)
				if len(onlyKafka) == 0 && len(a)+len(b) == 0 && allScram(onlyKraftd) {
					t.Logf("%s lacks SCRAM credentials Kafka's own replay of the log holds, as kraftd's image does (Kafka's ScramDelta.apply):\n  %s",
						labels[i], strings.Join(onlyKraftd, "\n  "))
					scramLosses++
				} else {
					t.Errorf("%s: %s\nKafka's replay of %s: %s", labels[i], describeDiff(len(k.records), len(snapRecs), onlyKraftd, onlyKafka),
						dir, describeDiff(len(k.records), len(own.records), a, b))
					continue
				}
			}
			covered[s.Offset-1] = true
			compared++
		}
	}
	if compared < 3 {
		t.Errorf("only %d JVM snapshots to compare with", compared)
	}
	t.Logf("kraftd's image equals %d JVM snapshots (controllers' and brokers'), %d of them but for SCRAM credentials Kafka lost", compared, scramLosses)

	// (c) at batch ends no snapshot covers: Kafka's image classes over
	// kraftd's segments.
	var offsets []int64
	for _, f := range []int{1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 100} {
		off := batchEnds[(len(batchEnds)-1)*f/100]
		if !covered[off] && !slices.Contains(offsets, off) {
			offsets = append(offsets, off)
		}
	}
	kafka := kafkaImages(t, kdir, "", offsets)
	for i, off := range offsets {
		k := kraftdImage(t, kdir, off)
		if k.offset != kafka[i].offset {
			t.Errorf("offset %d: kraftd's image stands at %d, Kafka's at %d", off, k.offset, kafka[i].offset)
		}
		compareImages(t, fmt.Sprintf("kraftd's log at offset %d", off), k.records, kafka[i].records)
	}
	t.Logf("kraftd's image equals Kafka's MetadataImage at %d more offsets of its log (%v); its log ends at %d", len(offsets), offsets, kend)

	// (d) the snapshots kraftd wrote: Kafka's image of kraftd's segments
	// at each one's offset, and any JVM snapshot at the same offset.
	jvmSnaps := map[int64]string{}
	for _, cd := range dirs {
		l, err := metadatalog.OpenReadOnly(cd.dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range l.Snapshots() {
			jvmSnaps[s.Offset] = l.SnapshotPath(s)
		}
		l.Close()
	}
	kl, err := metadatalog.OpenReadOnly(kdir)
	if err != nil {
		t.Fatal(err)
	}
	var ownOffsets []int64
	var ownPaths []string
	for _, s := range kl.Snapshots() {
		if s.Offset > 0 {
			ownOffsets, ownPaths = append(ownOffsets, s.Offset-1), append(ownPaths, kl.SnapshotPath(s))
		}
	}
	kl.Close()
	if len(ownOffsets) < 3 {
		t.Fatalf("kraftd wrote %d snapshots of its own; want at least 3 at 4096 bytes between snapshots", len(ownOffsets))
	}
	sameAsJVM := 0
	for i, own := range kafkaImages(t, kdir, "", ownOffsets) {
		recs := snapshotFileRecords(t, ownPaths[i])
		if own.offset != ownOffsets[i] {
			t.Errorf("kraftd snapshot %s: Kafka's image of kraftd's log stands at %d", filepath.Base(ownPaths[i]), own.offset)
			continue
		}
		compareImages(t, "kraftd's snapshot "+filepath.Base(ownPaths[i])+" vs Kafka's image of kraftd's log", recs, own.records)
		if p, ok := jvmSnaps[ownOffsets[i]+1]; ok {
			onlyKraftd, onlyKafka := diffImages(t, recs, snapshotFileRecords(t, p))
			if len(onlyKafka) > 0 || (len(onlyKraftd) > 0 && !allScram(onlyKraftd)) {
				t.Errorf("kraftd's snapshot %s vs %s: %s", filepath.Base(ownPaths[i]), p, describeDiff(len(recs), len(recs)-len(onlyKraftd)+len(onlyKafka), onlyKraftd, onlyKafka))
			}
			sameAsJVM++
		}
	}
	t.Logf("kraftd's %d own snapshots equal Kafka's image of its log at their offsets; %d of them also a JVM snapshot at the same offset", len(ownOffsets), sameAsJVM)
}

func allScram(recs []string) bool {
	for _, r := range recs {
		if !strings.HasPrefix(r, "UserScramCredentialRecord ") {
			return false
		}
	}
	return true
}

// idempotent produces n records with an idempotent producer (a producer id
// from the controller's ProducerIdsRecord blocks) and fails on any error.
func idempotent(t *testing.T, ctx context.Context, seeds []string, topic string, n int) {
	t.Helper()
	p, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic(topic),
		kgo.RecordDeliveryTimeout(2*time.Minute), kgo.MetadataMinAge(250*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = kgo.StringRecord(fmt.Sprintf("idempotent-%d", i))
	}
	if err := p.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("idempotent produce to %s: %v", topic, err)
	}
}

func firstErr(err error, res kadm.AlterConfigsResponses) error {
	if err != nil {
		return err
	}
	for _, r := range res {
		if r.Err != nil {
			return fmt.Errorf("%s: %w (%s)", r.Name, r.Err, r.ErrMessage)
		}
	}
	return nil
}

// logBatchEnds returns a partition dir's log end and its data batches' last
// offsets.
func logBatchEnds(t *testing.T, dir string) (int64, []int64) {
	t.Helper()
	l, err := metadatalog.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var ends []int64
	err = l.Batches(l.StartOffset(), func(b []byte) error {
		h, err := protocol.ParseBatchHeader(b)
		if err == nil && !h.IsControl() {
			ends = append(ends, h.LastOffset())
		}
		return err
	})
	if err != nil || len(ends) == 0 {
		t.Fatalf("%s: %d batches: %v", dir, len(ends), err)
	}
	return l.EndOffset().Offset, ends
}
