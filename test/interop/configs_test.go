package interop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/controller/configs"
	"github.com/kraftd/kraftd/protocol/metadata"
)

// kafkaConfigs runs testdata/KafkaTopicConfigs.java (Kafka 4.4.0's own
// LogConfig, ConfigurationControlManager and KafkaConfigSchema) over JSON
// commands and returns one answer per command.
func kafkaConfigs(t *testing.T, commands []any) []json.RawMessage {
	t.Helper()
	var in bytes.Buffer
	for _, c := range commands {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		in.Write(b)
		in.WriteByte('\n')
	}
	cmd := javaProgram(t, "KafkaTopicConfigs")()
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(5*time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	var answers []json.RawMessage
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "R "); ok {
			answers = append(answers, json.RawMessage(line))
		}
	}
	io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("KafkaTopicConfigs: %v\n%s", err, stderr.Bytes())
	}
	if len(answers) != len(commands) {
		t.Fatalf("KafkaTopicConfigs answered %d of %d commands\n%s", len(answers), len(commands), stderr.Bytes())
	}
	return answers
}

type kafkaSchema struct {
	Topic []struct {
		Name       string
		Type       string
		HasDefault bool
		Default    *string
		Validator  string
		Internal   bool
		Synonyms   []struct {
			Name   string
			Factor int64
		}
	}
	BrokerLists map[string]string
	Sources     map[string]int8
	Fail        string
}

// TestTopicSchemaMatchesKafka compares kraftd's topic configuration table
// with Kafka 4.4.0's LogConfig, field by field and in definition order, its
// BROKER LIST keys with KafkaConfig's and the ConfigSource ids.
func TestTopicSchemaMatchesKafka(t *testing.T) {
	var s kafkaSchema
	if err := json.Unmarshal(kafkaConfigs(t, []any{map[string]string{"op": "schema"}})[0], &s); err != nil {
		t.Fatal(err)
	}
	if s.Fail != "" {
		t.Fatal(s.Fail)
	}
	ours := configs.TopicKeys()
	if len(ours) != len(s.Topic) {
		t.Errorf("kraftd has %d topic keys, Kafka %d", len(ours), len(s.Topic))
	}
	for i := 0; i < min(len(ours), len(s.Topic)); i++ {
		k, j := ours[i], s.Topic[i]
		def := ""
		if j.Default != nil {
			def = *j.Default
		}
		validator := ""
		if k.Validator != nil {
			validator = k.Validator.String()
		}
		var syns []string
		for _, sy := range k.Synonyms {
			syns = append(syns, fmt.Sprintf("%s*%d", sy.Name, sy.Factor))
		}
		var jsyns []string
		for _, sy := range j.Synonyms {
			jsyns = append(jsyns, fmt.Sprintf("%s*%d", sy.Name, sy.Factor))
		}
		got := fmt.Sprintf("%s %s default=%v:%q validator=%q internal=%v synonyms=%v", k.Name, k.Type, k.HasDefault, k.Default, validator, k.Internal, syns)
		want := fmt.Sprintf("%s %s default=%v:%q validator=%q internal=%v synonyms=%v", j.Name, j.Type, j.HasDefault, def, j.Validator, j.Internal, jsyns)
		if got != want {
			t.Errorf("key %d:\n kraftd %s\n  Kafka %s", i, got, want)
		}
	}
	lists := configs.BrokerListKeys()
	for name, def := range s.BrokerLists {
		if got, ok := lists[name]; !ok || got != def {
			t.Errorf("BROKER LIST key %s: kraftd %q (%v), Kafka %q", name, got, ok, def)
		}
	}
	for name := range lists {
		if _, ok := s.BrokerLists[name]; !ok {
			t.Errorf("BROKER LIST key %s is not one in Kafka", name)
		}
	}
	for name, id := range map[string]configs.Source{
		"TOPIC_CONFIG":                  configs.SourceTopic,
		"DYNAMIC_BROKER_CONFIG":         configs.SourceDynamicBroker,
		"DYNAMIC_DEFAULT_BROKER_CONFIG": configs.SourceDynamicDefaultBroker,
		"STATIC_BROKER_CONFIG":          configs.SourceStaticBroker,
		"DEFAULT_CONFIG":                configs.SourceDefault,
	} {
		if s.Sources[name] != int8(id) {
			t.Errorf("ConfigSource %s: kraftd %d, Kafka %d", name, id, s.Sources[name])
		}
	}
}

