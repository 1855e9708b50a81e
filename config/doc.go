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
// Each concern has its file: its keys, their defaults and a read function
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
// # Defaults
//
// Each default is written once, as an exported DefaultX constant of the
// package that owns the setting: raft for controller.quorum.* and kraftd's
// fetch pacing (raft.DefaultElectionTimeout, ...), metadatalog for the
// metadata log's segments and retention (metadatalog.DefaultSegmentBytes,
// ...), network and protocol for the socket server
// (network.DefaultIdleTimeout, protocol.DefaultMaxFrameSize, ...). config
// reads each key with that constant as its default, and keeps only the
// defaults of keys no other package reads (log.dirs, the snapshot triggers,
// kraftd's own switches); Kafka's values are checked once, in config's
// tests.
//
// A setting left zero in an options struct (metadatalog.Options,
// network.ServerConfig and PeerConfig, node.Options, storage.FormatOptions)
// means the owning package's default, or is refused where there is none; a
// setting whose zero is meaningful of itself takes a sentinel instead
// (network.NoConnections, NeverIdle). The one struct with meaningful zeros
// throughout, raft.Config (a linger, a backoff, pacing off), has no zero
// defaults: it is built from raft.DefaultConfig. Config holds every value
// resolved, so a zero reaches a package only from a key set to 0; for
// metadata.max.retention.bytes and .ms that means the default, where Kafka
// keeps nothing.
//
// The package reads kraftd's javaprops, osched and security, and the
// packages whose defaults it applies.
package config
