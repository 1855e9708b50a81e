package configs

import (
	_ "embed"
	"encoding/json"
	"regexp"
)

// describekeys.json is what Kafka 4.4.0's DescribeConfigs answers draw on
// besides the topic schema: KafkaConfig's keys (type, default as
// ConfigDef.convertToString prints it, dynamic or not, internal or not,
// synonyms, documentation) and LogConfig's documentation. It is the output
// of test/interop/testdata/KafkaConfigDocs.java, which
// TestDescribeKeysMatchKafka compares with the jar.
//
//go:embed describekeys.json
var describeKeysJSON []byte

// BrokerKey is one key of KafkaConfig's ConfigDef.
type BrokerKey struct {
	Name     string  `json:"name"`
	Type     string  `json:"type"`
	Default  *string `json:"default"` // nil: no default, or a null one
	Dynamic  bool    `json:"dynamic"` // in DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS
	Internal bool    `json:"internal"`
	// NonDynamic: in DynamicConfig.Broker.nonDynamicProps, so dropped from
	// the dynamic configurations a node applies.
	NonDynamic bool     `json:"nonDynamic"`
	Synonyms   []string `json:"synonyms"` // brokerConfigSynonyms when not just the name
	Doc        string   `json:"doc"`
}

type describeKeys struct {
	// Broker is in definition order, which decides the order of keys that
	// share a bucket of Kafka's HashMap.
	Broker    []BrokerKey       `json:"broker"`
	TopicDocs map[string]string `json:"topicDocs"`
	// DynamicOnlyTypes are DynamicConfig.Broker's keys KafkaConfig lacks.
	DynamicOnlyTypes map[string]string `json:"dynamicOnlyTypes"`
}

var (
	descKeys     describeKeys
	brokerKeyIdx = map[string]int{}
)

func init() {
	if err := json.Unmarshal(describeKeysJSON, &descKeys); err != nil {
		panic("configs: describekeys.json: " + err.Error())
	}
	for i, k := range descKeys.Broker {
		brokerKeyIdx[k.Name] = i
	}
}

// DescribeKeysJSON is the embedded table, for the test that regenerates it.
func DescribeKeysJSON() []byte { return describeKeysJSON }

func brokerKey(name string) (*BrokerKey, bool) {
	i, ok := brokerKeyIdx[name]
	if !ok {
		return nil, false
	}
	return &descKeys.Broker[i], true
}

// listenerPrefixed matches listener.name.<listener>.<config>
// (DynamicBrokerConfig's ListenerConfigRegex).
var listenerPrefixed = regexp.MustCompile(`^listener\.name\.[^.]*\.(.*)$`)

// brokerSynonyms is DynamicBrokerConfig.brokerConfigSynonyms(name, true).
func brokerSynonyms(name string) []string {
	if k, ok := brokerKey(name); ok && len(k.Synonyms) > 0 {
		return k.Synonyms
	}
	if m := listenerPrefixed.FindStringSubmatch(name); m != nil {
		return []string{name, m[1]}
	}
	return []string{name}
}

// brokerConfigType is KafkaConfig.configType: the key's type, else that of
// DynamicConfig.Broker's key, else that of its first typed synonym (the
// config a listener prefix overrides); "" when unknown.
func brokerConfigType(name string) string {
	if k, ok := brokerKey(name); ok {
		return k.Type
	}
	if t, ok := descKeys.DynamicOnlyTypes[name]; ok {
		return t
	}
	for _, s := range brokerSynonyms(name) {
		if k, ok := brokerKey(s); ok {
			return k.Type
		}
	}
	return ""
}

// configTypeIDs are DescribeConfigsResponse.ConfigType's ids by ConfigDef
// type name; an unknown type is UNKNOWN (0).
var configTypeIDs = map[string]int8{"BOOLEAN": 1, "STRING": 2, "INT": 3, "SHORT": 4, "LONG": 5, "DOUBLE": 6, "LIST": 7, "CLASS": 8, "PASSWORD": 9}

var typeByName = map[string]Type{"BOOLEAN": Boolean, "STRING": String, "INT": Int, "SHORT": Short, "LONG": Long, "DOUBLE": Double, "LIST": List, "CLASS": Class, "PASSWORD": Password}