type jsonRecord struct {
	Type     int8    `json:"type"`
	Name     string  `json:"name"`
	Key      string  `json:"key"`
	Value    *string `json:"value"`
	ClearElr bool    `json:"clearElr,omitempty"`
	Topic    string  `json:"topic,omitempty"`
}

type jsonOp struct {
	Key   string  `json:"key"`
	Op    int8    `json:"op"`
	Value *string `json:"value"`
}

type alterCase struct {
	Op                  string            `json:"op"`
	ELR                 bool              `json:"elr"`
	CordonedUnsupported bool              `json:"cordonedUnsupported"`
	Forwarded           bool              `json:"forwarded"`
	Created             bool              `json:"created"`
	Legacy              bool              `json:"legacy"`
	Static              map[string]string `json:"static"`
	Existing            []jsonRecord      `json:"existing"`
	Resource            struct {
		Type int8   `json:"type"`
		Name string `json:"name"`
	} `json:"resource"`
	Ops []jsonOp `json:"ops"`
}

type alterAnswer struct {
	Code    int16        `json:"code"`
	Msg     *string      `json:"msg"`
	Records []jsonRecord `json:"records"`
	Fail    string       `json:"fail"`
}

// kraftdAlter answers an alterCase with the configs package.
func kraftdAlter(c alterCase) alterAnswer {
	ctx := configs.Context{
		Current:                    map[string]string{},
		Server:                     configs.ServerLogConfigFromStatic(c.Static),
		ELR:                        c.ELR,
		CordonedLogDirsUnsupported: c.CordonedUnsupported,
		Forwarded:                  c.Forwarded,
	}
	for _, r := range c.Existing {
		if r.Type == c.Resource.Type && r.Name == c.Resource.Name && r.Value != nil {
			ctx.Current[r.Key] = *r.Value
		}
	}
	ops := make([]configs.Op, len(c.Ops))
	for i, o := range c.Ops {
		ops[i] = configs.Op{Name: o.Key, Op: configs.OpType(o.Op), Value: o.Value}
	}
	var recs []metadata.ConfigRecord
	var err *configs.Error
	switch {
	case c.Legacy:
		recs, err = configs.LegacyAlter(c.Resource.Type, c.Resource.Name, ops, ctx)
	case c.Created:
		recs, err = configs.CreateTopicRecords(c.Resource.Name, ops, ctx)
	default:
		recs, err = configs.IncrementalAlter(c.Resource.Type, c.Resource.Name, ops, ctx)
	}
	var a alterAnswer
	if err != nil {
		a.Code, a.Msg = err.Err.Code, &err.Message
		return a
	}
	for _, r := range recs {
		a.Records = append(a.Records, jsonRecord{Type: r.ResourceType, Name: r.ResourceName, Key: r.Name, Value: r.Value})
	}
	for _, ce := range configs.ClearElrRecords(recs, c.ELR) {
		a.Records = append(a.Records, jsonRecord{ClearElr: true, Topic: ce.TopicName})
	}
	return a
}

func recordStrings(rs []jsonRecord) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		b, _ := json.Marshal(r)
		out[i] = string(b)
	}
	slices.Sort(out)
	return out
}

