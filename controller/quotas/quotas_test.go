package quotas

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
)

// ent builds an entity from type=name pairs; a bare type is the type's
// default entity (a nil name).
func ent(parts ...string) []kmsg.AlterClientQuotasRequestEntryEntity {
	var out []kmsg.AlterClientQuotasRequestEntryEntity
	for _, p := range parts {
		typ, name, ok := strings.Cut(p, "=")
		e := kmsg.AlterClientQuotasRequestEntryEntity{Type: typ}
		if ok {
			e.Name = &name
		}
		out = append(out, e)
	}
	return out
}

func set(key string, v float64) kmsg.AlterClientQuotasRequestEntryOp {
	return kmsg.AlterClientQuotasRequestEntryOp{Key: key, Value: v}
}

func unset(key string) kmsg.AlterClientQuotasRequestEntryOp {
	return kmsg.AlterClientQuotasRequestEntryOp{Key: key, Remove: true}
}

type entry = kmsg.AlterClientQuotasRequestEntry

func e(entity []kmsg.AlterClientQuotasRequestEntryEntity, ops ...kmsg.AlterClientQuotasRequestEntryOp) entry {
	return entry{Entity: entity, Ops: ops}
}

// testImage holds alice's producer_byte_rate 1024 and the default ip's
// connection_creation_rate 10.
func testImage(t *testing.T) *image.Image {
	t.Helper()
	alice := "alice"
	b := image.NewBuilder(image.Empty(), image.Options{})
	for i, r := range []metadata.Record{
		&metadata.FeatureLevelRecord{Name: "metadata.version", FeatureLevel: int16(metadata.LatestProductionLevel)},
		&metadata.ClientQuotaRecord{Entity: []metadata.ClientQuotaRecordEntityData{{EntityType: User, EntityName: &alice}}, Key: "producer_byte_rate", Value: 1024},
		&metadata.ClientQuotaRecord{Entity: []metadata.ClientQuotaRecordEntityData{{EntityType: IP}}, Key: "connection_creation_rate", Value: 10},
	} {
		if err := b.Replay(int64(i), 1, r, 0); err != nil {
			t.Fatal(err)
		}
	}
	return b.Image()
}

// answer renders an entry's answer "type=name,type:code[:message]".
func answer(o kmsg.AlterClientQuotasResponseEntry) string {
	var parts []string
	for _, p := range o.Entity {
		if p.Name == nil {
			parts = append(parts, p.Type)
		} else {
			parts = append(parts, p.Type+"="+*p.Name)
		}
	}
	s := fmt.Sprintf("%s:%d", strings.Join(parts, ","), o.ErrorCode)
	if o.ErrorMessage != nil {
		s += ":" + *o.ErrorMessage
	}
	return s
}

// record renders a record "type=name,...:key=value" or ":key removed".
func record(r metadata.Record) string {
	q := r.(*metadata.ClientQuotaRecord)
	var parts []string
	for _, p := range q.Entity {
		if p.EntityName == nil {
			parts = append(parts, p.EntityType)
		} else {
			parts = append(parts, p.EntityType+"="+*p.EntityName)
		}
	}
	if q.Remove {
		return strings.Join(parts, ",") + ":" + q.Key + " removed"
	}
	return fmt.Sprintf("%s:%s=%v", strings.Join(parts, ","), q.Key, q.Value)
}

var bad = fmt.Sprint(kerr.InvalidRequest.Code)

