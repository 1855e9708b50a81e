package image

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

type replayCase struct {
	name  string
	setup []metadata.Record
	rec   metadata.Record
	err   string // a substring of the error; "" when the record replays
	check func(t *testing.T, im *Image)
}

// runReplayCases replays each case's setup, then its record: a failure must
// be a *ReplayError naming the offset and type and leave the builder as it
// was; a success must keep the indexes true to the content.
func runReplayCases(t *testing.T, cases []replayCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := NewBuilder(Empty(), Options{})
			replayAll(t, b, c.setup...)
			before := b.Image()
			err := replayOne(b, c.rec)
			if c.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := b.Provenance().Offset; got != int64(len(c.setup)) {
					t.Fatalf("provenance at %d after %d records", got, len(c.setup)+1)
				}
			} else {
				var re *ReplayError
				if !errors.As(err, &re) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one with %q", err, c.err)
				}
				if re.Offset != int64(len(c.setup)) || re.Type != c.rec.TypeName() {
					t.Fatalf("error names offset %d, type %s; want %d, %s", re.Offset, re.Type, len(c.setup), c.rec.TypeName())
				}
				if d := Diff(before, b.Image(), 5); d != nil || b.Provenance() != before.Provenance() {
					t.Fatalf("a failed replay changed the builder: %v", d)
				}
			}
			im := b.Image()
			checkIndexes(t, im)
			if c.check != nil {
				c.check(t, im)
			}
		})
	}
}

func TestReplayFeatures(t *testing.T) {
	runReplayCases(t, []replayCase{
		{name: "metadata.version", rec: mvRec(33), check: func(t *testing.T, im *Image) {
			if mv, ok := im.MetadataVersion(); !ok || mv != 33 {
				t.Fatalf("metadata.version %d %v", mv, ok)
			}
		}},
		{name: "metadata.version below 3.3-IV3", rec: mvRec(6), err: "outside the supported range 7-33"},
		{name: "metadata.version not production", rec: mvRec(34), err: "outside the supported range"},
		{name: "unknown feature at 1", rec: feature("no.such.version", 1), err: "outside the supported range 0-0"},
		{name: "unknown feature at 0", rec: feature("no.such.version", 0)},
		{name: "feature above its range", rec: feature("group.version", 2), err: "outside the supported range 0-1"},
		{name: "feature set", rec: feature("group.version", 1), check: func(t *testing.T, im *Image) {
			if im.FeatureLevel("group.version") != 1 {
				t.Fatal("group.version not set")
			}
		}},
		{name: "feature removed at 0", setup: []metadata.Record{feature("group.version", 1)}, rec: feature("group.version", 0),
			check: func(t *testing.T, im *Image) {
				if n := len(slices.Collect(func(y func(string) bool) {
					for k := range im.Features() {
						y(k)
					}
				})); n != 0 {
					t.Fatalf("%d features left", n)
				}
			}},
		{name: "kraft.version is not image state", rec: feature("kraft.version", 1), check: func(t *testing.T, im *Image) {
			if im.FeatureLevel("kraft.version") != 0 {
				t.Fatal("kraft.version kept")
			}
		}},
		{name: "kraft.version outside its range", rec: feature("kraft.version", 2), err: "outside the supported range 0-1"},
		{name: "elr on", rec: feature(elrFeature, 1), check: func(t *testing.T, im *Image) {
			if !im.ELREnabled() {
				t.Fatal("ELR off")
			}
		}},
	})
}

// TestReplaySupportedFeatures: a node that supports more (Kafka's unstable
// versions) replays more.
func TestReplaySupportedFeatures(t *testing.T) {
	b := NewBuilder(Empty(), Options{SupportedFeatures: []features.Range{{Name: "metadata.version", Min: 7, Max: 34}}})
	replayAll(t, b, mvRec(34))
	if err := replayOne(b, feature("group.version", 1)); err == nil {
		t.Fatal("a feature the options leave out replayed above 0")
	}
}

