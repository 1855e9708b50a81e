package interop

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/internal/metadatatest"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/protocol/metadata/metareflect"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// kafkaRecords runs testdata/KafkaMetadataRecords.java, Kafka 4.4.0's
// MetadataRecordSerde and JSON converters, over commands and returns its
// answer lines.
func kafkaRecords(t *testing.T, commands []string) []string {
	t.Helper()
	out, _ := runJava(t, "KafkaMetadataRecords", strings.NewReader(strings.Join(commands, "\n")+"\n"))
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
}

func unhexString(t *testing.T, s string) string {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return string(b)
}

// corpusSeed is the random corpus's seed: KRAFTD_METADATA_SEED, or a new one
// each run (logged, so a failure replays).
func corpusSeed(t *testing.T) uint64 {
	if s := os.Getenv("KRAFTD_METADATA_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("KRAFTD_METADATA_SEED: %v", err)
		}
		return seed
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("corpus seed %d (KRAFTD_METADATA_SEED=%d replays it)", seed, seed)
	return seed
}

type corpusRecord struct {
	rec     metadata.Record
	version int16
	value   []byte // kraftd's encoding
	what    string
}

// recordCorpus is every type at every version: the defaults, the two
// extremes of metadatatest.FillEdge, perType random records, and as many
// again with unknown tagged fields (unknown=true, which have no JSON form).
func recordCorpus(t *testing.T, r *rand.Rand, perType int, unknown bool) []corpusRecord {
	t.Helper()
	var out []corpusRecord
	add := func(rec metadata.Record, v int16, what string) {
		value, err := metadata.Append(nil, rec, v)
		if err != nil {
			t.Fatalf("%s v%d (%s): %v", rec.TypeName(), v, what, err)
		}
		out = append(out, corpusRecord{rec, v, value, what})
	}
	for _, k := range metadata.APIKeys() {
		proto, _ := metadata.New(k)
		lo, hi := proto.ValidVersions()
		for v := lo; v <= hi; v++ {
			if unknown {
				for i := range perType {
					rec, _ := metadata.New(k)
					metadatatest.Fill(r, rec, v)
					metadatatest.AddUnknownTags(r, rec)
					add(rec, v, fmt.Sprintf("random with unknown tags %d", i))
				}
				continue
			}
			rec, _ := metadata.New(k)
			add(rec, v, "defaults")
			for _, most := range []bool{true, false} {
				rec, _ := metadata.New(k)
				metadatatest.FillEdge(rec, v, most)
				add(rec, v, fmt.Sprintf("edge most=%v", most))
			}
			for i := range perType {
				rec, _ := metadata.New(k)
				metadatatest.Fill(r, rec, v)
				add(rec, v, fmt.Sprintf("random %d", i))
			}
		}
	}
	return out
}

