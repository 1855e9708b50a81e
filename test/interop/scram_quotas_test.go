package interop

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/quotas"
	"github.com/kraftd/kraftd/controller/scram"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/internal/hostlookup"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/protocol/metadata"
)

// sqStep is one AlterUserScramCredentials ("scram") or AlterClientQuotas
// ("quotas") request of a case.
type sqStep struct {
	Op      string `json:"op"`
	Version int16  `json:"version"`
	Request string `json:"request"`
	req     kmsg.Request
}

// sqCase is a chain of requests on the managers (Kafka's) or the image
// (kraftd's) the records were replayed into, each step's records replayed
// before the next.
type sqCase struct {
	Level   int16     `json:"level"`
	Records []string  `json:"records"`
	Steps   []*sqStep `json:"steps"`
	name    string
	recs    []metadata.Record
}

type sqAnswer struct {
	Steps []struct {
		Response string   `json:"response"`
		Records  []string `json:"records"`
	} `json:"steps"`
	Valid []bool `json:"valid"`
	Fail  string `json:"fail"`
}

func frameHex(t *testing.T, r metadata.Record) string {
	b, err := metadata.Append(nil, r, 0)
	if err != nil {
		t.Fatalf("%T: %v", r, err)
	}
	return hex.EncodeToString(b)
}

// kafkaScramQuotas runs the commands (cases, or {"op":"ip"} lines) through
// testdata/KafkaScramQuotas.java.
func kafkaScramQuotas(t *testing.T, commands []any) []sqAnswer {
	t.Helper()
	var in bytes.Buffer
	for _, c := range commands {
		line, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		in.Write(line)
		in.WriteByte('\n')
	}
	out, stderr := runJava(t, "KafkaScramQuotas", &in)
	var answers []sqAnswer
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "R ") {
			continue
		}
		var a sqAnswer
		if err := json.Unmarshal([]byte(line[2:]), &a); err != nil {
			t.Fatal(err)
		}
		answers = append(answers, a)
	}
	if len(answers) != len(commands) {
		t.Fatalf("%d answers to %d commands\n%s", len(answers), len(commands), stderr)
	}
	return answers
}

// kraftdScramQuotas runs a case through controller/scram and
// controller/quotas, host names resolved as the product resolves them.
func kraftdScramQuotas(t *testing.T, c *sqCase) (responses []string, records [][]string) {
	recs := append([]metadata.Record{&metadata.FeatureLevelRecord{Name: "metadata.version", FeatureLevel: c.Level}}, c.recs...)
	for _, st := range c.Steps {
		b := image.NewBuilder(image.Empty(), image.Options{})
		for i, r := range recs {
			if err := b.Replay(int64(i), 1, r, 0); err != nil {
				t.Fatalf("%s: replay %T: %v", c.name, r, err)
			}
		}
		im := b.Image()
		var written []metadata.Record
		var resp kmsg.Response
		switch req := st.req.(type) {
		case *kmsg.AlterUserSCRAMCredentialsRequest:
			res := scram.Alter(im, req)
			written, resp = res.Records, res.Response
		case *kmsg.AlterClientQuotasRequest:
			res, err := quotas.Alter(im, req, hostlookup.Resolves)
			written, resp = res.Records, res.Response
			if err != nil { // as the node's registration answers a refusal
				written = nil
				resp = kafkaErrorAnswer(t, req, err.Code, err.Message)
			}
		}
		responses = append(responses, hex.EncodeToString(resp.AppendTo(nil)))
		var frames []string
		for _, r := range written {
			frames = append(frames, frameHex(t, r))
		}
		records = append(records, frames)
		recs = append(recs, written...)
	}
	return responses, records
}

