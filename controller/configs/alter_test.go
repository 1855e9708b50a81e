package configs

import (
	"strings"
	"testing"

	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/twmb/franz-go/pkg/kerr"
)

func sp(s string) *string { return &s }

func recString(rs []metadata.ConfigRecord) string {
	var b strings.Builder
	for _, r := range rs {
		v := "null"
		if r.Value != nil {
			v = *r.Value
		}
		b.WriteString(r.Name + "=" + v + ";")
	}
	return b.String()
}

func TestIncrementalAlterOps(t *testing.T) {
	cur := map[string]string{"retention.ms": "1000", "cleanup.policy": "compact"}
	for _, c := range []struct {
		name string
		ops  []Op
		want string
	}{
		{"set changes", []Op{{"retention.ms", OpSet, sp("2000")}}, "retention.ms=2000;"},
		{"set to the same value writes nothing", []Op{{"retention.ms", OpSet, sp("1000")}}, ""},
		{"delete", []Op{{"retention.ms", OpDelete, nil}}, "retention.ms=null;"},
		{"delete of an unset key writes nothing", []Op{{"segment.ms", OpDelete, nil}}, ""},
		{"append", []Op{{"cleanup.policy", OpAppend, sp("delete")}}, "cleanup.policy=compact,delete;"},
		{"append of a present item", []Op{{"cleanup.policy", OpAppend, sp("compact")}}, ""},
		{"subtract", []Op{{"cleanup.policy", OpSubtract, sp("compact")}}, "cleanup.policy=;"},
		{"append starts from the default", []Op{{"leader.replication.throttled.replicas", OpAppend, sp("1:2,3:4")}},
			"leader.replication.throttled.replicas=1:2,3:4;"},
		{"the last operation on a key wins", []Op{{"retention.ms", OpSet, sp("5")}, {"retention.ms", OpSet, sp("6")}}, "retention.ms=6;"},
		{"keys in HashMap order", []Op{{"segment.bytes", OpSet, sp("1048576")}, {"min.insync.replicas", OpSet, sp("2")}},
			"min.insync.replicas=2;segment.bytes=1048576;"},
	} {
		recs, err := IncrementalAlter(TopicResource, "t", c.ops, Context{Current: cur})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := recString(recs); got != c.want {
			t.Errorf("%s: records %q, want %q", c.name, got, c.want)
		}
	}
}

func TestApplyListOp(t *testing.T) {
	for _, c := range []struct {
		base string
		op   OpType
		arg  string
		want string
	}{
		{"delete", OpAppend, "compact", "delete,compact"},
		{"a,b", OpAppend, "b,c,c", "a,b,c"},
		{"a,,b", OpAppend, "", "a,b,"},
		{"a,b,a", OpSubtract, "a", "b,a"},
		{"a,b", OpSubtract, "x", "a,b"},
		{"a,b", OpAppend, ",", "a,b"},
		{"a, b", OpAppend, " b", "a, b"},
	} {
		if got := applyListOp(c.base, c.op, c.arg); got != c.want {
			t.Errorf("%s %q %v %q = %q, want %q", c.op, c.base, c.op, c.arg, got, c.want)
		}
	}
}

func TestBrokerResourcesAlwaysWrite(t *testing.T) {
	cur := map[string]string{"log.retention.ms": "5"}
	recs, err := IncrementalAlter(BrokerResource, "1", []Op{{"log.retention.ms", OpSet, sp("5")}}, Context{Current: cur})
	if err != nil || recString(recs) != "log.retention.ms=5;" {
		t.Fatalf("got %q %v, want the unchanged key written (KAFKA-14136)", recString(recs), err)
	}
	recs, err = IncrementalAlter(BrokerResource, "", []Op{{"log.dirs", OpAppend, sp("/b")}}, Context{})
	if err != nil || recString(recs) != "log.dirs=/b;" {
		t.Fatalf("APPEND to a BROKER LIST key: %q %v", recString(recs), err)
	}
}