func TestReplayBrokers(t *testing.T) {
	dup := registerBroker(1, 10)
	dup.EndPoints = append(dup.EndPoints,
		metadata.RegisterBrokerRecordBrokerEndpoint{Name: "SSL", Host: "h", Port: 1, SecurityProtocol: 1},
		metadata.RegisterBrokerRecordBrokerEndpoint{Name: "PLAINTEXT", Host: "second", Port: 2})
	dup.LogDirs = uuids([]uuid.UUID{dir(3), dir(1), dir(2)})
	dup.Rack = ptr("r1")
	badProto := registerBroker(1, 10)
	badProto.EndPoints[0].SecurityProtocol = 4
	unnamed := registerBroker(1, 10)
	unnamed.EndPoints[0].Name = ""
	twice := registerBroker(1, 10, dir(1), dir(1))
	broker := func(t *testing.T, im *Image, id int32) *Broker {
		b, ok := im.Broker(id)
		if !ok {
			t.Fatalf("broker %d not registered", id)
		}
		return b
	}
	runReplayCases(t, []replayCase{
		{name: "register", rec: dup, check: func(t *testing.T, im *Image) {
			b := broker(t, im, 1)
			if len(b.Endpoints) != 2 || b.Endpoints[0].Name != "PLAINTEXT" || b.Endpoints[0].Host != "second" || b.Endpoints[1].Name != "SSL" {
				t.Fatalf("endpoints %+v: want PLAINTEXT (the last one) and SSL, by name", b.Endpoints)
			}
			if !slices.Equal(b.LogDirs, []uuid.UUID{dir(1), dir(2), dir(3)}) || b.CordonedLogDirs != nil {
				t.Fatalf("log dirs %v, cordoned %v", b.LogDirs, b.CordonedLogDirs)
			}
			if !b.Fenced || *b.Rack != "r1" || b.Epoch != 10 || b.RegistrationOffset != 0 {
				t.Fatalf("broker %+v", b)
			}
			if owner, _ := im.DirectoryOwner(dir(2)); owner != 1 {
				t.Fatal("directory not indexed")
			}
		}},
		{name: "unknown security protocol", rec: badProto, err: "unknown security protocol 4"},
		{name: "unnamed listener", rec: unnamed, err: "listeners must be named"},
		{name: "directory of another broker", setup: []metadata.Record{registerBroker(1, 10, dir(1))},
			rec: registerBroker(2, 11, dir(1)), err: "already registered to broker 1"},
		{name: "re-register keeps own directory", setup: []metadata.Record{registerBroker(1, 10, dir(1))},
			rec: registerBroker(1, 12, dir(1), dir(2)), check: func(t *testing.T, im *Image) {
				if b := broker(t, im, 1); b.Epoch != 12 || b.RegistrationOffset != 1 || len(b.LogDirs) != 2 {
					t.Fatalf("broker %+v", b)
				}
			}},
		{name: "re-register after a directory listed twice", setup: []metadata.Record{twice},
			rec: registerBroker(1, 12, dir(1)), err: "not registered to broker 1"},
		{name: "unregister", setup: []metadata.Record{registerBroker(1, 10, dir(1))},
			rec: &metadata.UnregisterBrokerRecord{BrokerId: 1, BrokerEpoch: 10}, check: func(t *testing.T, im *Image) {
				if _, ok := im.Broker(1); ok {
					t.Fatal("still registered")
				}
				if _, ok := im.DirectoryOwner(dir(1)); ok {
					t.Fatal("directory still owned")
				}
			}},
		{name: "unregister unknown", rec: &metadata.UnregisterBrokerRecord{BrokerId: 1, BrokerEpoch: 10}, err: "no broker registration found for broker 1"},
		{name: "unregister at another epoch", setup: []metadata.Record{registerBroker(1, 10)},
			rec: &metadata.UnregisterBrokerRecord{BrokerId: 1, BrokerEpoch: 9}, err: "registered with epoch 10, not 9"},
		{name: "fence", setup: []metadata.Record{registerBroker(1, 10), &metadata.UnfenceBrokerRecord{Id: 1, Epoch: 10}},
			rec: &metadata.FenceBrokerRecord{Id: 1, Epoch: 10}, check: func(t *testing.T, im *Image) {
				if !broker(t, im, 1).Fenced {
					t.Fatal("not fenced")
				}
			}},
		{name: "unfence at another epoch", setup: []metadata.Record{registerBroker(1, 10)},
			rec: &metadata.UnfenceBrokerRecord{Id: 1, Epoch: 11}, err: "not 11"},
		{name: "change: unfence and shut down", setup: []metadata.Record{registerBroker(1, 10)},
			rec: regChange(1, 10, func(r *metadata.BrokerRegistrationChangeRecord) { r.Fenced, r.InControlledShutdown = -1, 1 }),
			check: func(t *testing.T, im *Image) {
				if b := broker(t, im, 1); b.Fenced || !b.InControlledShutdown {
					t.Fatalf("broker %+v", b)
				}
			}},
		{name: "change: fenced out of range", setup: []metadata.Record{registerBroker(1, 10)},
			rec: regChange(1, 10, func(r *metadata.BrokerRegistrationChangeRecord) { r.Fenced = 2 }), err: "value 2 for the fenced field"},
		{name: "change: shutdown out of range", setup: []metadata.Record{registerBroker(1, 10)},
			rec: regChange(1, 10, func(r *metadata.BrokerRegistrationChangeRecord) { r.InControlledShutdown = -1 }), err: "inControlledShutdown"},
		{name: "change: epoch", setup: []metadata.Record{registerBroker(1, 10)}, rec: regChange(1, 9, nil), err: "not 9"},
		{name: "change: unknown broker", rec: regChange(1, 9, nil), err: "no broker registration"},
		{name: "change: empty log dirs change nothing", setup: []metadata.Record{registerBroker(1, 10, dir(1))},
			rec: regChange(1, 10, func(r *metadata.BrokerRegistrationChangeRecord) { r.LogDirs = [][16]byte{} }),
			check: func(t *testing.T, im *Image) {
				if b := broker(t, im, 1); len(b.LogDirs) != 1 {
					t.Fatalf("log dirs %v", b.LogDirs)
				}
			}},
		{name: "change: log dirs and cordoned", setup: []metadata.Record{registerBroker(1, 10, dir(1), dir(2))},
			rec: regChange(1, 10, func(r *metadata.BrokerRegistrationChangeRecord) {
				r.LogDirs, r.CordonedLogDirs = uuids([]uuid.UUID{dir(2)}), [][16]byte{}
			}),
			check: func(t *testing.T, im *Image) {
				if b := broker(t, im, 1); !slices.Equal(b.LogDirs, []uuid.UUID{dir(2)}) || b.CordonedLogDirs == nil || len(b.CordonedLogDirs) != 0 {
					t.Fatalf("log dirs %v, cordoned %v", b.LogDirs, b.CordonedLogDirs)
				}
				if _, ok := im.DirectoryOwner(dir(1)); ok {
					t.Fatal("the offline directory is still indexed")
				}
			}},
		{name: "change: log dir of another broker", setup: []metadata.Record{registerBroker(1, 10, dir(1)), registerBroker(2, 11, dir(2))},
			rec: regChange(1, 10, func(r *metadata.BrokerRegistrationChangeRecord) { r.LogDirs = uuids([]uuid.UUID{dir(2)}) }),
			err: "already registered to broker 2"},
		{name: "change: a no-op still checks directories", setup: []metadata.Record{twice}, rec: regChange(1, 10, nil), err: "not registered to broker 1"},
	})
}

