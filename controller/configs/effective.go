package configs

import "github.com/twmb/franz-go/pkg/kmsg"

// Source is where an effective value comes from (DescribeConfigs'
// ConfigSource ids, which CreateTopics' Configs use too).
type Source int8

const (
	SourceTopic                Source = 1 // TOPIC_CONFIG
	SourceDynamicBroker        Source = 2 // DYNAMIC_BROKER_CONFIG
	SourceDynamicDefaultBroker Source = 3 // DYNAMIC_DEFAULT_BROKER_CONFIG
	SourceStaticBroker         Source = 4 // STATIC_BROKER_CONFIG
	SourceDefault              Source = 5 // DEFAULT_CONFIG
)

// Layers are the configurations a topic's effective value is drawn from,
// highest precedence last: static server properties, the cluster BROKER
// "" resource, the BROKER "<id>" resource of the node doing the resolving
// (for the controller: the active controller's own id), the topic's.
type Layers struct {
	Static  map[string]string
	Cluster map[string]string
	Node    map[string]string
	Topic   map[string]string
}

// Entry is one effective topic configuration value.
type Entry struct {
	Name      string
	Value     *string // nil only for a key with no default and no value
	Source    Source
	Sensitive bool // PASSWORD keys; no topic key is one
	ReadOnly  bool // always false for topic keys
}

// Effective is KafkaConfigSchema.resolveEffectiveTopicConfig: the topic's
// own value, else the first synonym set in the node's record, else in the
// cluster record, else in the static properties (units converted), else
// the default. Values are returned as stored, not normalised.
func Effective(key string, l Layers) (Entry, bool) {
	i, ok := topicKeyIndex[key]
	if !ok {
		return Entry{}, false
	}
	return effective(&topicKeys[i], l), true
}

func effective(k *Key, l Layers) Entry {
	e := Entry{Name: k.Name, Sensitive: k.Type == Password}
	if v, ok := l.Topic[k.Name]; ok {
		e.Value, e.Source = &v, SourceTopic
		return e
	}
	for _, layer := range []struct {
		m   map[string]string
		src Source
	}{{l.Node, SourceDynamicBroker}, {l.Cluster, SourceDynamicDefaultBroker}, {l.Static, SourceStaticBroker}} {
		for _, s := range k.Synonyms {
			if v, ok := layer.m[s.Name]; ok {
				v = convert(v, s.Factor)
				e.Value, e.Source = &v, layer.src
				return e
			}
		}
	}
	e.Source = SourceDefault
	if k.HasDefault {
		d := k.Default
		e.Value = &d
	}
	return e
}

// EffectiveAll is resolveEffectiveTopicConfigs sorted by name: every topic
// key except internal ones the topic does not set.
func EffectiveAll(l Layers) []Entry {
	out := make([]Entry, 0, len(topicKeys))
	for _, i := range sortedKeyIndexes {
		k := &topicKeys[i]
		if k.Internal {
			if _, ok := l.Topic[k.Name]; !ok {
				continue
			}
		}
		out = append(out, effective(k, l))
	}
	return out
}

var sortedKeyIndexes = func() []int {
	idx := make([]int, len(topicKeys))
	for i := range idx {
		idx[i] = i
	}
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && topicKeys[idx[j-1]].Name > topicKeys[idx[j]].Name; j-- {
			idx[j-1], idx[j] = idx[j], idx[j-1]
		}
	}
	return idx
}()

// CreateTopicsConfigs is a created topic's Configs in the CreateTopics
// response, where Layers.Topic holds the configs of the request.
func CreateTopicsConfigs(l Layers) []kmsg.CreateTopicsResponseTopicConfig {
	entries := EffectiveAll(l)
	out := make([]kmsg.CreateTopicsResponseTopicConfig, len(entries))
	for i, e := range entries {
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		c.Name = e.Name
		if !e.Sensitive {
			c.Value = e.Value
		}
		c.ReadOnly = e.ReadOnly
		c.Source = int8(e.Source)
		c.IsSensitive = e.Sensitive
		out[i] = c
	}
	return out
}

// MinInsyncReplicas is the topic's effective min.insync.replicas as the
// controller reads it (Integer.parseInt of the stored text, untrimmed);
// ok is false where that throws in Kafka.
func MinInsyncReplicas(l Layers) (n int32, ok bool) {
	e, _ := Effective("min.insync.replicas", l)
	if e.Value == nil {
		return 0, false
	}
	v, ok := javaParseInt(*e.Value, 32)
	return int32(v), ok
}

// EffectiveMinIsr is the min ISR the controller applies to a topic's
// partitions (getTopicEffectiveMinIsr): min.insync.replicas capped at the
// replication factor.
func EffectiveMinIsr(l Layers, replicationFactor int) (int32, bool) {
	n, ok := MinInsyncReplicas(l)
	if ok && int(n) > replicationFactor {
		n = int32(replicationFactor)
	}
	return n, ok
}

// UncleanLeaderElection is the topic's effective
// unclean.leader.election.enable as the controller reads it
// (Boolean.parseBoolean: "true" in any case, untrimmed).
func UncleanLeaderElection(l Layers) bool {
	e, _ := Effective("unclean.leader.election.enable", l)
	return e.Value != nil && javaParseBoolean(*e.Value)
}

// StaticMinInsyncReplicas is the node's static min.insync.replicas (or the
// default 1), parsed as ConfigDef does (trimmed): the value of the
// cluster-level record written when ELR is turned on.
func StaticMinInsyncReplicas(static map[string]string) (int32, bool) {
	v, ok := static["min.insync.replicas"]
	if !ok {
		return 1, true
	}
	n, ok := javaParseInt(javaTrim(v), 32)
	return int32(n), ok
}
