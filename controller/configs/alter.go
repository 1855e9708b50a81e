package configs

import (
	"maps"
	"slices"
	"strings"

	"github.com/kraftd/kraftd/protocol/metadata"
)

// OpType is an IncrementalAlterConfigs operation (AlterConfigOp.OpType ids).
type OpType int8

const (
	OpSet      OpType = 0
	OpDelete   OpType = 1
	OpAppend   OpType = 2
	OpSubtract OpType = 3
)

func (o OpType) String() string {
	switch o {
	case OpSet:
		return "SET"
	case OpDelete:
		return "DELETE"
	case OpAppend:
		return "APPEND"
	case OpSubtract:
		return "SUBTRACT"
	}
	return "UNKNOWN"
}

// Op is one key of an IncrementalAlterConfigs resource (or, with OpSet, of
// an AlterConfigs or CreateTopics one), in request order.
type Op struct {
	Name  string
	Op    OpType
	Value *string
}

// Context is what validating one resource's change needs besides the
// request.
type Context struct {
	// Current is the resource's configuration now (the image's).
	Current map[string]string
	// Server is the node's static log settings (ServerLogConfigFromStatic).
	Server ServerLogConfig
	// ELR: eligible.leader.replicas.version >= 1.
	ELR bool
	// CordonedLogDirsUnsupported: metadata.version below 4.3-IV0.
	CordonedLogDirsUnsupported bool
	// Forwarded: the request came in an Envelope from a broker.
	Forwarded bool
}

// MaxValueSize is the longest configuration value (in UTF-16 units) the
// controller stores.
const MaxValueSize = 32767

// IncrementalAlter is ConfigurationControlManager.incrementalAlterConfigs
// for one resource: each key's new value from its operation and the current
// value, a ConfigRecord for every key whose value changes (for every key of
// a BROKER resource, changed or not: KAFKA-14136), then validation. On
// error it writes nothing. It does not check that the resource exists:
// Kafka does that after validation passes, unless the topic is being
// created. Follow the records with ClearElrRecords.
func IncrementalAlter(resType int8, name string, ops []Op, ctx Context) ([]metadata.ConfigRecord, *Error) {
	// Kafka collects the keys in a HashMap: a repeated key's last operation
	// wins, and the keys are processed in that map's order.
	byName := map[string]Op{}
	var order []string
	for _, op := range ops {
		if _, ok := byName[op.Name]; !ok {
			order = append(order, op.Name)
		}
		byName[op.Name] = op
	}
	var recs []metadata.ConfigRecord
	for _, key := range javaHashOrder(order, hashMapCapacity(len(order))) {
		op := byName[key]
		cur, has := ctx.Current[key]
		var next *string
		if has {
			next = &cur
		}
		switch op.Op {
		case OpSet:
			next = op.Value
		case OpDelete:
			next = nil
		case OpAppend, OpSubtract:
			def, ok := listKey(resType, key)
			if !ok {
				return nil, invalidConfig("Can't " + op.Op.String() + " to key " + key + " because its type is not LIST.")
			}
			if op.Value == nil {
				// Kafka fails with a NullPointerException here.
				return nil, invalidRequest("Null value not supported for " + op.Op.String() + " of key " + key + ".")
			}
			base := def
			if has {
				base = cur
			}
			s := applyListOp(base, op.Op, *op.Value)
			next = &s
		default:
			return nil, invalidRequest("Unknown config operation " + op.Op.String() + " for key " + key + ".")
		}
		if resType == BrokerResource || !sameValue(has, cur, next) {
			recs = append(recs, configRecord(resType, name, key, next))
		}
	}
	if err := validateAlter(resType, name, recs, nil, ctx); err != nil {
		return nil, err
	}
	return recs, nil
}

// applyListOp is APPEND (add the items not there yet, in order) or SUBTRACT
// (remove the first occurrence of each item, as List.remove does) on a
// value split on bare commas with empty items dropped (getParts); the
// argument is split as String.split(",") does, without trimming.
func applyListOp(base string, op OpType, arg string) string {
	var parts []string
	for _, p := range strings.Split(base, ",") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	// Sets and counts, not Kafka's list scans: a request may carry tens of
	// thousands of items, and the result is the same.
	if op == OpAppend {
		present := make(map[string]bool, len(parts))
		for _, p := range parts {
			present[p] = true
		}
		for _, item := range javaSplitRegexComma(arg) {
			if !present[item] {
				present[item] = true
				parts = append(parts, item)
			}
		}
		return strings.Join(parts, ",")
	}
	// Removing the first occurrence of each item in turn removes, for each
	// value, its first k occurrences, k being its count in arg.
	remove := map[string]int{}
	for _, item := range javaSplitRegexComma(arg) {
		remove[item]++
	}
	kept := parts[:0]
	for _, p := range parts {
		if remove[p] > 0 {
			remove[p]--
			continue
		}
		kept = append(kept, p)
	}
	return strings.Join(kept, ",")
}

// javaSplitRegexComma is String.split(","): trailing empty items dropped,
// and "" gives one empty item.
func javaSplitRegexComma(s string) []string {
	parts := strings.Split(s, ",")
	for len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 1 && parts[0] == "" && s != "" {
		return nil
	}
	return parts
}

// listKey is KafkaConfigSchema.isSplittable with getDefault: whether key is
// a LIST of the resource type, and its default.
func listKey(resType int8, key string) (string, bool) {
	switch resType {
	case TopicResource:
		k, ok := TopicKey(key)
		if !ok || k.Type != List {
			return "", false
		}
		return k.Default, true
	case BrokerResource:
		return brokerListKey(key)
	}
	return "", false
}