func wantErr(t *testing.T, what string, err *Error, code *kerr.Error, msg string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted, want %v %q", what, code, msg)
		return
	}
	if err.Err != code || err.Message != msg {
		t.Errorf("%s: %v %q, want %v %q", what, err.Err, err.Message, code, msg)
	}
}

func TestIncrementalAlterErrors(t *testing.T) {
	big := strings.Repeat("x", MaxValueSize+1)
	for _, c := range []struct {
		name  string
		typ   int8
		res   string
		ops   []Op
		ctx   Context
		code  *kerr.Error
		msg   string
		fails bool
	}{
		{name: "append to a non-list", typ: TopicResource, res: "t", ops: []Op{{"retention.ms", OpAppend, sp("1")}},
			code: kerr.InvalidConfig, msg: "Can't APPEND to key retention.ms because its type is not LIST."},
		{name: "subtract from an unknown key", typ: TopicResource, res: "t", ops: []Op{{"nope", OpSubtract, sp("1")}},
			code: kerr.InvalidConfig, msg: "Can't SUBTRACT to key nope because its type is not LIST."},
		{name: "default topic", typ: TopicResource, res: "", ops: []Op{{"retention.ms", OpSet, sp("1")}},
			code: kerr.InvalidRequest, msg: "Default topic resources are not allowed."},
		{name: "bad topic name", typ: TopicResource, res: "a b", ops: []Op{{"retention.ms", OpSet, sp("1")}},
			code: kerr.InvalidTopicException, msg: "Topic name is invalid: 'a b' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"},
		{name: "unknown key", typ: TopicResource, res: "t", ops: []Op{{"nope", OpSet, sp("1")}},
			code: kerr.InvalidConfig, msg: "Unknown topic config name: nope"},
		{name: "not a number", typ: TopicResource, res: "t", ops: []Op{{"retention.ms", OpSet, sp(" x ")}},
			code: kerr.InvalidConfig, msg: "Invalid value  x  for configuration retention.ms: Not a number of type LONG"},
		{name: "out of range", typ: TopicResource, res: "t", ops: []Op{{"min.insync.replicas", OpSet, sp("0")}},
			code: kerr.InvalidConfig, msg: "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"},
		{name: "double out of range", typ: TopicResource, res: "t", ops: []Op{{"min.cleanable.dirty.ratio", OpSet, sp("2")}},
			code: kerr.InvalidConfig, msg: "Invalid value 2.0 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"},
		{name: "bad boolean", typ: TopicResource, res: "t", ops: []Op{{"preallocate", OpSet, sp("yes")}},
			code: kerr.InvalidConfig, msg: "Invalid value yes for configuration preallocate: Expected value to be either true or false"},
		{name: "bad list item", typ: TopicResource, res: "t", ops: []Op{{"cleanup.policy", OpSet, sp("compact,,delete")}},
			code: kerr.InvalidConfig, msg: "Configuration 'cleanup.policy' values must not be empty."},
		{name: "bad string", typ: TopicResource, res: "t", ops: []Op{{"compression.type", OpSet, sp("GZIP")}},
			code: kerr.InvalidConfig, msg: "Invalid value GZIP for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"},
		{name: "bad throttled list", typ: TopicResource, res: "t", ops: []Op{{"leader.replication.throttled.replicas", OpSet, sp("1:a, 2:3")}},
			code: kerr.InvalidConfig, msg: "Invalid value [1:a, 2:3] for configuration leader.replication.throttled.replicas: leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."},
		{name: "gzip level", typ: TopicResource, res: "t", ops: []Op{{"compression.gzip.level", OpSet, sp("0")}},
			code: kerr.InvalidConfig, msg: "Invalid value 0 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1"},
		{name: "compaction lags against the current config", typ: TopicResource, res: "t",
			ops: []Op{{"min.compaction.lag.ms", OpSet, sp("10")}}, ctx: Context{Current: map[string]string{"max.compaction.lag.ms": "5"}},
			code: kerr.InvalidConfig, msg: "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"},
		{name: "compaction lags against the server's", typ: TopicResource, res: "t",
			ops: []Op{{"max.compaction.lag.ms", OpSet, sp("5")}}, ctx: Context{Server: ServerLogConfigFromStatic(map[string]string{"log.cleaner.min.compaction.lag.ms": "9"})},
			code: kerr.InvalidConfig, msg: "conflict topic config setting min.compaction.lag.ms (9) > max.compaction.lag.ms (5)"},
		{name: "tiered storage", typ: TopicResource, res: "t", ops: []Op{{"remote.storage.enable", OpSet, sp("true")}},
			code: kerr.InvalidConfig, msg: "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage."},
		{name: "turning tiered storage off", typ: TopicResource, res: "t", ops: []Op{{"remote.storage.enable", OpSet, sp("false")}},
			ctx:  Context{Current: map[string]string{"remote.storage.enable": "true"}},
			code: kerr.InvalidConfig, msg: remoteDisabledMessage},
		{name: "value too long", typ: TopicResource, res: "t", ops: []Op{{"retention.ms", OpSet, &big}},
			code: kerr.InvalidConfig, msg: "The configuration value cannot be added because it exceeds the maximum value size of 32767 bytes."},
		{name: "broker name", typ: BrokerResource, res: "x", ops: []Op{{"a", OpSet, sp("1")}},
			code: kerr.InvalidRequest, msg: "Unable to parse broker name as a base 10 number."},
		{name: "negative broker", typ: BrokerResource, res: "-1", ops: []Op{{"a", OpSet, sp("1")}},
			code: kerr.InvalidRequest, msg: "Invalid negative broker ID."},
		{name: "broker min ISR under ELR", typ: BrokerResource, res: "1", ops: []Op{{"min.insync.replicas", OpSet, sp("2")}},
			ctx: Context{ELR: true}, code: kerr.InvalidConfig, msg: "Broker-level min.insync.replicas cannot be altered while ELR is enabled."},
		{name: "cluster min ISR removal under ELR", typ: BrokerResource, res: "", ops: []Op{{"min.insync.replicas", OpDelete, nil}},
			ctx: Context{ELR: true}, code: kerr.InvalidConfig, msg: "Cluster-level min.insync.replicas cannot be removed while ELR is enabled."},
		{name: "cordoned dirs need MV 4.3", typ: BrokerResource, res: "1", ops: []Op{{"cordoned.log.dirs", OpSet, sp("/a")}},
			ctx: Context{CordonedLogDirsUnsupported: true}, code: kerr.InvalidConfig,
			msg: "The cordoned.log.dirs configuration value cannot be set because it requires metadata.version >= 4.3-IV0"},
		{name: "cordoned dirs subset", typ: BrokerResource, res: "1", ops: []Op{{"cordoned.log.dirs", OpSet, sp("/a,/b")}},
			ctx: Context{Current: map[string]string{"cordoned.log.dirs": "/a"}}, code: kerr.InvalidConfig,
			msg: "When updating cordoned.log.dirs via controllers,  the new value must be a subset of the current configuration value."},
	} {
		_, err := IncrementalAlter(c.typ, c.res, c.ops, c.ctx)
		wantErr(t, c.name, err, c.code, c.msg)
	}
	// A forwarded request may cordon any directory.
	if _, err := IncrementalAlter(BrokerResource, "1", []Op{{"cordoned.log.dirs", OpSet, sp("/b")}}, Context{Forwarded: true}); err != nil {
		t.Errorf("forwarded cordoned.log.dirs: %v", err)
	}
	// The cluster-level min ISR may be set under ELR.
	if _, err := IncrementalAlter(BrokerResource, "", []Op{{"min.insync.replicas", OpSet, sp("2")}}, Context{ELR: true}); err != nil {
		t.Errorf("cluster-level min.insync.replicas: %v", err)
	}
}