func TestReplayControllers(t *testing.T) {
	reg := &metadata.RegisterControllerRecord{ControllerId: 3000, IncarnationId: uuid.UUID{9},
		EndPoints: []metadata.RegisterControllerRecordControllerEndpoint{{Name: "CONTROLLER", Host: "h", Port: 9093}}}
	bad := *reg
	bad.EndPoints = []metadata.RegisterControllerRecordControllerEndpoint{{Name: "CONTROLLER", SecurityProtocol: 7}}
	runReplayCases(t, []replayCase{
		{name: "register", rec: reg, check: func(t *testing.T, im *Image) {
			if c, ok := im.Controller(3000); !ok || c.Endpoints[0].Port != 9093 {
				t.Fatalf("controller %+v", c)
			}
		}},
		{name: "unknown security protocol", rec: &bad, err: "unknown security protocol 7"},
		{name: "unregister", setup: []metadata.Record{reg}, rec: &metadata.UnregisterControllerRecord{ControllerId: 3000}},
		{name: "unregister unknown", rec: &metadata.UnregisterControllerRecord{ControllerId: 3000}, err: "controller 3000 is not registered"},
	})
}

func TestReplayOther(t *testing.T) {
	v := func(s string) *string { return &s }
	acl := &metadata.AccessControlEntryRecord{Id: uuid.UUID{7}, ResourceType: 99, PatternType: 3, Operation: -1, PermissionType: 3, Principal: "User:a", Host: "*"}
	acl2 := *acl
	acl2.Id = uuid.UUID{8}
	scram := &metadata.UserScramCredentialRecord{Name: "alice", Mechanism: 2, Salt: []byte("s"), StoredKey: []byte("k"), ServerKey: []byte("v"), Iterations: 4096}
	quota := &metadata.ClientQuotaRecord{Key: "producer_byte_rate", Value: 1024, Entity: []metadata.ClientQuotaRecordEntityData{
		{EntityType: "user", EntityName: v("bob")}, {EntityType: "client-id"}, {EntityType: "user", EntityName: v("carol")}}}
	runReplayCases(t, []replayCase{
		{name: "topic config", rec: config(topicResource, "t", "retention.ms", v("1")), check: func(t *testing.T, im *Image) {
			if got, _ := im.Config(topicResource, "t", "retention.ms"); got != "1" {
				t.Fatalf("config %q", got)
			}
		}},
		{name: "unsupported topic config is skipped", rec: config(topicResource, "t", "no.such.key", v("1")), check: func(t *testing.T, im *Image) {
			if _, ok := im.Config(topicResource, "t", "no.such.key"); ok {
				t.Fatal("kept")
			}
		}},
		{name: "broker logger config is skipped", rec: config(brokerLoggerResource, "1", "kafka", v("DEBUG")), check: func(t *testing.T, im *Image) {
			if len(slices.Collect(im.AllConfigs())) != 0 {
				t.Fatal("kept")
			}
		}},
		{name: "unknown resource type is skipped", rec: config(99, "x", "retention.ms", v("1")), check: func(t *testing.T, im *Image) {
			if len(slices.Collect(im.AllConfigs())) != 0 {
				t.Fatal("kept")
			}
		}},
		{name: "any broker config", rec: config(brokerResource, "", "min.insync.replicas", v("2")), check: func(t *testing.T, im *Image) {
			if got, _ := im.Config(brokerResource, "", "min.insync.replicas"); got != "2" {
				t.Fatalf("config %q", got)
			}
		}},
		{name: "negative broker id", rec: config(brokerResource, "-1", "x", v("2"))},
		{name: "broker name not an id", rec: config(brokerResource, "b1", "x", v("2")), err: `"b1" is not a broker id`},
		{name: "broker name past int32", rec: config(brokerResource, "2147483648", "x", v("2")), err: "is not a broker id"},
		{name: "client metrics and group", setup: []metadata.Record{config(clientMetricsResource, "m", "interval.ms", v("5"))},
			rec: config(groupResource, "g", "consumer.session.timeout.ms", v("45000")), check: func(t *testing.T, im *Image) {
				if len(slices.Collect(im.AllConfigs())) != 2 {
					t.Fatal("not kept")
				}
			}},
		{name: "config deleted", setup: []metadata.Record{config(topicResource, "t", "retention.ms", v("1"))},
			rec: config(topicResource, "t", "retention.ms", nil), check: func(t *testing.T, im *Image) {
				if len(slices.Collect(im.AllConfigs())) != 0 {
					t.Fatal("kept")
				}
			}},
		{name: "client quota", rec: quota, check: func(t *testing.T, im *Image) {
			q := slices.Collect(im.ClientQuotas())
			if len(q) != 1 || len(q[0].Entity) != 2 || q[0].Entity[0].Type != "client-id" || q[0].Entity[0].Name != nil ||
				*q[0].Entity[1].Name != "carol" || q[0].Value != 1024 {
				t.Fatalf("quotas %+v", q)
			}
		}},
		{name: "one entity's quotas", setup: []metadata.Record{quota,
			&metadata.ClientQuotaRecord{Key: "request_percentage", Value: 50, Entity: slices.Clone(quota.Entity)[1:]},
			&metadata.ClientQuotaRecord{Key: "request_percentage", Value: 7, Entity: quota.Entity[:1]}},
			rec: &metadata.ClientQuotaRecord{Key: "consumer_byte_rate", Value: 8, Entity: []metadata.ClientQuotaRecordEntityData{{EntityType: "user", EntityName: v("carol")}}},
			check: func(t *testing.T, im *Image) {
				// client-id default + user carol, given in another order.
				got := maps.Collect(im.EntityQuotas(QuotaEntity{{Type: "user", Name: v("carol")}, {Type: "client-id"}}))
				if len(got) != 2 || got["producer_byte_rate"] != 1024 || got["request_percentage"] != 50 {
					t.Fatalf("quotas %v", got)
				}
				if got := maps.Collect(im.EntityQuotas(QuotaEntity{{Type: "user", Name: v("bob")}})); len(got) != 1 || got["request_percentage"] != 7 {
					t.Fatalf("bob's quotas %v", got)
				}
				if got := maps.Collect(im.EntityQuotas(QuotaEntity{{Type: "user"}})); len(got) != 0 {
					t.Fatalf("the default user's quotas %v", got)
				}
			}},
		{name: "client quota removed", setup: []metadata.Record{quota},
			rec: &metadata.ClientQuotaRecord{Key: quota.Key, Remove: true, Entity: slices.Clone(quota.Entity)[1:]},
			check: func(t *testing.T, im *Image) {
				if len(slices.Collect(im.ClientQuotas())) != 0 {
					t.Fatal("kept")
				}
			}},
		{name: "first producer ids", rec: &metadata.ProducerIdsRecord{BrokerId: 1, BrokerEpoch: 5, NextProducerId: 1000}},
		{name: "producer ids grow", setup: []metadata.Record{&metadata.ProducerIdsRecord{NextProducerId: 1000}},
			rec: &metadata.ProducerIdsRecord{NextProducerId: 2000}, check: func(t *testing.T, im *Image) {
				if im.NextProducerID() != 2000 {
					t.Fatal(im.NextProducerID())
				}
			}},
		{name: "producer ids do not grow", setup: []metadata.Record{&metadata.ProducerIdsRecord{NextProducerId: 1000}},
			rec: &metadata.ProducerIdsRecord{NextProducerId: 1000}, err: "not greater than"},
		{name: "ACL codes Kafka does not know read as UNKNOWN", rec: acl, check: func(t *testing.T, im *Image) {
			a, _ := im.ACL(uuid.UUID{7})
			if a.ResourceType != 0 || a.Operation != 0 || a.PatternType != 3 || a.PermissionType != 3 {
				t.Fatalf("ACL %+v", a)
			}
		}},
		{name: "remove ACL", setup: []metadata.Record{acl}, rec: &metadata.RemoveAccessControlEntryRecord{Id: uuid.UUID{7}}},
		{name: "remove unknown ACL", rec: &metadata.RemoveAccessControlEntryRecord{Id: uuid.UUID{7}}, err: "no ACL with ID"},
		{name: "remove the second ACL of one content", setup: []metadata.Record{acl, &acl2, &metadata.RemoveAccessControlEntryRecord{Id: uuid.UUID{7}}},
			rec: &metadata.RemoveAccessControlEntryRecord{Id: uuid.UUID{8}}, err: "no longer among the ACLs"},
		{name: "SCRAM", rec: scram, check: func(t *testing.T, im *Image) {
			if c, ok := im.ScramCredential(2, "alice"); !ok || c.Iterations != 4096 {
				t.Fatal("not kept")
			}
		}},
		{name: "SCRAM unknown mechanism reads as 0", rec: &metadata.UserScramCredentialRecord{Name: "a", Mechanism: 9}, check: func(t *testing.T, im *Image) {
			if _, ok := im.ScramCredential(0, "a"); !ok {
				t.Fatal("not kept as UNKNOWN")
			}
		}},
		{name: "remove SCRAM", setup: []metadata.Record{scram}, rec: &metadata.RemoveUserScramCredentialRecord{Name: "alice", Mechanism: 2}},
		{name: "remove unknown SCRAM", setup: []metadata.Record{scram}, rec: &metadata.RemoveUserScramCredentialRecord{Name: "alice", Mechanism: 1}, err: "no SCRAM credential"},
		{name: "delegation token", rec: &metadata.DelegationTokenRecord{TokenId: "t1", Owner: "User:a", Renewers: []string{"User:b"}}, check: func(t *testing.T, im *Image) {
			if len(slices.Collect(im.DelegationTokens())) != 1 {
				t.Fatal("not kept")
			}
		}},
		{name: "remove unknown delegation token", rec: &metadata.RemoveDelegationTokenRecord{TokenId: "t1"}},
		{name: "no-op", rec: &metadata.NoOpRecord{}},
		{name: "ZooKeeper migration state", rec: &metadata.ZkMigrationStateRecord{ZkMigrationState: 2}},
		{name: "transaction marker", rec: &metadata.BeginTransactionRecord{}, err: "outside a loader"},
	})
}