func sameValue(has bool, cur string, next *string) bool {
	if next == nil {
		return !has
	}
	return has && cur == *next
}

func configRecord(resType int8, name, key string, v *string) metadata.ConfigRecord {
	return metadata.ConfigRecord{ResourceType: resType, ResourceName: name, Name: key, Value: v}
}

// LegacyAlter is legacyAlterConfigs for one resource: configs replace the
// resource's whole configuration, so current keys missing from it are
// deleted; a nil value deletes too. Records: the changed keys (every key for
// BROKER), then the deletions.
func LegacyAlter(resType int8, name string, configs []Op, ctx Context) ([]metadata.ConfigRecord, *Error) {
	byName := map[string]*string{}
	var order []string
	for _, c := range configs {
		if _, ok := byName[c.Name]; !ok {
			order = append(order, c.Name)
		}
		byName[c.Name] = c.Value
	}
	var explicit, implicit []metadata.ConfigRecord
	for _, key := range javaHashOrder(order, hashMapCapacity(len(order))) {
		cur, has := ctx.Current[key]
		if v := byName[key]; resType == BrokerResource || !sameValue(has, cur, v) {
			explicit = append(explicit, configRecord(resType, name, key, v))
		}
	}
	for _, key := range timelineOrder(slices.Sorted(maps.Keys(ctx.Current))) {
		if _, ok := byName[key]; !ok {
			implicit = append(implicit, configRecord(resType, name, key, nil))
		}
	}
	if err := validateAlter(resType, name, explicit, implicit, ctx); err != nil {
		return nil, err
	}
	return append(explicit, implicit...), nil
}

// CreateTopicRecords is how CreateTopics handles a new topic's configs:
// null values are refused (named in request order), the rest are SETs
// validated as for a topic being created.
func CreateTopicRecords(topic string, configs []Op, ctx Context) ([]metadata.ConfigRecord, *Error) {
	var nulls []string
	ops := make([]Op, 0, len(configs))
	for _, c := range configs {
		if c.Value == nil {
			nulls = append(nulls, c.Name)
			continue
		}
		ops = append(ops, Op{c.Name, OpSet, c.Value})
	}
	if len(nulls) > 0 {
		return nil, invalidConfig("Null value not supported for topic configs: " + strings.Join(nulls, ","))
	}
	if len(ops) == 0 {
		return nil, nil
	}
	ctx.Current = nil
	return IncrementalAlter(TopicResource, topic, ops, ctx)
}

// validateAlter is validateAlterConfig: per record (in order) the ELR and
// cordoned.log.dirs rules and the value size, then the resource validator
// over the configuration as it would become.
func validateAlter(resType int8, name string, explicit, implicit []metadata.ConfigRecord, ctx Context) *Error {
	all := maps.Clone(ctx.Current)
	if all == nil {
		all = map[string]string{}
	}
	order := timelineOrder(slices.Sorted(maps.Keys(all)))
	for i, r := range slices.Concat(explicit, implicit) {
		if err := recordRules(r, ctx); err != nil {
			return err
		}
		if r.Value == nil || i >= len(explicit) {
			delete(all, r.Name)
			continue
		}
		if utf16Len(*r.Value) > MaxValueSize {
			return invalidConfig("The configuration value cannot be added because it exceeds the maximum value size of 32767 bytes.")
		}
		if _, ok := all[r.Name]; !ok {
			order = append(order, r.Name)
		}
		all[r.Name] = *r.Value
	}
	if err := validateResourceName(resType, name); err != nil {
		return err
	}
	if resType != TopicResource {
		return nil
	}
	order = slices.DeleteFunc(order, func(k string) bool { _, ok := all[k]; return !ok })
	return validateTopic(ctx.Current, all, order, ctx.Server)
}

const cordonedKey = "cordoned.log.dirs"

// recordRules are the per-record refusals of validateAlterConfig.
func recordRules(r metadata.ConfigRecord, ctx Context) *Error {
	broker := r.ResourceType == BrokerResource
	if broker && ctx.ELR && r.Name == "min.insync.replicas" {
		if r.ResourceName != "" {
			return invalidConfig("Broker-level min.insync.replicas cannot be altered while ELR is enabled.")
		}
		if r.Value == nil {
			return invalidConfig("Cluster-level min.insync.replicas cannot be removed while ELR is enabled.")
		}
	}
	if broker && r.Name == cordonedKey {
		if ctx.CordonedLogDirsUnsupported {
			return invalidConfig("The cordoned.log.dirs configuration value cannot be set because it requires metadata.version >= 4.3-IV0")
		}
		if !ctx.Forwarded && r.Value != nil && javaTrim(*r.Value) != "" {
			var cur []string
			if v, ok := ctx.Current[cordonedKey]; ok {
				cur = splitCommaWithWhitespace(javaTrim(v))
			}
			for _, d := range splitCommaWithWhitespace(javaTrim(*r.Value)) {
				if !slices.Contains(cur, d) {
					return invalidConfig("When updating cordoned.log.dirs via controllers,  the new value must be a subset of the current configuration value.")
				}
			}
		}
	}
	return nil
}

// ClearElrRecords are the ClearElrRecords that follow min.insync.replicas
// ConfigRecords while ELR is on: the topic's, or "" (all topics) for a
// BROKER resource.
func ClearElrRecords(recs []metadata.ConfigRecord, elr bool) []metadata.ClearElrRecord {
	if !elr {
		return nil
	}
	var out []metadata.ClearElrRecord
	for _, r := range recs {
		if r.Name != "min.insync.replicas" {
			continue
		}
		var c metadata.ClearElrRecord
		if r.ResourceType == TopicResource {
			c.TopicName = r.ResourceName
		}
		out = append(out, c)
	}
	return out
}