// Kafka 4.4.0 is the judge of every type at every version: for a corpus of
// records in Kafka's JSON form (both sides read the same JSON), kraftd's
// bytes are Kafka's bytes and Kafka reads them as the same record, and
// kraftd reads Kafka's bytes as the record it started from. Records with
// tagged fields Kafka 4.4.0 does not know (as a newer Kafka writes them) go
// through Kafka's reader and writer unchanged, as through kraftd's.
func TestMetadataRecordsAgainstKafka(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(corpusSeed(t), 7))
	corpus := recordCorpus(t, r, 12, false)
	withUnknown := recordCorpus(t, r, 6, true)
	var cmds []string
	for _, c := range corpus {
		j, err := metareflect.KafkaJSON(c.rec, c.version)
		if err != nil {
			t.Fatalf("%s v%d: %v", c.rec.TypeName(), c.version, err)
		}
		cmds = append(cmds, fmt.Sprintf("json %d %d %x %s", c.rec.APIKey(), c.version, c.value, j))
	}
	for _, c := range withUnknown {
		cmds = append(cmds, fmt.Sprintf("bytes %x", c.value))
	}
	ds := downgrades(t, corpus)
	for _, d := range ds {
		cmds = append(cmds, d.cmd)
	}
	answers := kafkaRecords(t, cmds)
	if len(answers) != len(cmds) {
		t.Fatalf("%d answers to %d commands", len(answers), len(cmds))
	}
	checkDowngrades(t, ds, answers[len(corpus)+len(withUnknown):])
	seen := map[string]bool{}
	for i, c := range corpus {
		name := fmt.Sprintf("%s v%d (%s)", c.rec.TypeName(), c.version, c.what)
		f := strings.Fields(answers[i])
		if f[0] != "OK" || len(f) != 3 {
			t.Errorf("%s: Kafka fails the JSON: %s", name, unhexString(t, f[len(f)-1]))
			continue
		}
		kafkaBytes, _ := hex.DecodeString(f[1])
		if !bytes.Equal(kafkaBytes, c.value) {
			t.Errorf("%s:\nkraftd %x\nKafka  %x", name, c.value, kafkaBytes)
		}
		if verdict, detail, _ := strings.Cut(f[2], ":"); verdict != "same" {
			t.Errorf("%s: Kafka reads kraftd's bytes as %s: %s", name, verdict, unhexString(t, detail))
		}
		dec, v, err := metadata.Decode(kafkaBytes)
		if err != nil {
			t.Errorf("%s: kraftd cannot read Kafka's bytes: %v", name, err)
		} else if d := metareflect.Diff(dec, c.rec); d != "" || v != c.version {
			t.Errorf("%s: kraftd reads Kafka's bytes as v%d, differing at %s", name, v, d)
		}
		seen[fmt.Sprintf("%d/%d", c.rec.APIKey(), c.version)] = true
	}
	for i, c := range withUnknown {
		name := fmt.Sprintf("%s v%d (%s)", c.rec.TypeName(), c.version, c.what)
		f := strings.SplitN(answers[len(corpus)+i], " ", 5)
		if f[0] != "OK" || len(f) != 5 {
			t.Errorf("%s: Kafka cannot read %x: %s", name, c.value, unhexString(t, f[len(f)-1]))
			continue
		}
		if f[1] != strconv.Itoa(int(c.rec.APIKey())) || f[2] != strconv.Itoa(int(c.version)) || f[3] != hex.EncodeToString(c.value) {
			t.Errorf("%s: Kafka reads and writes %x as type %s v%s:\n%s", name, c.value, f[1], f[2], f[3])
		}
		ours, err := metareflect.KafkaJSON(c.rec, c.version)
		if err != nil {
			t.Fatal(err)
		}
		if d, err := metareflect.JSONEqual(ours, []byte(f[4])); err != nil || d != "" {
			t.Errorf("%s: Kafka's JSON differs at %s (%v):\n%s\n%s", name, d, err, f[4], ours)
		}
	}
	total := 0
	for _, k := range metadata.APIKeys() {
		rec, _ := metadata.New(k)
		lo, hi := rec.ValidVersions()
		for v := lo; v <= hi; v++ {
			total++
			if !seen[fmt.Sprintf("%d/%d", k, v)] {
				t.Errorf("the corpus lacks %s v%d", rec.TypeName(), v)
			}
		}
	}
	t.Logf("%d records of %d type versions, and %d with unknown tags, judged by Kafka", len(corpus), total, len(withUnknown))
}

// A downgrade is a corpus record of its type's highest version written at
// a lower version: Kafka refuses to (UnsupportedVersionException, "Attempted
// to write a non-default ...") exactly where kraftd does, a field the lower
// version lacks holding something else than its default, and writes the
// same bytes otherwise.
type downgrade struct {
	c       corpusRecord
	version int16
	value   []byte
	err     error
	cmd     string
}

