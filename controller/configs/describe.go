package configs

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/internal/jvmorder"
	"github.com/kraftd/kraftd/image"
)

// Resource types DescribeConfigs knows besides TOPIC, BROKER and
// BROKER_LOGGER.
const (
	ClientMetricsResource int8 = 16
	GroupResource         int8 = 32
)

// DescribeSource is what a controller describes configurations from, as
// Kafka 4.4.0's controller does (ConfigHelper over its KafkaConfig and its
// metadata cache): the committed image and its own node id and static
// properties.
type DescribeSource struct {
	Image  *image.Image
	NodeID int32
	// Static are the node's properties as read (Kafka's originals).
	Static map[string]string
}

// Describe answers DescribeConfigs as Kafka 4.4.0's ControllerApis does,
// on every controller, active or not (ConfigHelper.describeConfigs). A
// resource of an unknown type fails the whole request: the error is
// returned and the caller answers every resource with its code, as Kafka's
// DescribeConfigsRequest.getErrorResponse does.
func Describe(src DescribeSource, req *kmsg.DescribeConfigsRequest) (*kmsg.DescribeConfigsResponse, *Error) {
	// Kafka authorizes each resource by its type first, and an unknown type
	// throws there, before any is described.
	for _, r := range req.Resources {
		if resourceTypeName(int8(r.ResourceType)) == "UNKNOWN" {
			return nil, invalidRequest(fmt.Sprintf("Unexpected resource type UNKNOWN for resource %s", r.ResourceName))
		}
	}
	// The static properties are the originals of Kafka's KafkaConfig, which
	// hold node.id and broker.id both.
	src.Static = maps.Clone(src.Static)
	if src.Static == nil {
		src.Static = map[string]string{}
	}
	populateSynonyms(src.Static)
	d := describer{src: src, req: req}
	d.cluster = d.dynamic(BrokerResource, "", false)
	d.node = d.dynamic(BrokerResource, strconv.Itoa(int(src.NodeID)), true)
	d.merged = d.currentOriginals()
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	size := 0
	for _, r := range req.Resources {
		out := kmsg.NewDescribeConfigsResponseResource()
		out.ResourceType, out.ResourceName = r.ResourceType, r.ResourceName
		// Kafka's result carries its schema's default "" unless an
		// exception set the message.
		out.ErrorMessage = strp("")
		d.keys = keyFilter(r)
		configs, err := d.resource(r)
		if err == nil {
			if size += answerBytes(configs); size > maxAnswerBytes {
				err = invalidRequest(tooLarge)
			}
		}
		if err != nil {
			out.ErrorCode, out.ErrorMessage = err.Err.Code, strp(err.Message)
			out.Configs = []kmsg.DescribeConfigsResponseResourceConfig{}
		} else {
			out.Configs = configs
		}
		resp.Resources = append(resp.Resources, out)
	}
	return resp, nil
}

type describer struct {
	src DescribeSource
	req *kmsg.DescribeConfigsRequest
	// The dynamic configurations the node applies (DynamicBrokerConfig's
	// currentDynamicDefaultConfigs and currentDynamicBrokerConfigs), and
	// its current originals: static, then cluster, then its own.
	cluster, node, merged map[string]string
	// keys is the resource's key filter being described (nil: all).
	keys map[string]bool
}

// dynamic is DynamicBrokerConfig.fromPersistentProps of a BROKER record:
// keys Kafka knows as not dynamic dropped (passwords are stored in clear in
// KRaft, nothing to decode). Kafka also drops values that do not validate
// and, from the cluster record, per-broker keys; kraftd keeps those.
func (d *describer) dynamic(resType int8, name string, _ bool) map[string]string {
	out := map[string]string{}
	for k, v := range d.src.Image.Configs(resType, name) {
		if bk, ok := brokerKey(k); ok && bk.NonDynamic {
			continue
		}
		out[k] = v
	}
	return out
}

// currentOriginals are the originals of the node's current KafkaConfig:
// the static properties overlaid by the cluster and then its own dynamic
// configuration, with node.id and broker.id each standing for the other
// (AbstractKafkaConfig.populateSynonyms).
func (d *describer) currentOriginals() map[string]string {
	m := maps.Clone(d.src.Static)
	maps.Copy(m, d.cluster)
	maps.Copy(m, d.node)
	populateSynonyms(m)
	return m
}

func populateSynonyms(m map[string]string) {
	id, hasNode := m["node.id"]
	bid, hasBroker := m["broker.id"]
	switch {
	case hasNode && !hasBroker:
		m["broker.id"] = id
	case hasBroker && !hasNode:
		m["node.id"] = bid
	}
}

// wanted is the resource's key filter (none or empty: every key).
func (d *describer) wanted(name string) bool {
	return d.keys == nil || d.keys[name]
}