// TestConfigAlterMatchesKafka runs thousands of generated
// IncrementalAlterConfigs, AlterConfigs and CreateTopics config changes
// through Kafka 4.4.0's ConfigurationControlManager (with its
// ControllerConfigurationValidator) and through kraftd, and requires the
// same error code, message and records.
func TestConfigAlterMatchesKafka(t *testing.T) {
	seed := corpusSeed(t)
	g := &configGen{r: rand.New(rand.NewPCG(seed, seed^0x5eed))}
	const n = 4000
	cases := make([]alterCase, n)
	cmds := make([]any, n)
	for i := range cases {
		cases[i] = g.alterCase()
		cmds[i] = cases[i]
	}
	answers := kafkaConfigs(t, cmds)
	failures, accepted := 0, 0
	kinds := map[string]int{}
	for i, raw := range answers {
		var want alterAnswer
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if want.Fail != "" {
			t.Fatalf("case %d: Kafka failed: %s", i, want.Fail)
		}
		if want.Code != 0 {
			want.Records = nil
		} else {
			want.Msg = nil
			accepted++
		}
		if want.Msg != nil {
			kind, _, _ := strings.Cut(*want.Msg, " for configuration")
			kinds[fmt.Sprintf("%d %.60s", want.Code, kind)]++
		}
		got := kraftdAlter(cases[i])
		if got.Code == want.Code && ptrEq(got.Msg, want.Msg) && slices.Equal(recordStrings(got.Records), recordStrings(want.Records)) {
			continue
		}
		if failures++; failures <= 20 {
			cj, _ := json.Marshal(cases[i])
			t.Errorf("case %d %s\n kraftd: %d %q %v\n  Kafka: %d %q %v", i, cj, got.Code, deref(got.Msg), recordStrings(got.Records),
				want.Code, deref(want.Msg), recordStrings(want.Records))
		}
	}
	if failures > 0 {
		t.Errorf("%d of %d cases differ", failures, n)
	}
	t.Logf("%d cases, %d accepted by Kafka; %d kinds of refusal", n, accepted, len(kinds))
	if testing.Verbose() {
		for _, k := range slices.Sorted(maps.Keys(kinds)) {
			t.Logf("%5d  %s", kinds[k], k)
		}
	}
	if accepted < n/10 || accepted > n*9/10 {
		t.Errorf("the corpus is lopsided: %d of %d accepted", accepted, n)
	}
}

func ptrEq(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

type effectiveCase struct {
	Op      string            `json:"op"`
	Static  map[string]string `json:"static"`
	Cluster map[string]string `json:"cluster"`
	Node    map[string]string `json:"node"`
	Topic   map[string]string `json:"topic"`
}

type effectiveEntry struct {
	Name      string  `json:"name"`
	Value     *string `json:"value"`
	ReadOnly  bool    `json:"readOnly"`
	Source    int8    `json:"source"`
	Sensitive bool    `json:"sensitive"`
}

// TestEffectiveTopicConfigMatchesKafka compares kraftd's effective topic
// configuration (the CreateTopics response's Configs) with Kafka 4.4.0's
// KafkaConfigSchema.resolveEffectiveTopicConfigs on generated layers.
func TestEffectiveTopicConfigMatchesKafka(t *testing.T) {
	seed := corpusSeed(t)
	g := &configGen{r: rand.New(rand.NewPCG(seed, seed^0xeff))}
	const n = 500
	cases := make([]effectiveCase, n)
	cmds := make([]any, n)
	for i := range cases {
		cases[i] = effectiveCase{"effective", g.layer(true), g.layer(true), g.layer(true), g.layer(false)}
		cmds[i] = cases[i]
	}
	for i, raw := range kafkaConfigs(t, cmds) {
		var want struct {
			Entries []effectiveEntry
			Fail    string
		}
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if want.Fail != "" {
			t.Fatalf("case %d: Kafka failed: %s", i, want.Fail)
		}
		c := cases[i]
		var got []effectiveEntry
		for _, e := range configs.CreateTopicsConfigs(configs.Layers{Static: c.Static, Cluster: c.Cluster, Node: c.Node, Topic: c.Topic}) {
			got = append(got, effectiveEntry{e.Name, e.Value, e.ReadOnly, e.Source, e.IsSensitive})
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want.Entries)
		if !bytes.Equal(gj, wj) {
			cj, _ := json.Marshal(c)
			t.Fatalf("case %d %s\n kraftd %s\n  Kafka %s", i, cj, gj, wj)
		}
	}
}