func TestAlter(t *testing.T) {
	resolves := func(h string) bool { return h == "kafka.example" }
	for _, tc := range []struct {
		name         string
		entries      []entry
		validateOnly bool
		answers      []string
		records      []string
	}{
		{name: "nothing"},
		{name: "user", entries: []entry{e(ent("user=bob"), set("producer_byte_rate", 2048), set("request_percentage", 12.5))},
			answers: []string{"user=bob:0"}, records: []string{"user=bob:request_percentage=12.5", "user=bob:producer_byte_rate=2048"}},
		{name: "default user and client", entries: []entry{e(ent("client-id", "user"), set("controller_mutation_rate", 0.5))},
			answers: []string{"client-id,user:0"}, records: []string{"client-id,user:controller_mutation_rate=0.5"}},
		// The records list the entity in the validated map's order, the
		// answer in the request map's.
		{name: "user and client", entries: []entry{e(ent("user=u", "client-id=c"), set("consumer_byte_rate", 1))},
			answers: []string{"client-id=c,user=u:0"}, records: []string{"client-id=c,user=u:consumer_byte_rate=1"}},
		{name: "ip", entries: []entry{e(ent("ip=10.0.0.1"), set("connection_creation_rate", 3)), e(ent("ip=kafka.example"), set("connection_creation_rate", 4))},
			answers: []string{"ip=10.0.0.1:0", "ip=kafka.example:0"},
			records: []string{"ip=10.0.0.1:connection_creation_rate=3", "ip=kafka.example:connection_creation_rate=4"}},
		{name: "unchanged", entries: []entry{e(ent("user=alice"), set("producer_byte_rate", 1024)), e(ent("ip"), set("connection_creation_rate", 10))},
			answers: []string{"ip:0", "user=alice:0"}},
		{name: "removed", entries: []entry{e(ent("user=alice"), unset("producer_byte_rate"), unset("consumer_byte_rate"), unset("no_such_key"))},
			answers: []string{"user=alice:0"}, records: []string{"user=alice:producer_byte_rate removed"}},
		{name: "validate only", validateOnly: true, entries: []entry{e(ent("user=alice"), unset("producer_byte_rate")), e(ent("user=b"), set("x", 1))},
			answers: []string{"user=b:" + bad + ":Invalid configuration key x", "user=alice:0"}},
		{name: "empty entity", entries: []entry{e(nil, set("producer_byte_rate", 1))}, answers: []string{":" + bad + ":Invalid empty client quota entity"}},
		{name: "unknown type", entries: []entry{e(ent("group=g", "user=u"), set("producer_byte_rate", 1))},
			answers: []string{"user=u,group=g:" + bad + ":Unhandled client quota entity type: group"}},
		{name: "empty name", entries: []entry{e(ent("client-id="), set("producer_byte_rate", 1))},
			answers: []string{"client-id=:" + bad + ":Empty client-id not supported"}},
		{name: "ip with user", entries: []entry{e(ent("ip=1.2.3.4", "user"), set("connection_creation_rate", 1))},
			answers: []string{"user,ip=1.2.3.4:" + bad + ":Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"}},
		{name: "bad ip", entries: []entry{e(ent("ip=0x7f.1"), set("connection_creation_rate", 1)), e(ent("ip=nowhere.example"), set("connection_creation_rate", 1))},
			answers: []string{"ip=0x7f.1:" + bad + ":0x7f.1 is not a valid IP or resolvable host.",
				"ip=nowhere.example:" + bad + ":nowhere.example is not a valid IP or resolvable host."}},
		{name: "the last of a type counts", entries: []entry{e(ent("user=a", "user=b"), set("producer_byte_rate", 1))},
			answers: []string{"user=b:0"}, records: []string{"user=b:producer_byte_rate=1"}},
		{name: "key of the other kind", entries: []entry{e(ent("user=u"), set("connection_creation_rate", 1)), e(ent("ip=1.1.1.1"), set("producer_byte_rate", 1))},
			answers: []string{"user=u:" + bad + ":Invalid configuration key connection_creation_rate",
				"ip=1.1.1.1:" + bad + ":Invalid configuration key producer_byte_rate"}},
		{name: "values", entries: []entry{
			e(ent("user=a"), set("producer_byte_rate", 0)),
			e(ent("user=b"), set("producer_byte_rate", -1)),
			e(ent("user=c"), set("producer_byte_rate", math.NaN())),
			e(ent("user=d"), set("request_percentage", math.Inf(1))),
			e(ent("user=e"), set("producer_byte_rate", 1.5)),
			e(ent("user=f"), set("producer_byte_rate", 1+1e-7)),
			e(ent("user=g"), set("producer_byte_rate", 1e19)),
			e(ent("ip=2.2.2.2"), set("connection_creation_rate", 1<<31)),
			e(ent("ip=2.2.2.3"), set("connection_creation_rate", 1<<31-1)),
			e(ent("user=h"), set("request_percentage", 0.001)),
		}, answers: []string{
			"user=a:" + bad + ":Quota producer_byte_rate must be greater than 0",
			"user=b:" + bad + ":Quota producer_byte_rate must be greater than 0",
			"user=c:" + bad + ":Quota producer_byte_rate must be a finite number",
			"user=d:" + bad + ":Quota request_percentage must be a finite number",
			"user=e:" + bad + ":producer_byte_rate cannot be a fractional value.",
			"user=f:0",
			"user=g:" + bad + ":Proposed value for producer_byte_rate is too large for a LONG.",
			"user=h:0",
			"ip=2.2.2.2:" + bad + ":Proposed value for connection_creation_rate is too large for an INT.",
			"ip=2.2.2.3:0",
		}, records: []string{"user=f:producer_byte_rate=1.0000001", "ip=2.2.2.3:connection_creation_rate=2.147483647e+09", "user=h:request_percentage=0.001"}},
		// One bad op refuses the entity's other ops.
		{name: "all or nothing per entity", entries: []entry{e(ent("user=u"), set("consumer_byte_rate", 5), set("producer_byte_rate", -5))},
			answers: []string{"user=u:" + bad + ":Quota producer_byte_rate must be greater than 0"}},
		// A key given twice makes Kafka ignore the entity, and so does an
		// entity given twice, whose first entry still writes its records.
		{name: "duplicates", entries: []entry{
			e(ent("user=k"), set("producer_byte_rate", 1), unset("producer_byte_rate")),
			e(ent("user=x", "client-id=y"), set("producer_byte_rate", 1)),
			e(ent("client-id=y", "user=x"), set("consumer_byte_rate", 1)),
		}, answers: []string{
			"client-id=y,user=x:" + bad + ":Ignoring duplicate entity ClientQuotaEntity(entries={client-id=y, user=x})",
			"user=k:" + bad + ":Ignoring duplicate entity ClientQuotaEntity(entries={user=k})",
		}, records: []string{"client-id=y,user=x:producer_byte_rate=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := kmsg.NewPtrAlterClientQuotasRequest()
			req.Entries, req.ValidateOnly = tc.entries, tc.validateOnly
			res, err := Alter(testImage(t), req, resolves)
			if err != nil {
				t.Fatal(err)
			}
			var answers, records []string
			for _, o := range res.Response.Entries {
				answers = append(answers, answer(o))
			}
			for _, r := range res.Records {
				records = append(records, record(r))
			}
			// The order is Java's hash maps' (TestOrder; the interop test
			// compares it with Kafka's on many requests).
			for _, l := range [][]string{answers, records, tc.answers, tc.records} {
				slices.Sort(l)
			}
			if !slices.Equal(answers, tc.answers) || !slices.Equal(records, tc.records) {
				t.Fatalf("answers %q\nrecords %q\nwant    %q\n        %q", answers, records, tc.answers, tc.records)
			}
		})
	}
}