func compareScramQuotas(t *testing.T, cases []*sqCase) {
	t.Helper()
	commands := make([]any, len(cases))
	for i, c := range cases {
		c.Records = nil
		for _, r := range c.recs {
			c.Records = append(c.Records, frameHex(t, r))
		}
		for _, st := range c.Steps {
			st.Version, st.Request = st.req.GetVersion(), hex.EncodeToString(st.req.AppendTo(nil))
		}
		commands[i] = c
	}
	answers := kafkaScramQuotas(t, commands)
	failures, records := 0, 0
	codes := map[int16]int{}
	for i, c := range cases {
		want := answers[i]
		if want.Fail != "" {
			t.Fatalf("%s: Kafka failed: %s", c.name, want.Fail)
		}
		resps, recs := kraftdScramQuotas(t, c)
		for j, st := range c.Steps {
			w := want.Steps[j]
			records += len(w.Records)
			for _, code := range sqCodes(t, st.req, w.Response) {
				codes[code]++
			}
			if resps[j] == w.Response && strings.Join(recs[j], ",") == strings.Join(w.Records, ",") {
				continue
			}
			if failures++; failures <= 3 {
				t.Errorf("%s, step %d: %s\nkafka:  %s\n        %v\nkraftd: %s\n        %v", c.name, j, describeReq(st.req),
					describeResp(t, st.req, w.Response), describeFrames(t, w.Records),
					describeResp(t, st.req, resps[j]), describeFrames(t, recs[j]))
			}
		}
	}
	if failures > 0 {
		t.Fatalf("%d steps differ", failures)
	}
	t.Logf("%d cases, %d records; answers by error code: %v", len(cases), records, codes)
}

func sqCodes(t *testing.T, req kmsg.Request, h string) []int16 {
	var out []int16
	switch resp := decodeResp(t, req, h).(type) {
	case *kmsg.AlterUserSCRAMCredentialsResponse:
		for _, r := range resp.Results {
			out = append(out, r.ErrorCode)
		}
	case *kmsg.AlterClientQuotasResponse:
		for _, e := range resp.Entries {
			out = append(out, e.ErrorCode)
		}
	}
	return out
}

// kraftd's controller decides AlterUserScramCredentials and
// AlterClientQuotas as Kafka 4.4.0's ScramControlManager and
// ClientQuotaControlManager do, byte for byte: answers (their order too)
// and records, on handwritten cases for every error path and on random
// requests whose names collide in Java's hash maps.
func TestScramQuotasMatchKafka(t *testing.T) {
	cases := append(scramCases(), quotaCases()...)
	r := rand.New(rand.NewPCG(7, 11))
	for i := range 150 {
		cases = append(cases, randomScramCase(r, i), randomQuotaCase(r, i))
	}
	compareScramQuotas(t, cases)
}

// quotas.ClassifyHost with the product's look-up decides an ip entity as
// Java's InetAddress.getByName does.
func TestIPEntitiesMatchKafka(t *testing.T) {
	hosts := []string{"127.1", "1.2.3.4", "1.2.3.256", "0x7f.1", "010.1.1.1", "1.2.3.04", "3232235777", "1.2.3",
		"0", "4294967295", "4294967296", "08.1.1.1", "0x1g", "1e3", "1.2.3.4.5", "1..2", "1.2.3.", "0.0x1.1", "0377.1", "",
		"::1", "[::1]", "[1.2.3.4]", "::ffff:1.2.3.4", "::ffff:1.2.3.4%1", "fe80::1%1", "fe80::1%lo",
		"fe80::1%no-such-if", "fe80::1%", "::1.02.3.4", "00001::", "1::2::3", ":1", "::", "1:2:3:4:5:6:7:8",
		"1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:1.2.3.4", "a:b", "12345::", "1:2:3:4:5:6:7::", "::1:2:3:4:5:6:7",
		"[]", "[abc]", "[x]", "abc", "localhost", "no-such-host.invalid", "[::1", "::1]", "1:2:3:4:5:6:7:1.2.3.4",
		"::ffff:1.2.3", "fe80::1%2147483648", "::%", "é", " 1.2.3.4"}
	answers := kafkaScramQuotas(t, []any{map[string]any{"op": "ip", "hosts": hosts}})
	if answers[0].Fail != "" || len(answers[0].Valid) != len(hosts) {
		t.Fatalf("Kafka: %+v", answers[0])
	}
	for i, h := range hosts {
		if got := quotas.ValidIPEntity(h, hostlookup.Resolves); got != answers[0].Valid[i] {
			t.Errorf("%q: kraftd valid %v (%v), Kafka %v", h, got, quotas.ClassifyHost(h), answers[0].Valid[i])
		}
	}
}

func ptr[T any](v T) *T { return &v }

func scramReq(dels []kmsg.AlterUserSCRAMCredentialsRequestDeletion, ups ...kmsg.AlterUserSCRAMCredentialsRequestUpsertion) *sqStep {
	r := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	r.Deletions, r.Upsertions = dels, ups
	return &sqStep{Op: "scram", req: r}
}

func del(name string, mech int8) kmsg.AlterUserSCRAMCredentialsRequestDeletion {
	return kmsg.AlterUserSCRAMCredentialsRequestDeletion{Name: name, Mechanism: mech}
}

