package configs

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type synonym = kmsg.DescribeConfigsResponseResourceConfigConfigSynonym

// topic is ConfigHelper's TOPIC case: every key of the topic's LogConfig
// (LogConfig.fromProps over the node's server log settings and the topic's
// record) in the order of the HashMap holding them, then the internal keys
// the topic sets.
func (d *describer) topic(r kmsg.DescribeConfigsRequestResource) ([]kmsg.DescribeConfigsResponseResourceConfig, *Error) {
	if err := ValidateTopicName(r.ResourceName); err != nil {
		return nil, err
	}
	if _, ok := d.src.Image.TopicByName(r.ResourceName); !ok {
		return nil, &Error{Err: kerr.UnknownTopicOrPartition}
	}
	props := Current(d.src.Image, TopicResource, r.ResourceName)
	server := ServerLogConfigFromStatic(d.merged)
	var names, internal []string
	for i := range topicKeys {
		k := &topicKeys[i]
		if !k.Internal {
			names = append(names, k.Name)
		} else if _, ok := props[k.Name]; ok {
			internal = append(internal, k.Name)
		}
	}
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	for _, name := range append(hashOrder(names), internal...) {
		if !d.wanted(name) {
			continue
		}
		out = append(out, d.topicEntry(&topicKeys[topicKeyIndex[name]], props, server))
	}
	return out, nil
}

// topicEntry is ConfigHelper.createTopicConfigEntry.
func (d *describer) topicEntry(k *Key, props map[string]string, server ServerLogConfig) kmsg.DescribeConfigsResponseResourceConfig {
	var raw *string
	own, set := props[k.Name]
	switch sv, fromServer := server[k.Name]; {
	case set:
		raw = &own
	case fromServer:
		raw = &sv
	case k.HasDefault:
		raw = strp(k.Default)
	}
	value := typedString(k.Name, k.Type, raw)
	var all []synonym
	if set {
		s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
		s.Name, s.Value, s.Source = k.Name, value, kmsg.ConfigSource(SourceTopic)
		all = append(all, s)
	}
	if len(k.Synonyms) > 0 {
		s := k.Synonyms[0].Name
		all = append(all, d.configSynonyms(s, brokerSynonyms(s), false)...)
	}
	c := kmsg.NewDescribeConfigsResponseResourceConfig()
	c.Name, c.Value = k.Name, value
	c.Source = kmsg.ConfigSource(sourceOf(all))
	c.ConfigType = kmsg.ConfigType(configTypeIDs[k.Type.String()])
	c.ConfigSynonyms = d.maybeSynonyms(all)
	if d.req.IncludeDocumentation {
		c.Documentation = strp(descKeys.TopicDocs[k.Name])
	}
	return c
}

// configSynonyms is ConfigHelper.configSynonyms: each synonym's value in
// the node's own dynamic record, the cluster one, its static properties
// and Kafka's defaults, in that order, starting at name.
func (d *describer) configSynonyms(name string, names []string, sensitive bool) []synonym {
	var out []synonym
	for _, layer := range []struct {
		m   map[string]string
		src Source
	}{{d.node, SourceDynamicBroker}, {d.cluster, SourceDynamicDefaultBroker}, {d.src.Static, SourceStaticBroker}} {
		for _, n := range names {
			if v, ok := layer.m[n]; ok {
				out = append(out, newSynonym(n, v, layer.src, sensitive))
			}
		}
	}
	for _, n := range names {
		if k, ok := brokerKey(n); ok && k.Default != nil {
			out = append(out, newSynonym(n, *k.Default, SourceDefault, sensitive))
		}
	}
	for len(out) > 0 && out[0].Name != name {
		out = out[1:]
	}
	return out
}

func newSynonym(name, value string, src Source, sensitive bool) synonym {
	s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
	s.Name, s.Source = name, kmsg.ConfigSource(src)
	if !sensitive {
		s.Value = &value
	}
	return s
}

func sourceOf(all []synonym) int8 {
	if len(all) == 0 {
		return int8(SourceDefault)
	}
	return int8(all[0].Source)
}

func (d *describer) maybeSynonyms(all []synonym) []synonym {
	if !d.req.IncludeSynonyms || all == nil {
		return []synonym{}
	}
	return all
}

// brokerEntries are ConfigHelper.createBrokerConfigEntry for each name of
// values (the cluster BROKER "" record when !perBroker).
func (d *describer) brokerEntries(r kmsg.DescribeConfigsRequestResource, names []string, values map[string]string, perBroker bool) []kmsg.DescribeConfigsResponseResourceConfig {
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	for _, name := range names {
		if !d.wanted(name) {
			continue
		}
		v := values[name]
		out = append(out, d.brokerEntry(name, &v, perBroker))
	}
	return out
}

// brokerEntry is ConfigHelper.createBrokerConfigEntry; value is what
// Kafka's map holds for the key (a stored string, or the typed value of the
// node's KafkaConfig as text).
func (d *describer) brokerEntry(name string, value *string, perBroker bool) kmsg.DescribeConfigsResponseResourceConfig {
	names := brokerSynonyms(name)
	typ := brokerConfigType(name)
	// KafkaConfig.maybeSensitive: an unknown type may hide a secret.
	sensitive := typ == "" || typ == "PASSWORD"
	all := d.configSynonyms(name, names, sensitive)
	if !perBroker {
		// The cluster resource shows only the cluster record's values.
		kept := all[:0:0]
		for _, s := range all {
			if s.Source == kmsg.ConfigSource(SourceDynamicDefaultBroker) {
				kept = append(kept, s)
			}
		}
		all = kept
	}
	// Read-only unless the key itself is dynamic (not its synonyms).
	k, known := brokerKey(name)
	readOnly := !known || !k.Dynamic
	c := kmsg.NewDescribeConfigsResponseResourceConfig()
	c.Name = name
	if !sensitive {
		c.Value = value
	}
	c.Source = kmsg.ConfigSource(sourceOf(all))
	c.IsSensitive, c.ReadOnly = sensitive, readOnly
	c.ConfigType = kmsg.ConfigType(configTypeIDs[typ])
	c.ConfigSynonyms = d.maybeSynonyms(all)
	if d.req.IncludeDocumentation && known {
		c.Documentation = strp(k.Doc)
	}
	return c
}

// ownBroker is the BROKER "<own id>" answer: the node's KafkaConfig, every
// non-internal key with its current value (ConfigDef.convertToString of the
// typed value, the default when unset), after the other originals it holds
// (internal and unknown keys) as given.
func (d *describer) ownBroker(r kmsg.DescribeConfigsRequestResource) []kmsg.DescribeConfigsResponseResourceConfig {
	var names, rest []string
	values := map[string]*string{}
	for i := range descKeys.Broker {
		k := &descKeys.Broker[i]
		if k.Internal {
			continue
		}
		names = append(names, k.Name)
		if v, ok := d.merged[k.Name]; ok {
			values[k.Name] = typedString(k.Name, typeByName[k.Type], &v)
		} else {
			values[k.Name] = k.Default
		}
	}
	for _, name := range sortedHashKeys(d.merged) {
		if k, ok := brokerKey(name); !ok || k.Internal {
			rest = append(rest, name)
			v := d.merged[name]
			values[name] = &v
		}
	}
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	// Kafka streams the extra originals first, then the values.
	for _, name := range append(rest, hashOrder(names)...) {
		if d.wanted(name) {
			out = append(out, d.brokerEntry(name, values[name], true))
		}
	}
	return out
}