// Answers and records come in the order of Kafka's hash maps: the answers
// by the entities' ClientQuotaEntity hash, each entity's parts and records
// by their keys' String hash (as Kafka 4.4.0 gives them for this request).
func TestOrder(t *testing.T) {
	req := kmsg.NewPtrAlterClientQuotasRequest()
	req.Entries = []entry{
		e(ent("user=a"), set("producer_byte_rate", 1)),
		e(ent("user=u", "client-id=c"), set("request_percentage", 2), set("consumer_byte_rate", 3), set("producer_byte_rate", 4)),
		e(ent("ip=2.2.2.2"), set("connection_creation_rate", 5)),
		e(ent("ip", "user"), set("connection_creation_rate", 6)),
		e(ent("user=k"), set("producer_byte_rate", 1), unset("producer_byte_rate")),
	}
	res, err := Alter(testImage(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	var answers, records []string
	for _, o := range res.Response.Entries {
		answers = append(answers, answer(o))
	}
	for _, r := range res.Records {
		records = append(records, record(r))
	}
	wantAnswers := []string{
		"client-id=c,user=u:0",
		"ip=2.2.2.2:0",
		"user,ip:" + bad + ":Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId",
		"user=k:" + bad + ":Ignoring duplicate entity ClientQuotaEntity(entries={user=k})",
		"user=a:0",
	}
	wantRecords := []string{
		"user=a:producer_byte_rate=1",
		"client-id=c,user=u:consumer_byte_rate=3", "client-id=c,user=u:request_percentage=2", "client-id=c,user=u:producer_byte_rate=4",
		"ip=2.2.2.2:connection_creation_rate=5",
	}
	if !slices.Equal(answers, wantAnswers) || !slices.Equal(records, wantRecords) {
		t.Fatalf("answers %q\nrecords %q\nwant    %q\n        %q", answers, records, wantAnswers, wantRecords)
	}
}

// A request writing more than MaxRecords fails whole, even when only
// validating; MaxRecords records pass.
func TestTooManyRecords(t *testing.T) {
	req := kmsg.NewPtrAlterClientQuotasRequest()
	for i := range MaxRecords {
		req.Entries = append(req.Entries, e(ent(fmt.Sprint("user=u", i)), set("producer_byte_rate", 1)))
	}
	im := testImage(t)
	if res, err := Alter(im, req, nil); err != nil || len(res.Records) != MaxRecords {
		t.Fatalf("%d records, %v", len(res.Records), err)
	}
	req.Entries = append(req.Entries, e(ent("user=one-more"), set("producer_byte_rate", 1)))
	for _, validateOnly := range []bool{false, true} {
		req.ValidateOnly = validateOnly
		_, err := Alter(im, req, nil)
		if err == nil || err.Code != kerr.PolicyViolation.Code || err.Message != "Unable to perform excessively large batch operation." {
			t.Fatalf("validateOnly %v: %+v", validateOnly, err)
		}
	}
}

// Without a look-up no host name resolves.
func TestNoLookup(t *testing.T) {
	req := kmsg.NewPtrAlterClientQuotasRequest()
	req.Entries = []entry{e(ent("ip=localhost"), set("connection_creation_rate", 1)), e(ent("ip=::1"), set("connection_creation_rate", 1))}
	res, err := Alter(testImage(t), req, nil)
	if err != nil || len(res.Response.Entries) != 2 || res.Response.Entries[0].ErrorCode != kerr.InvalidRequest.Code || res.Response.Entries[1].ErrorCode != 0 {
		t.Fatalf("%+v %v", res.Response, err)
	}
}

// Entities whose hashes all collide (names "Aa"/"BB" strings): the order
// emulation stays linear-logarithmic (the test's timeout is the bound).
func TestManyCollidingEntities(t *testing.T) {
	req := kmsg.NewPtrAlterClientQuotasRequest()
	for i := range 1 << 16 {
		var b strings.Builder
		for j := range 16 {
			b.WriteString([]string{"Aa", "BB"}[i>>j&1])
		}
		req.Entries = append(req.Entries, e(ent("user="+b.String()), unset("producer_byte_rate")))
	}
	res, err := Alter(testImage(t), req, nil)
	if err != nil || len(res.Response.Entries) != len(req.Entries) || len(res.Records) != 0 {
		t.Fatalf("%d answers, %d records, %v", len(res.Response.Entries), len(res.Records), err)
	}
}
