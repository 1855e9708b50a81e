package interop

import (
	"math/rand/v2"
	"strings"

	"github.com/kraftd/kraftd/controller/configs"
)

// configGen makes configuration changes that probe Kafka's parsing and
// validation: values in and out of range, near the int and long limits,
// non-numbers, Java-only number forms, odd-case booleans, whitespace,
// unknown keys, cross-key conflicts, bad resource names, list operations.
type configGen struct{ r *rand.Rand }

func (g *configGen) pick(s ...string) string { return s[g.r.IntN(len(s))] }

func (g *configGen) chance(p float64) bool { return g.r.Float64() < p }

var genTopicKeys = configs.TopicKeys()

var intValues = []string{"0", "1", "-1", "-2", "2", "5", "100", " 7 ", "+3", "\t42\n", "07", "-0",
	"2147483647", "2147483648", "-2147483648", "-2147483649", "9223372036854775807", "9223372036854775808",
	"-9223372036854775808", "-9223372036854775809", "abc", "1.5", "", "  ", "1e3", "0x10", "1_000",
	"\u0661\u0662", "\uff11\uff12", "1 2", "--1", "+", "86400000", "604800000", "1048576", "1048575",
	"3600000", "-131072", "-131073", "22", "23", "9", "10", "17", "18", "\u00a05"}

var doubleValues = []string{"0.5", "1", "0", "-0.1", "1.01", "NaN", "Infinity", "-Infinity", "1e-5", "1.5d",
	"0.3f", "0x1p-2", ".5", "5.", "1e", "abc", "1_0", "inf", "2", " 0.7 ", "1E0", "0.9999999", "+0.25",
	"1e400", "-1e-400", "nan", "0.1D", "12345678.5", "0.0001", "833866235444165760", "1e18", "-7.2067486459501056E16",
	"123456789012345678", "2.5e-4"}

var boolValues = []string{"true", "TRUE", "tRuE", "false", " false ", "yes", "1", "", "fals\u017fe", "False", "t"}

func (g *configGen) value(k configs.Key) string {
	switch k.Name {
	case "cleanup.policy":
		return g.pick("delete", "compact", "compact,delete", "delete,compact", " compact , delete ", "compact,,delete",
			"", "compact,compact", "Compact", "delete,", ",delete", " ", "compact, delete,", "delete\t,\tcompact", "none")
	case "leader.replication.throttled.replicas", "follower.replication.throttled.replicas":
		return g.pick("*", "1:2", "1:2,3:4", " 1:2 , 3:4 ", "1:2,,3:4", "*,1:2", "a:b", "1:", "1:2:3", "", "* ",
			"0:0,*", ",*", "*,", "\u0661:2")
	case "compression.type":
		return g.pick("gzip", "snappy", "lz4", "zstd", "uncompressed", "producer", "GZIP", " gzip ", "none", "")
	case "message.timestamp.type":
		return g.pick("CreateTime", "LogAppendTime", "createtime", " LogAppendTime ", "")
	}
	switch k.Type {
	case configs.Boolean:
		return g.pick(boolValues...)
	case configs.Double:
		return g.pick(doubleValues...)
	}
	return g.pick(intValues...)
}

// validValue is a value Kafka accepts for k on its own.
func (g *configGen) validValue(k configs.Key) string {
	switch k.Name {
	case "cleanup.policy":
		return g.pick("delete", "compact", "compact,delete")
	case "leader.replication.throttled.replicas", "follower.replication.throttled.replicas":
		return g.pick("*", "1:2", "")
	case "compression.type":
		return g.pick("gzip", "lz4", "producer")
	case "message.timestamp.type":
		return g.pick("CreateTime", "LogAppendTime")
	case "remote.storage.enable":
		return "false"
	case "min.cleanable.dirty.ratio":
		return g.pick("0.1", "0.5", "1")
	case "max.compaction.lag.ms", "segment.ms", "min.insync.replicas", "max.decompressed.message.bytes", "compression.lz4.level":
		return g.pick("1", "2", "9")
	case "segment.bytes", "internal.segment.bytes":
		return "1048576"
	case "compression.gzip.level":
		return g.pick("-1", "5")
	}
	switch k.Type {
	case configs.Boolean:
		return g.pick("true", "false")
	}
	return g.pick("0", "1", "3", "100")
}

func (g *configGen) topicName() string {
	if g.chance(0.93) {
		return "t1"
	}
	return g.pick("", ".", "..", "bad name", "t\u00e9", strings.Repeat("x", 250), strings.Repeat("y", 249), "a/b")
}

func (g *configGen) brokerName() string {
	return g.pick("", "", "1", "2", "-1", "abc", "01", "+5", "2147483648", " 1", "\u0661")
}

var brokerKeys = []string{"min.insync.replicas", "log.retention.ms", "cordoned.log.dirs", "log.dirs",
	"listeners", "metric.reporters", "num.io.threads", "unclean.leader.election.enable"}

