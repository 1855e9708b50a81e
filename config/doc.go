// Package config is a node's server configuration: Kafka's properties file
// format, the keys kraftd reads, Kafka's defaults for them, and validation.
//
// ParseProperties and LoadProperties read java.util.Properties text (with
// package javaprops, which meta.properties is read with too); Load adds
// --override key=value arguments.
// env.go reads configuration from environment variables as the apache/kafka
// container image does (KAFKA_NODE_ID -> node.id) and Compose layers file,
// environment and overrides in the image's order. New
// validates the properties into a Config and reports every problem at once
// (an *Error listing them), so an operator fixes a file in one pass. Keys
// kraftd does not know produce warnings (Config.Warnings), not errors, so a
// Kafka server.properties runs unchanged.
//
// Each concern has its file: its keys, Kafka's defaults and a read function
// called from New: roles.go (node.id, process.roles), listeners.go,
// quorum.go (voters, raft timers), log.go (log dirs, segments, retention,
// snapshots), socket.go (request size, idle connections), security.go
// (listener.security.protocol.map and the ssl/sasl settings, resolved by
// package security into Config.ListenerSecurity and OutboundSecurity). keys.go lists the
// keys of every concern and the Kafka keys accepted without effect.
//
//	p, err := config.Load(path, overrides)
//	cfg, err := config.New(p, false)
//	for _, w := range cfg.Warnings { log(w) }
//
// The package reads no other kraftd package but javaprops, osched and
// security (which reads none of kraftd's but protocol).
package config