func ups(name string, mech int8, iters int32) kmsg.AlterUserSCRAMCredentialsRequestUpsertion {
	return kmsg.AlterUserSCRAMCredentialsRequestUpsertion{Name: name, Mechanism: mech, Iterations: iters,
		Salt: []byte("salt-" + name), SaltedPassword: []byte(fmt.Sprintf("salted-%s-%d", name, iters))}
}

// existingCredentials are in every SCRAM case's image.
func existingCredentials() []metadata.Record {
	return []metadata.Record{
		&metadata.UserScramCredentialRecord{Name: "existing", Mechanism: 1, Salt: []byte("s"), StoredKey: []byte("k"), ServerKey: []byte("v"), Iterations: 4096},
		&metadata.UserScramCredentialRecord{Name: "old", Mechanism: 2, Salt: []byte("s"), StoredKey: []byte("k"), ServerKey: []byte("v"), Iterations: 8192},
	}
}

func scramCases() []*sqCase {
	level := int16(metadata.LatestProductionLevel)
	one := func(name string, steps ...*sqStep) *sqCase {
		return &sqCase{name: "scram " + name, Level: level, recs: existingCredentials(), Steps: steps}
	}
	noSalt := ups("nosalt", 1, 4096)
	noSalt.Salt = []byte{}
	noPassword := ups("nopass", 2, 4096)
	noPassword.SaltedPassword = []byte{}
	var many []kmsg.AlterUserSCRAMCredentialsRequestUpsertion
	for i := range 40 {
		many = append(many, ups(fmt.Sprintf("user-%d", i*7), int8(1+i%2), 4096+int32(i)))
	}
	cases := []*sqCase{
		one("empty request", scramReq(nil)),
		one("upsert both mechanisms", scramReq(nil, ups("alice", 1, 8192), ups("bob", 2, 4096))),
		one("unknown mechanisms", scramReq([]kmsg.AlterUserSCRAMCredentialsRequestDeletion{del("d0", 0), del("d3", 3)},
			ups("u0", 0, 4096), ups("u3", 3, 4096), ups("um", -1, 4096))),
		one("iteration bounds", scramReq(nil, ups("a", 1, 4095), ups("b", 1, 4096), ups("c", 2, 16384), ups("d", 2, 16385),
			ups("e", 1, 0), ups("f", 1, -5), ups("g", 1, math.MaxInt32))),
		one("empty user", scramReq([]kmsg.AlterUserSCRAMCredentialsRequestDeletion{del("", 1)}, ups("", 1, 4096))),
		one("empty upsert user", scramReq(nil, ups("", 9, 4096))),
		one("deleted twice", scramReq([]kmsg.AlterUserSCRAMCredentialsRequestDeletion{del("existing", 1), del("existing", 1)})),
		one("deleted thrice", scramReq([]kmsg.AlterUserSCRAMCredentialsRequestDeletion{del("existing", 1), del("existing", 2), del("existing", 1)})),
		one("deleted and upserted", scramReq([]kmsg.AlterUserSCRAMCredentialsRequestDeletion{del("existing", 1)}, ups("existing", 2, 4096))),
		one("upserted twice", scramReq(nil, ups("x", 1, 4096), ups("x", 2, 4096), ups("y", 1, 4096))),
		one("upserted thrice", scramReq(nil, ups("x", 1, 4096), ups("x", 1, 5000), ups("x", 2, 4096))),
		one("missing deletion", scramReq([]kmsg.AlterUserSCRAMCredentialsRequestDeletion{del("nobody", 1), del("old", 1), del("old2", 2)})),
		one("deletions", scramReq([]kmsg.AlterUserSCRAMCredentialsRequestDeletion{del("existing", 1), del("old", 2)})),
		one("failed deletion then upsertion", scramReq([]kmsg.AlterUserSCRAMCredentialsRequestDeletion{del("nobody", 1)}, ups("nobody", 1, 4096))),
		one("empty salt and password", scramReq(nil, noSalt, noPassword, ups("fine", 1, 4096))),
		one("many users", scramReq([]kmsg.AlterUserSCRAMCredentialsRequestDeletion{del("existing", 1), del("ghost", 2)}, many...)),
		one("colliding names", scramReq([]kmsg.AlterUserSCRAMCredentialsRequestDeletion{del("Aa", 1)},
			ups("BB", 1, 4096), ups("AaAa", 2, 4096), ups("BBBB", 1, 4095), ups("AaBB", 1, 4096), ups("BBAa", 0, 4096))),
		one("chain", scramReq(nil, ups("alice", 1, 8192)), scramReq([]kmsg.AlterUserSCRAMCredentialsRequestDeletion{del("alice", 1)}),
			scramReq([]kmsg.AlterUserSCRAMCredentialsRequestDeletion{del("alice", 1)}), scramReq(nil, ups("alice", 2, 4096), ups("alice2", 1, 4096))),
	}
	for _, lv := range []int16{int16(metadata.MinLevel), 10} {
		c := one(fmt.Sprintf("before SCRAM (level %d)", lv), scramReq([]kmsg.AlterUserSCRAMCredentialsRequestDeletion{del("nobody", 1), del("x", 1)},
			ups("alice", 1, 4096), ups("x", 1, 4096), ups("", 1, 4096)))
		c.Level, c.recs = lv, nil
		cases = append(cases, c)
	}
	return cases
}