func downgrades(t *testing.T, corpus []corpusRecord) []downgrade {
	var ds []downgrade
	for _, c := range corpus {
		lo, hi := c.rec.ValidVersions()
		if c.version != hi {
			continue
		}
		j, err := metareflect.KafkaJSON(c.rec, c.version)
		if err != nil {
			t.Fatal(err)
		}
		for v := lo; v < c.version; v++ {
			value, err := metadata.Append(nil, c.rec, v)
			ds = append(ds, downgrade{c, v, value, err, fmt.Sprintf("json %d %d %x %s", c.rec.APIKey(), v, value, j)})
		}
	}
	return ds
}

func checkDowngrades(t *testing.T, ds []downgrade, answers []string) {
	refused := 0
	for i, d := range ds {
		name := fmt.Sprintf("%s v%d (%s) written at v%d", d.c.rec.TypeName(), d.c.version, d.c.what, d.version)
		f := strings.Fields(answers[i])
		switch {
		case d.err != nil && f[0] == "OK":
			t.Errorf("%s: kraftd refuses (%v), Kafka writes %s", name, d.err, f[1])
		case d.err != nil:
			refused++
			if msg := unhexString(t, f[1]); !strings.Contains(msg, "Attempted to write a non-default") {
				t.Errorf("%s: Kafka refuses for another reason: %s", name, msg)
			}
		case f[0] != "OK":
			t.Errorf("%s: kraftd writes %x, Kafka refuses: %s", name, d.value, unhexString(t, f[1]))
		case f[1] != hex.EncodeToString(d.value):
			t.Errorf("%s:\nkraftd %x\nKafka  %s", name, d.value, f[1])
		}
	}
	t.Logf("%d downgrades, %d refused by both", len(ds), refused)
}

// Where kraftd's decoder is stricter than Kafka's on input Kafka never
// writes (package doc of protocol/metadata): the error reasons that may
// refuse what Kafka 4.4.0 reads.
var stricterThanKafka = []string{
	"version out of range",                        // Kafka reads any version of a record with its latest layout
	"tags must ascend",                            // Kafka reads tags in any order (and then fails to write them)
	"the tagged field holds",                      // Kafka reads a known tag's value ignoring its size
	"the value runs past the tagged field's size", // the same
	"overruns the",                                // the same
	"not valid UTF-8",                             // Kafka reads U+FFFD in place of the bad bytes
	"truncated or overlong varint",                // Kafka drops the high bits of a 5-byte varint
	"elements cannot fit", "exceeds the",          // a 5-byte length Java reads as negative, so null
}

// Damaged records: whatever kraftd reads, Kafka reads as the same record
// (the same bytes once both write it again); whatever Kafka refuses, kraftd
// refuses; kraftd refuses more only for the reasons above.
func TestMetadataRecordDecodingAgainstKafka(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(corpusSeed(t), 9))
	var inputs [][]byte
	for _, c := range append(recordCorpus(t, r, 2, false), recordCorpus(t, r, 2, true)...) {
		if len(c.value) > 4096 {
			continue
		}
		v := c.value
		inputs = append(inputs, v[:r.IntN(len(v))], append(v[:len(v):len(v)], 0))
		for range 6 {
			m := append([]byte(nil), v...)
			switch i := r.IntN(len(m)); r.IntN(3) {
			case 0:
				m[i] = byte(r.Uint32())
			case 1:
				m = append(m[:i], m[i+1:]...)
			default:
				m = append(m[:i], append([]byte{byte(r.Uint32())}, m[i:]...)...)
			}
			inputs = append(inputs, m)
		}
	}
	cmds := make([]string, len(inputs))
	for i, in := range inputs {
		cmds[i] = fmt.Sprintf("bytes %x", in)
	}
	answers := kafkaRecords(t, cmds)
	if len(answers) != len(cmds) {
		t.Fatalf("%d answers to %d commands", len(answers), len(cmds))
	}
	stricter := map[string]int{}
	accepted := 0
	for i, in := range inputs {
		f := strings.SplitN(answers[i], " ", 5)
		rec, v, err := metadata.Decode(in)
		switch {
		case err == nil && f[0] != "OK":
			t.Errorf("%x: kraftd reads %s v%d, Kafka refuses it: %s", in, rec.TypeName(), v, unhexString(t, f[1]))
		case err == nil:
			accepted++
			again, err := metadata.Append(nil, rec, v)
			if err != nil || f[1] != strconv.Itoa(int(rec.APIKey())) || f[2] != strconv.Itoa(int(v)) || f[3] != hex.EncodeToString(again) {
				t.Errorf("%x: kraftd reads %s v%d and writes %x (%v); Kafka reads type %s v%s and writes %s", in, rec.TypeName(), v, again, err, f[1], f[2], f[3])
			}
		case f[0] == "OK":
			reason := err.(*metadata.Error).Reason
			known := false
			for _, s := range stricterThanKafka {
				if strings.Contains(reason, s) && !known {
					if stricter[s]++; stricter[s] == 1 {
						t.Logf("kraftd refuses %x (%v); Kafka reads type %s v%s", in, err, f[1], f[2])
					}
					known = true
				}
			}
			if !known {
				t.Errorf("%x: Kafka reads it (type %s v%s), kraftd refuses it: %v", in, f[1], f[2], err)
			}
		}
	}
	var classes []string
	for s, n := range stricter {
		classes = append(classes, fmt.Sprintf("%q %d", s, n))
	}
	sort.Strings(classes)
	t.Logf("%d damaged records, %d read by both; kraftd alone refuses: %s", len(inputs), accepted, strings.Join(classes, ", "))
}