func (g *configGen) alterCase() alterCase {
	var c alterCase
	c.Op = "alter"
	c.ELR = g.chance(0.5)
	c.CordonedUnsupported = g.chance(0.1)
	c.Forwarded = g.chance(0.5)
	c.Static = map[string]string{}
	if g.chance(0.2) {
		c.Static["log.cleaner.min.compaction.lag.ms"] = g.pick("0", "1000")
	}
	if g.chance(0.2) {
		c.Static["log.cleaner.max.compaction.lag.ms"] = g.pick("500", "100000")
	}
	if g.chance(0.1) {
		c.Static["log.retention.hours"] = g.pick("1", "24")
	}
	if g.chance(0.1) {
		c.Static[g.pick("log.retention.ms", "log.retention.minutes")] = g.pick("-5", "2", " 60000 ")
	}
	if g.chance(0.1) {
		c.Static[g.pick("log.roll.jitter.hours", "log.flush.scheduler.interval.ms", "log.local.retention.ms")] = g.pick("1", "1000")
	}
	if g.chance(0.1) {
		c.Static["log.cleanup.policy"] = g.pick("compact", "compact,delete", "")
	}
	broker := g.chance(0.2)
	mode := g.r.IntN(10)
	c.Legacy = mode == 0
	c.Created = !broker && mode == 1
	if broker {
		c.Resource.Type = configs.BrokerResource
		c.Resource.Name = g.brokerName()
	} else {
		c.Resource.Type = configs.TopicResource
		c.Resource.Name = g.topicName()
	}
	// Only resources an image can hold have records (the image refuses a
	// BROKER resource whose name is not a Java int).
	replayable := !broker || strings.Contains(" 1 2 -1 01 +5 ", " "+c.Resource.Name+" ") || c.Resource.Name == ""
	if !c.Created && replayable {
		for range g.r.IntN(7) {
			c.Existing = append(c.Existing, g.existing(c.Resource.Type, c.Resource.Name))
		}
	}
	for range 1 + g.r.IntN(6) {
		c.Ops = append(c.Ops, g.op(c, broker))
	}
	return c
}

func (g *configGen) existing(typ int8, name string) jsonRecord {
	r := jsonRecord{Type: typ, Name: name}
	if typ == configs.BrokerResource {
		r.Key = g.pick(brokerKeys...)
		v := g.pick("2", "/d1,/d2", "/d1")
		r.Value = &v
		return r
	}
	k := genTopicKeys[g.r.IntN(len(genTopicKeys))]
	if g.chance(0.1) {
		k, _ = configs.TopicKey("remote.storage.enable")
		v := "true"
		r.Key, r.Value = k.Name, &v
		return r
	}
	v := g.validValue(k)
	r.Key, r.Value = k.Name, &v
	return r
}

func (g *configGen) op(c alterCase, broker bool) jsonOp {
	var o jsonOp
	if broker {
		o.Key = g.pick(brokerKeys...)
		v := g.pick("1", "2", "/d1", "/d1,/d3", " /d1 , /d2 ", "", "x", "PLAINTEXT://:9092")
		o.Value = &v
	} else {
		k := genTopicKeys[g.r.IntN(len(genTopicKeys))]
		o.Key = k.Name
		var v string
		switch {
		case g.chance(0.08):
			o.Key = g.pick("foo.bar", "retention.ms.x", "", "Retention.ms", "log.retention.ms")
			v = "1"
		case g.chance(0.5):
			v = g.validValue(k)
		default:
			v = g.value(k)
		}
		if g.chance(0.005) {
			v = strings.Repeat("1", 32768)
		}
		o.Value = &v
	}
	if c.Created {
		return o // SET
	}
	switch x := g.r.IntN(20); {
	case x < 3:
		o.Op = 1 // DELETE
	case x < 5:
		o.Op = 2 // APPEND
		if !broker && g.chance(0.5) {
			o.Key = g.pick("cleanup.policy", "leader.replication.throttled.replicas")
		}
	case x < 6:
		o.Op = 3 // SUBTRACT
		if !broker && g.chance(0.5) {
			o.Key = "cleanup.policy"
		}
	}
	if c.Legacy && g.chance(0.1) {
		o.Value = nil
	}
	return o
}

// layer is a set of configuration values for the effective-config test:
// server synonyms (with unit conversions) for a broker layer, topic keys for
// the topic layer.
func (g *configGen) layer(server bool) map[string]string {
	m := map[string]string{}
	for range g.r.IntN(6) {
		k := genTopicKeys[g.r.IntN(len(genTopicKeys))]
		if !server {
			m[k.Name] = g.value(k)
			continue
		}
		if len(k.Synonyms) == 0 {
			continue
		}
		s := k.Synonyms[g.r.IntN(len(k.Synonyms))]
		m[s.Name] = g.pick("1", " 2 ", "x", "", "-3", "2147483647", "1.5")
	}
	return m
}