var scramNames = []string{"alice", "bob", "Aa", "BB", "AaAa", "BBBB", "AaBB", "existing", "old", "", "carol", "user-1", "user-2", "é", "\U0001F600"}

func randomScramCase(r *rand.Rand, i int) *sqCase {
	c := &sqCase{name: fmt.Sprintf("scram random %d", i), Level: int16(metadata.LatestProductionLevel), recs: existingCredentials()}
	if r.IntN(10) == 0 {
		c.Level = 10
	}
	for range 1 + r.IntN(3) {
		var dels []kmsg.AlterUserSCRAMCredentialsRequestDeletion
		var up []kmsg.AlterUserSCRAMCredentialsRequestUpsertion
		mech := func() int8 { return []int8{1, 2, 1, 2, 0, 3}[r.IntN(6)] }
		for range r.IntN(5) {
			dels = append(dels, del(scramNames[r.IntN(len(scramNames))], mech()))
		}
		for range r.IntN(8) {
			u := ups(scramNames[r.IntN(len(scramNames))], mech(), []int32{4096, 8192, 16384, 4095, 16385, 10000}[r.IntN(6)])
			if r.IntN(12) == 0 {
				u.SaltedPassword = []byte{}
			}
			up = append(up, u)
		}
		c.Steps = append(c.Steps, scramReq(dels, up...))
	}
	return c
}