func TestLegacyAlterReplacesTheResource(t *testing.T) {
	cur := map[string]string{"retention.ms": "1000", "segment.ms": "5", "cleanup.policy": "compact"}
	recs, err := LegacyAlter(TopicResource, "t", []Op{{Name: "retention.ms", Value: sp("1000")}, {Name: "segment.ms", Value: sp("6")}}, Context{Current: cur})
	if err != nil {
		t.Fatal(err)
	}
	if got := recString(recs); got != "segment.ms=6;cleanup.policy=null;" {
		t.Errorf("records %q", got)
	}
}

func TestCreateTopicRecords(t *testing.T) {
	_, err := CreateTopicRecords("t", []Op{{Name: "b"}, {Name: "retention.ms", Value: sp("1")}, {Name: "a"}}, Context{})
	wantErr(t, "nulls", err, kerr.InvalidConfig, "Null value not supported for topic configs: b,a")
	recs, err := CreateTopicRecords("t", []Op{{Name: "min.insync.replicas", Value: sp("2")}}, Context{Current: map[string]string{"min.insync.replicas": "2"}})
	if err != nil || recString(recs) != "min.insync.replicas=2;" {
		t.Errorf("a new topic starts empty: %q %v", recString(recs), err)
	}
	if clear := ClearElrRecords(recs, true); len(clear) != 1 || clear[0].TopicName != "t" {
		t.Errorf("ClearElrRecords = %+v", clear)
	}
	if clear := ClearElrRecords(recs, false); clear != nil {
		t.Errorf("ClearElrRecords without ELR = %+v", clear)
	}
}

