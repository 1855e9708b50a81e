// Package configs is the active controller's handling of dynamic
// configuration as Kafka 4.4.0 does it: the topic configuration schema
// (LogConfig's keys, types, defaults, validators and server synonyms), the
// validation IncrementalAlterConfigs, AlterConfigs and CreateTopics apply to
// TOPIC and BROKER resources, the ConfigRecords a request turns into, and
// the effective topic configuration (topic record, node record, cluster
// record, static properties, default) with the CreateTopics response's
// Configs.
//
// Errors are Kafka error codes with Kafka's own messages, so the caller can
// put them in per-resource responses unchanged. The package is
// deterministic: no I/O, no clock, no goroutines; where Kafka's answer
// depends on a Java HashMap's iteration order (which key of several bad ones
// is reported), the package reproduces that order.
//
// See docs/design/controller-configs.md.
package configs