// entity builds a request entity from type, name pairs ("" with a nil name
// marked "\x00").
func entity(pairs ...string) []kmsg.AlterClientQuotasRequestEntryEntity {
	var out []kmsg.AlterClientQuotasRequestEntryEntity
	for i := 0; i+1 < len(pairs); i += 2 {
		e := kmsg.AlterClientQuotasRequestEntryEntity{Type: pairs[i]}
		if pairs[i+1] != "\x00" {
			e.Name = ptr(pairs[i+1])
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

func entry(ent []kmsg.AlterClientQuotasRequestEntryEntity, ops ...kmsg.AlterClientQuotasRequestEntryOp) kmsg.AlterClientQuotasRequestEntry {
	return kmsg.AlterClientQuotasRequestEntry{Entity: ent, Ops: ops}
}

func quotaReq(validateOnly bool, entries ...kmsg.AlterClientQuotasRequestEntry) *sqStep {
	r := kmsg.NewPtrAlterClientQuotasRequest()
	r.Version, r.Entries, r.ValidateOnly = 1, entries, validateOnly
	return &sqStep{Op: "quotas", req: r}
}

// existingQuotas are in every quota case's image.
func existingQuotas() []metadata.Record {
	q := func(key string, v float64, pairs ...string) metadata.Record {
		var ent []metadata.ClientQuotaRecordEntityData
		for _, e := range entity(pairs...) {
			ent = append(ent, metadata.ClientQuotaRecordEntityData{EntityType: e.Type, EntityName: e.Name})
		}
		return &metadata.ClientQuotaRecord{Entity: ent, Key: key, Value: v}
	}
	return []metadata.Record{
		q("producer_byte_rate", 1024, "user", "alice"),
		q("consumer_byte_rate", 2048, "user", "alice"),
		q("request_percentage", 50, "client-id", "c1", "user", "bob"),
		q("connection_creation_rate", 10, "ip", "1.2.3.4"),
		q("controller_mutation_rate", 5, "user", "\x00"),
	}
}

func quotaCases() []*sqCase {
	one := func(name string, steps ...*sqStep) *sqCase {
		return &sqCase{name: "quotas " + name, Level: int16(metadata.LatestProductionLevel), recs: existingQuotas(), Steps: steps}
	}
	var many []kmsg.AlterClientQuotasRequestEntry
	for i := range 30 {
		many = append(many, entry(entity("client-id", fmt.Sprintf("client-%d", i)), set("producer_byte_rate", float64(1000+i))))
	}
	over := make([]kmsg.AlterClientQuotasRequestEntry, 0, quotas.MaxRecords+1)
	for i := range quotas.MaxRecords + 1 {
		over = append(over, entry(entity("user", fmt.Sprint("u", i)), set("producer_byte_rate", 1)))
	}
	return []*sqCase{
		one("empty request", quotaReq(false)),
		one("each entity kind", quotaReq(false,
			entry(entity("user", "carol"), set("producer_byte_rate", 1024), set("request_percentage", 12.5)),
			entry(entity("user", "\x00"), set("consumer_byte_rate", 100)),
			entry(entity("client-id", "c1"), set("controller_mutation_rate", 0.5)),
			entry(entity("client-id", "\x00", "user", "\x00"), set("producer_byte_rate", 7)),
			entry(entity("user", "dave", "client-id", "c2"), set("producer_byte_rate", 8), set("consumer_byte_rate", 9)),
			entry(entity("ip", "10.0.0.1"), set("connection_creation_rate", 3)),
			entry(entity("ip", "\x00"), set("connection_creation_rate", 4)),
			entry(entity("ip", "::1"), set("connection_creation_rate", 5)))),
		one("entity errors", quotaReq(false,
			entry(entity(), set("producer_byte_rate", 1)),
			entry(entity("ip", "1.2.3.4", "user", "x"), set("connection_creation_rate", 1)),
			entry(entity("client-id", "\x00", "ip", "\x00"), set("connection_creation_rate", 1)),
			entry(entity("group", "g"), set("producer_byte_rate", 1)),
			entry(entity("user", "", "client-id", "c"), set("producer_byte_rate", 1)),
			entry(entity("client-id", ""), set("producer_byte_rate", 1)),
			entry(entity("ip", ""), set("connection_creation_rate", 1)),
			entry(entity("user", "u", "group", "g"), set("producer_byte_rate", 1)),
			entry(entity("ip", "0x7f.1"), set("connection_creation_rate", 1)),
			entry(entity("ip", "[1.2.3.4]"), set("connection_creation_rate", 1)),
			entry(entity("ip", "localhost"), set("connection_creation_rate", 1)),
			entry(entity("user", "a", "user", "b"), set("producer_byte_rate", 1)))),
		one("key and value errors", quotaReq(false,
			entry(entity("user", "k1"), set("connection_creation_rate", 1)),
			entry(entity("ip", "1.1.1.1"), set("producer_byte_rate", 1)),
			entry(entity("user", "k2"), set("no_such_key", 1)),
			entry(entity("user", "k3"), set("producer_byte_rate", 0)),
			entry(entity("user", "k4"), set("producer_byte_rate", -1)),
			entry(entity("user", "k5"), set("producer_byte_rate", math.NaN())),
			entry(entity("user", "k6"), set("request_percentage", math.Inf(1))),
			entry(entity("user", "k7"), set("request_percentage", math.Inf(-1))),
			entry(entity("user", "k8"), set("producer_byte_rate", 1.5)),
			entry(entity("user", "k9"), set("producer_byte_rate", 1.0000001)),
			entry(entity("user", "k10"), set("producer_byte_rate", 1<<63)),
			entry(entity("user", "k11"), set("producer_byte_rate", 1e19)),
			entry(entity("ip", "2.2.2.2"), set("connection_creation_rate", 2147483647)),
			entry(entity("ip", "2.2.2.3"), set("connection_creation_rate", 2147483648)),
			entry(entity("ip", "2.2.2.4"), set("connection_creation_rate", 2.5)),
			entry(entity("user", "k12"), set("request_percentage", 1e300), set("controller_mutation_rate", 1e-300)),
			entry(entity("user", "k13"), set("producer_byte_rate", 5), set("consumer_byte_rate", 0.25), set("request_percentage", 3)))),
		one("removals and unchanged values", quotaReq(false,
			entry(entity("user", "alice"), unset("producer_byte_rate"), set("consumer_byte_rate", 2048), unset("request_percentage")),
			entry(entity("user", "bob", "client-id", "c1"), unset("request_percentage"), unset("no_such_key")),
			entry(entity("ip", "1.2.3.4"), unset("connection_creation_rate")),
			entry(entity("user", "\x00"), set("controller_mutation_rate", 6)))),
		one("duplicates", quotaReq(false,
			entry(entity("user", "dup-key"), set("producer_byte_rate", 1), set("producer_byte_rate", 2)),
			entry(entity("user", "twice"), set("producer_byte_rate", 1)),
			entry(entity("user", "twice"), set("producer_byte_rate", 2)),
			entry(entity("user", "x", "client-id", "y"), set("producer_byte_rate", 1)),
			entry(entity("client-id", "y", "user", "x"), set("consumer_byte_rate", 1)),
			entry(entity("user", "bad"), set("producer_byte_rate", -1)),
			entry(entity("user", "bad"), set("producer_byte_rate", 1)),
			entry(entity("user", "dup-remove"), unset("consumer_byte_rate"), unset("consumer_byte_rate")))),
		one("validate only", quotaReq(true,
			entry(entity("user", "carol"), set("producer_byte_rate", 1024)),
			entry(entity("user", "alice"), unset("producer_byte_rate")),
			entry(entity("user", "bad"), set("producer_byte_rate", -1)))),
		one("many entities", quotaReq(false, many...)),
		one("colliding names", quotaReq(false,
			entry(entity("user", "Aa"), set("producer_byte_rate", 1)),
			entry(entity("user", "BB"), set("producer_byte_rate", 2)),
			entry(entity("client-id", "Aa", "user", "BB"), set("producer_byte_rate", 3)),
			entry(entity("client-id", "BB", "user", "Aa"), set("producer_byte_rate", 4)))),
		one("too many records", quotaReq(false, over...)),
		one("exactly the most records", quotaReq(false, over[:quotas.MaxRecords]...)),
		one("chain", quotaReq(false, entry(entity("client-id", "c9"), set("producer_byte_rate", 1024))),
			quotaReq(false, entry(entity("client-id", "c9"), set("producer_byte_rate", 1024), set("consumer_byte_rate", 10))),
			quotaReq(false, entry(entity("client-id", "c9"), unset("producer_byte_rate"), unset("consumer_byte_rate"))),
			quotaReq(false, entry(entity("client-id", "c9"), unset("producer_byte_rate")))),
	}
}

var (
	quotaTypes  = []string{"user", "client-id", "ip", "user", "client-id", "group"}
	quotaNames  = []string{"\x00", "alice", "bob", "c1", "Aa", "BB", "", "1.2.3.4", "::1", "10.1", "0x7f.1"}
	quotaKeys   = []string{"producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate", "connection_creation_rate", "other"}
	quotaValues = []float64{1, 1024, 0.5, 0, -3, 100.25, 1e10, 3e9, math.Inf(1), math.NaN(), 2048}
)

func randomQuotaCase(r *rand.Rand, i int) *sqCase {
	c := &sqCase{name: fmt.Sprintf("quotas random %d", i), Level: int16(metadata.LatestProductionLevel), recs: existingQuotas()}
	for range 1 + r.IntN(3) {
		var entries []kmsg.AlterClientQuotasRequestEntry
		for range r.IntN(7) {
			var pairs []string
			for range r.IntN(3) + map[bool]int{true: 0, false: 1}[r.IntN(20) == 0] {
				pairs = append(pairs, quotaTypes[r.IntN(len(quotaTypes))], quotaNames[r.IntN(len(quotaNames))])
			}
			var ops []kmsg.AlterClientQuotasRequestEntryOp
			for range r.IntN(4) {
				k := quotaKeys[r.IntN(len(quotaKeys))]
				if r.IntN(4) == 0 {
					ops = append(ops, unset(k))
				} else {
					ops = append(ops, set(k, quotaValues[r.IntN(len(quotaValues))]))
				}
			}
			entries = append(entries, entry(entity(pairs...), ops...))
		}
		st := quotaReq(r.IntN(8) == 0, entries...)
		st.req.SetVersion(int16(r.IntN(2)))
		c.Steps = append(c.Steps, st)
	}
	return c
}

// kafkaErrorAnswer is the answer the node's registration builds for a
// refused request (protocol.ControllerApis' AlterClientQuotas error
// answer), taken through a node.
func kafkaErrorAnswer(t *testing.T, req kmsg.Request, code int16, msg string) kmsg.Response {
	t.Helper()
	for _, a := range protocol.ControllerApis() {
		if a.Key == kmsg.Key(req.Key()) {
			return a.ErrorResponse(req, code, msg)
		}
	}
	t.Fatalf("no registration for %s", kmsg.NameForKey(req.Key()))
	return nil
}