// The level table against Kafka 4.4.0's MetadataVersion, level by level.
func TestMetadataVersionTableAgainstKafka(t *testing.T) {
	t.Parallel()
	lines := kafkaRecords(t, []string{"levels"})
	if len(lines) < 2 || lines[len(lines)-1] != "END" {
		t.Fatalf("%q", lines)
	}
	gates := map[string]metadata.Gate{
		"migration": metadata.GateMigration, "scram": metadata.GateScram, "transactions": metadata.GateMetadataTransactions,
		"delegationTokens": metadata.GateDelegationTokens, "controllerRegistration": metadata.GateControllerRegistration,
		"directoryAssignment": metadata.GateDirectoryAssignment, "elr": metadata.GateElr,
		"cordonedLogDirs": metadata.GateCordonedLogDirs, "cidrAcl": metadata.GateCidrAcl,
		"controllerUnregistration": metadata.GateControllerUnregistration,
	}
	records := map[string]int16{
		"registerBrokerRecord": metadata.RegisterBrokerRecordAPIKey, "partitionRecord": metadata.PartitionRecordAPIKey,
		"partitionChangeRecord": metadata.PartitionChangeRecordAPIKey, "registerControllerRecord": metadata.RegisterControllerRecordAPIKey,
	}
	var levels []metadata.Level
	for _, line := range lines[:len(lines)-1] {
		f := strings.Fields(line)
		n, err := strconv.Atoi(f[0])
		if err != nil {
			t.Fatalf("%q", line)
		}
		l := metadata.Level(n)
		levels = append(levels, l)
		for _, kv := range f[2:] {
			k, v, _ := strings.Cut(kv, "=")
			switch {
			case k == "production":
				if want := l <= metadata.LatestProductionLevel; (v == "true") != want {
					t.Errorf("%s (%d): production %s", f[1], l, v)
				}
			case k == "epochBumpOnIsrShrink":
				if l.Has(metadata.GateNoLeaderEpochBumpOnIsrShrink) == (v == "true") {
					t.Errorf("%s (%d): %s", f[1], l, kv)
				}
			case gates[k] != 0:
				if l.Has(gates[k]) != (v == "true") {
					t.Errorf("%s (%d): %s, kraftd %v", f[1], l, kv, l.Has(gates[k]))
				}
			case records[k] != 0 || k == "registerBrokerRecord":
				got, ok := l.RecordVersion(records[k])
				if !ok {
					got = -1
				}
				if strconv.Itoa(int(got)) != v {
					t.Errorf("%s (%d): %s, kraftd %d", f[1], l, kv, got)
				}
			default:
				t.Errorf("unknown predicate %q", kv)
			}
		}
	}
	if levels[0] != metadata.MinLevel || levels[len(levels)-1] != metadata.LatestLevel || len(levels) != int(metadata.LatestLevel-metadata.MinLevel+1) {
		t.Errorf("Kafka's levels %v", levels)
	}
	for l := metadata.MinLevel; l <= metadata.LatestLevel; l++ {
		if !l.Known() {
			t.Errorf("level %d unknown", l)
		}
	}
	if (metadata.MinLevel - 1).Known() || (metadata.LatestLevel + 1).Known() {
		t.Error("levels beyond Kafka's known")
	}
}