func TestUnknownKeysReportedInHashMapOrder(t *testing.T) {
	// Java's HashMap of {retention.ms.x, Retention.ms, foo.bar} iterates
	// foo.bar, Retention.ms, retention.ms.x.
	_, err := IncrementalAlter(TopicResource, "t", []Op{{"retention.ms.x", OpSet, sp("1")}, {"Retention.ms", OpSet, sp("1")}, {"foo.bar", OpSet, sp("1")}}, Context{})
	wantErr(t, "three unknown keys", err, kerr.InvalidConfig, "Unknown topic config name: foo.bar")
}

func TestKafkaAcceptsOddValues(t *testing.T) {
	// Each of these Kafka 4.4.0 accepts, storing the text as sent.
	for k, v := range map[string]string{
		"cleanup.policy": "compact,compact", "min.cleanable.dirty.ratio": "NaN",
		"leader.replication.throttled.replicas": "1:2,,3:4", "follower.replication.throttled.replicas": "*,",
		"min.insync.replicas": " 2", "segment.bytes": "\u0661\u0660\u0664\u0668\u0665\u0667\u0666",
		"max.compaction.lag.ms": "+7", "preallocate": "TRUE",
	} {
		recs, err := IncrementalAlter(TopicResource, "t", []Op{{k, OpSet, sp(v)}}, Context{})
		if err != nil || len(recs) != 1 || *recs[0].Value != v {
			t.Errorf("%s=%q: %v %v", k, v, recString(recs), err)
		}
	}
}

func TestListOpsOnLongValues(t *testing.T) {
	// Linear, not quadratic: 200000 items each way.
	items := strings.Repeat("x,", 100000) + strings.Repeat("y,", 100000)
	if got := applyListOp("a", OpAppend, items); got != "a,x,y" {
		t.Errorf("APPEND: %.40q", got)
	}
	if got := applyListOp(items, OpSubtract, strings.Repeat("x,", 99999)); got != "x,"+strings.TrimSuffix(strings.Repeat("y,", 100000), ",") {
		t.Errorf("SUBTRACT: %.40q", got)
	}
}