// keyFilter is a resource's ConfigNames as a set: a request may name many.
func keyFilter(r kmsg.DescribeConfigsRequestResource) map[string]bool {
	if len(r.ConfigNames) == 0 {
		return nil
	}
	m := make(map[string]bool, len(r.ConfigNames))
	for _, n := range r.ConfigNames {
		m[n] = true
	}
	return m
}

// maxAnswerBytes bounds the configurations one answer carries (about 40
// bytes a plain entry, 1 KiB with synonyms and documentation): a request
// naming a resource many times would otherwise have the node build an
// answer of any size. Resources past it are refused.
const maxAnswerBytes = 64 << 20

const tooLarge = "The DescribeConfigs response would be too large; describe fewer resources at a time."

// answerBytes estimates the encoded size of configs.
func answerBytes(configs []kmsg.DescribeConfigsResponseResourceConfig) int {
	n := 0
	for _, c := range configs {
		n += 16 + len(c.Name) + len(deref(c.Value)) + len(deref(c.Documentation))
		for _, s := range c.ConfigSynonyms {
			n += 8 + len(s.Name) + len(deref(s.Value))
		}
	}
	return n
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (d *describer) resource(r kmsg.DescribeConfigsRequestResource) ([]kmsg.DescribeConfigsResponseResourceConfig, *Error) {
	switch int8(r.ResourceType) {
	case TopicResource:
		return d.topic(r)
	case BrokerResource:
		if r.ResourceName == "" {
			return d.brokerEntries(r, sortedHashKeys(d.cluster), d.cluster, false), nil
		}
		id, err := brokerID(r.ResourceName)
		if err != nil {
			return nil, err
		}
		if id != d.src.NodeID {
			return nil, invalidRequest(fmt.Sprintf("Unexpected broker id, expected %d or empty string, but received %s", d.src.NodeID, r.ResourceName))
		}
		return d.ownBroker(r), nil
	case BrokerLoggerResource:
		if r.ResourceName == "" {
			return nil, invalidRequest("Broker id must not be empty")
		}
		id, err := brokerID(r.ResourceName)
		if err != nil {
			return nil, err
		}
		if id != d.src.NodeID {
			return nil, invalidRequest(fmt.Sprintf("Unexpected broker id, expected %d but received %s", d.src.NodeID, r.ResourceName))
		}
		// Kafka lists its Log4j loggers; kraftd has none to list.
		return []kmsg.DescribeConfigsResponseResourceConfig{}, nil
	case ClientMetricsResource:
		if r.ResourceName == "" {
			return nil, invalidRequest("Client metrics subscription name must not be empty")
		}
		return d.stored(r, ClientMetricsResource), nil
	default: // GroupResource
		if r.ResourceName == "" {
			return nil, invalidRequest("Group name must not be empty")
		}
		return d.stored(r, GroupResource), nil
	}
}

// brokerID is Scala's String.toInt of a BROKER name (Integer.parseInt).
func brokerID(name string) (int32, *Error) {
	n, ok := javaParseInt(name, 32)
	if !ok {
		return 0, invalidRequest("Broker id must be an integer, but it is: " + name)
	}
	return int32(n), nil
}

// stored lists a CLIENT_METRICS or GROUP resource's own values as stored.
// Kafka adds every key of those schemas with its default; kraftd does not
// carry those schemas (it refuses to alter these resources).
func (d *describer) stored(r kmsg.DescribeConfigsRequestResource, resType int8) []kmsg.DescribeConfigsResponseResourceConfig {
	src := int8(8) // CLIENT_METRICS_CONFIG
	if resType == GroupResource {
		src = 9 // GROUP_CONFIG
	}
	cur := Current(d.src.Image, resType, r.ResourceName)
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	for _, k := range sortedHashKeys(cur) {
		if !d.wanted(k) {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		v := cur[k]
		c.Name, c.Value, c.Source = k, &v, kmsg.ConfigSource(src)
		c.ConfigSynonyms = []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym{}
		out = append(out, c)
	}
	return out
}

// sortedHashKeys are m's keys in the iteration order of a java.util.HashMap
// filled in name order.
func sortedHashKeys(m map[string]string) []string {
	return hashOrder(slices.Sorted(maps.Keys(m)))
}

// hashOrder is the iteration order of a java.util.HashMap the keys were
// put into in that order.
func hashOrder(keys []string) []string {
	h := jvmorder.NewHashMap[string]()
	for _, k := range keys {
		h.Put(k, jvmorder.StringHash(k))
	}
	return h.Keys()
}

// typedString is ConfigDef.convertToString of the value parsed as typ;
// a value that does not parse is given as stored.
func typedString(name string, typ Type, raw *string) *string {
	if raw == nil {
		return nil
	}
	v, err := parseValue(&Key{Name: name, Type: typ}, *raw)
	if err != nil {
		return raw
	}
	var s string
	switch typ {
	case List:
		s = strings.Join(v.list, ",")
	case Password:
		s = v.s
	default:
		s = v.String()
	}
	return &s
}

func strp(s string) *string { return &s }