// kafka-dump-log --cluster-metadata-decoder, Kafka's own tool, reads a
// segment of kraftd-encoded records of every type at every version (unknown
// tags included) without an error, and shows each with the fields kraftd
// wrote.
func TestMetadataRecordsDumpLog(t *testing.T) {
	t.Parallel()
	env := kafkatest.Require(t)
	r := rand.New(rand.NewPCG(corpusSeed(t), 11))
	corpus := append(recordCorpus(t, r, 2, false), recordCorpus(t, r, 1, true)...)
	var seg []byte
	for i := 0; i < len(corpus); {
		b := protocol.Batch{BaseOffset: int64(i), PartitionLeaderEpoch: 1, BaseTimestamp: 1700000000000, MaxTimestamp: 1700000000000}
		for ; i < len(corpus) && len(b.Records) < 10; i++ {
			b.Records = append(b.Records, protocol.Record{OffsetDelta: int32(len(b.Records)), Value: corpus[i].value})
		}
		seg = protocol.AppendBatch(seg, b)
	}
	dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "00000000000000000000.log")
	if err := os.WriteFile(path, seg, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := env.DumpLog(ctx, kafkatest.DumpOptions{ClusterMetadataDecoder: true}, path)
	if err != nil {
		t.Fatal(err)
	}
	files, err := kafkatest.ParseDumpLog(out)
	if err != nil || len(files) != 1 {
		t.Fatalf("%d files, %v", len(files), err)
	}
	var recs []kafkatest.DumpRecord
	for _, b := range files[0].Batches {
		recs = append(recs, b.Records...)
	}
	if len(recs) != len(corpus) {
		t.Fatalf("kafka-dump-log shows %d records of %d", len(recs), len(corpus))
	}
	for i, c := range corpus {
		name := fmt.Sprintf("offset %d, %s v%d (%s)", i, c.rec.TypeName(), c.version, c.what)
		payload, ok := strings.CutPrefix(recs[i].Rest, "payload: ")
		if !ok {
			t.Errorf("%s: %.300s", name, recs[i].Rest)
			continue
		}
		var p struct {
			Type    string          `json:"type"`
			Version int16           `json:"version"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(payload), &p); err != nil {
			t.Errorf("%s: %v: %.300s", name, err, payload)
			continue
		}
		if want := recordTypeName(c.rec.TypeName()); p.Type != want || p.Version != c.version {
			t.Errorf("%s: shown as %s v%d, want %s", name, p.Type, p.Version, want)
		}
		ours, err := metareflect.KafkaJSON(c.rec, c.version)
		if err != nil {
			t.Fatal(err)
		}
		if d, err := metareflect.JSONEqual(ours, p.Data); err != nil || d != "" {
			t.Errorf("%s: kafka-dump-log shows a different %s (%v):\n%.500s\n%.500s", name, d, err, p.Data, ours)
		}
	}
	t.Logf("kafka-dump-log decoded %d records in %d batches", len(recs), len(files[0].Batches))
}

// recordTypeName is Kafka's MetadataRecordType name of a record type:
// PartitionChangeRecord -> PARTITION_CHANGE_RECORD.
func recordTypeName(name string) string {
	var b strings.Builder
	for i, r := range name {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}
