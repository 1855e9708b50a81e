package configs

import (
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Kafka's ConfigResource.Type ids for the resources the controller handles.
const (
	TopicResource  int8 = 2
	BrokerResource int8 = 4
)

// resourceTypeName is ConfigResource.Type's enum name, as Kafka prints it.
func resourceTypeName(t int8) string {
	switch t {
	case TopicResource:
		return "TOPIC"
	case BrokerResource:
		return "BROKER"
	case 8:
		return "BROKER_LOGGER"
	case 16:
		return "CLIENT_METRICS"
	case 32:
		return "GROUP"
	}
	return "UNKNOWN"
}

// ValidateTopicName is Topic.validate.
func ValidateTopicName(name string) *Error {
	reason := ""
	switch {
	case name == "":
		reason = "the empty string is not allowed"
	case name == ".":
		reason = "'.' is not allowed"
	case name == "..":
		reason = "'..' is not allowed"
	case utf16Len(name) > 249:
		reason = "the length of '" + name + "' is longer than the max allowed length 249"
	default:
		for i := 0; i < len(name); i++ {
			c := name[i]
			if !(isDec(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '_' || c == '-') {
				reason = "'" + name + "' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
				break
			}
		}
	}
	if reason == "" {
		return nil
	}
	return &Error{kerr.InvalidTopicException, "Topic name is invalid: " + reason}
}

// validateResourceName is ControllerConfigurationValidator.validate's name
// check: TOPIC resources name a valid topic (the default "" resource is not
// allowed), BROKER resources are "" (the cluster default) or a broker id.
func validateResourceName(resType int8, name string) *Error {
	switch resType {
	case TopicResource:
		if name == "" {
			return invalidRequest("Default topic resources are not allowed.")
		}
		return ValidateTopicName(name)
	case BrokerResource:
		if name == "" {
			return nil
		}
		id, ok := javaParseInt(name, 32)
		if !ok {
			return invalidRequest("Unable to parse broker name as a base 10 number.")
		}
		if id < 0 {
			return invalidRequest("Invalid negative broker ID.")
		}
		return nil
	}
	return invalidRequest("Unknown resource type " + resourceTypeName(resType))
}

// ServerLogConfig is the node's static log settings under topic key names
// (KafkaConfig.extractLogConfigMap): the values LogConfig.validate falls
// back on for keys a topic does not set. A key it lacks takes the topic
// default, which for every key equals the server default.
type ServerLogConfig map[string]string

// ServerLogConfigFromStatic maps static server properties onto topic keys
// through the synonyms, the first synonym set winning, units converted,
// as KafkaConfig does. The properties are assumed valid (Kafka refuses to
// start otherwise).
func ServerLogConfigFromStatic(static map[string]string) ServerLogConfig {
	out := ServerLogConfig{}
	for i := range topicKeys {
		k := &topicKeys[i]
		for _, s := range k.Synonyms {
			if v, ok := static[s.Name]; ok {
				out[k.Name] = convert(v, s.Factor)
				break
			}
		}
	}
	// KafkaConfig.logRetentionTimeMillis turns any negative value into -1.
	if v, ok := out["retention.ms"]; ok {
		if n, ok := javaParseInt(javaTrim(v), 64); ok && n < 0 {
			out["retention.ms"] = "-1"
		}
	}
	return out
}

// convert is ConfigSynonym's unit converter: an int (trimmed; blank or bad
// is 0) times the factor.
func convert(v string, factor int64) string {
	if factor == 1 {
		return v
	}
	n, ok := javaParseInt(javaTrim(v), 32)
	if !ok {
		n = 0
	}
	return strconv.FormatInt(n*factor, 10)
}

// validateTopic is LogConfig.validate(existing, all, serverLogConfig,
// remoteStorageSystemEnabled=false) as the controller calls it: every key
// known, every value parsed and in range over the server values plus the
// topic's, then the cross-key rules.
//
// Kafka reports the first unknown key in the iteration order of the HashMap
// it copied all into; order is the order keys went into all (existing keys
// first), from which that is computed.
func validateTopic(existing, all map[string]string, order []string, server ServerLogConfig) *Error {
	allOrder := javaHashOrder(order, putAllCapacity(len(existing), len(all)))
	for _, name := range javaHashOrder(allOrder, hashMapCapacity(len(all))) {
		if _, ok := topicKeyIndex[name]; !ok {
			return invalidConfig("Unknown topic config name: " + name)
		}
	}
	parsed := make(map[string]value, len(topicKeys))
	for i := range topicKeys {
		k := &topicKeys[i]
		raw, ok := all[k.Name]
		if !ok {
			raw, ok = server[k.Name]
		}
		var v value
		if ok {
			var err *Error
			if v, err = parseValue(k, raw); err != nil {
				return err
			}
		} else {
			v = defaultValue(k)
		}
		parsed[k.Name] = v
	}
	return crossKeyRules(existing, parsed)
}

const remoteDisabledMessage = "It is invalid to disable remote storage without deleting remote data. " +
	"If you want to keep the remote data and turn to read only, please set `remote.storage.enable=true,remote.log.copy.disable=true`. " +
	"If you want to disable remote storage and delete all remote data, please set `remote.storage.enable=false,remote.log.delete.on.disable=true`."

// crossKeyRules is LogConfig.validateTopicLogConfigValues with tiered
// storage disabled on the cluster (kraftd has none).
func crossKeyRules(existing map[string]string, p map[string]value) *Error {
	minLag, maxLag := p["min.compaction.lag.ms"].i, p["max.compaction.lag.ms"].i
	if minLag > maxLag {
		return invalidConfig("conflict topic config setting min.compaction.lag.ms (" + strconv.FormatInt(minLag, 10) +
			") > max.compaction.lag.ms (" + strconv.FormatInt(maxLag, 10) + ")")
	}
	if p["remote.storage.enable"].b {
		return invalidConfig("Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.")
	}
	was := javaParseBoolean(existing["remote.storage.enable"])
	if was && !p["remote.log.delete.on.disable"].b {
		return invalidConfig(remoteDisabledMessage)
	}
	return nil
}

// CheckExists is the controller's resource existence check
// (ConfigResourceExistenceChecker), which Kafka runs after validation
// passes and skips for a topic being created: a TOPIC must exist; a BROKER
// other than "" must name a registered broker or a controller.
func CheckExists(resType int8, name string, topicExists func(string) bool, nodeKnown func(int32) bool) *Error {
	switch resType {
	case TopicResource:
		if !topicExists(name) {
			return &Error{kerr.UnknownTopicOrPartition, "The topic '" + name + "' does not exist."}
		}
	case BrokerResource:
		if name == "" {
			return nil
		}
		id, ok := javaParseInt(name, 32)
		if !ok {
			return invalidRequest("Invalid broker name " + name)
		}
		if !nodeKnown(int32(id)) {
			return &Error{kerr.BrokerIDNotRegistered, "No node with id " + strconv.FormatInt(id, 10) + " found."}
		}
	}
	return nil
}
