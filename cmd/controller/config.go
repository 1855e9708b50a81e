package main

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kraftd/kraftd/clusterid"
)

// Endpoint is a listener or voter address. Name is the upper-cased listener
// name (empty for voter and bootstrap addresses, which carry none).
type Endpoint struct {
	Name string
	Host string
	Port int
}

func (e Endpoint) HostPort() string { return net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) }

// VoterAddr is one entry of controller.quorum.voters.
type VoterAddr struct {
	ID   int32
	Host string
	Port int
}

// Config is a validated node configuration with Kafka's defaults applied.
// Durations are whole milliseconds as Kafka reads them.
type Config struct {
	NodeID                  int32
	ProcessRoles            []string
	Listeners               []Endpoint // in file order, names upper-cased
	AdvertisedListeners     []Endpoint // effective: advertised.listeners overriding listeners per name
	ControllerListenerNames []string   // upper-cased; the first is the raft listener
	Voters                  []VoterAddr
	BootstrapServers        []Endpoint

	LogDirs        []string
	MetadataLogDir string

	ElectionTimeout    time.Duration // controller.quorum.election.timeout.ms
	FetchTimeout       time.Duration // controller.quorum.fetch.timeout.ms
	ElectionBackoffMax time.Duration // controller.quorum.election.backoff.max.ms
	AppendLinger       time.Duration // controller.quorum.append.linger.ms
	RequestTimeout     time.Duration // controller.quorum.request.timeout.ms
	RetryBackoff       time.Duration // controller.quorum.retry.backoff.ms

	SegmentBytes                   int64 // metadata.log.segment.bytes
	SegmentMinBytes                int64 // metadata.log.segment.min.bytes (internal)
	SegmentMs                      int64 // metadata.log.segment.ms
	MaxRetentionBytes              int64 // metadata.max.retention.bytes; < 0 disables
	MaxRetentionMs                 int64 // metadata.max.retention.ms; < 0 disables
	MaxRecordBytesBetweenSnapshots int64 // metadata.log.max.record.bytes.between.snapshots
	MaxSnapshotIntervalMs          int64 // metadata.log.max.snapshot.interval.ms

	SocketRequestMaxBytes int32         // socket.request.max.bytes
	ConnectionsMaxIdle    time.Duration // connections.max.idle.ms

	// Warnings lists what was accepted but deserves a log line (unknown keys,
	// ignored settings), in a stable order.
	Warnings []string
}

// IsController reports whether process.roles holds "controller".
func (c *Config) IsController() bool {
	for _, r := range c.ProcessRoles {
		if r == "controller" {
			return true
		}
	}
	return false
}

// IsVoter reports whether this node is in controller.quorum.voters.
func (c *Config) IsVoter() bool {
	for _, v := range c.Voters {
		if v.ID == c.NodeID {
			return true
		}
	}
	return false
}

// RaftListener is the first controller listener name.
func (c *Config) RaftListener() string { return c.ControllerListenerNames[0] }

// ControllerListeners returns this node's bind addresses of the controller
// listeners, in controller.listener.names order.
func (c *Config) ControllerListeners() []Endpoint {
	var out []Endpoint
	for _, name := range c.ControllerListenerNames {
		for _, l := range c.Listeners {
			if l.Name == name {
				out = append(out, l)
			}
		}
	}
	return out
}

// AdvertisedControllerListeners returns the advertised endpoints of the
// controller listeners, in controller.listener.names order.
func (c *Config) AdvertisedControllerListeners() []Endpoint {
	var out []Endpoint
	for _, name := range c.ControllerListenerNames {
		for _, l := range c.AdvertisedListeners {
			if l.Name == name {
				out = append(out, l)
			}
		}
	}
	return out
}

// Kafka's defaults (QuorumConfig, KRaftConfigs, SocketServerConfigs).
const (
	defaultElectionTimeoutMs    = 1000
	defaultFetchTimeoutMs       = 2000
	defaultElectionBackoffMaxMs = 1000
	defaultAppendLingerMs       = 25
	defaultRequestTimeoutMs     = 2000
	defaultRetryBackoffMs       = 20
	defaultSegmentBytes         = 1 << 30
	defaultSegmentMinBytes      = 8 << 20
	defaultSegmentMs            = 7 * 24 * 3600 * 1000
	defaultMaxRetentionBytes    = 100 << 20
	defaultMaxRetentionMs       = 7 * 24 * 3600 * 1000
	defaultMaxRecordBytesSnap   = 20 << 20
	defaultMaxSnapshotInterval  = 3600 * 1000
	defaultSocketRequestMax     = 104857600
	defaultConnectionsMaxIdleMs = 600000
	defaultLogDirs              = "/tmp/kafka-logs"
	defaultListeners            = "PLAINTEXT://:9092"
)

// handledKeys are the keys Config reads.
var handledKeys = map[string]bool{
	"node.id": true, "process.roles": true, "listeners": true, "advertised.listeners": true,
	"controller.listener.names": true, "listener.security.protocol.map": true,
	"controller.quorum.voters": true, "controller.quorum.bootstrap.servers": true,
	"log.dirs": true, "log.dir": true, "metadata.log.dir": true,
	"controller.quorum.election.timeout.ms": true, "controller.quorum.fetch.timeout.ms": true,
	"controller.quorum.election.backoff.max.ms": true, "controller.quorum.append.linger.ms": true,
	"controller.quorum.request.timeout.ms": true, "controller.quorum.retry.backoff.ms": true,
	"metadata.log.segment.bytes": true, "metadata.log.segment.min.bytes": true,
	"metadata.log.segment.ms": true, "metadata.max.retention.bytes": true,
	"metadata.max.retention.ms": true, "metadata.log.max.record.bytes.between.snapshots": true,
	"metadata.log.max.snapshot.interval.ms": true, "socket.request.max.bytes": true,
	"connections.max.idle.ms": true,
}

// ignoredKafkaKeys are real Kafka settings that kraftd accepts without effect
// (thread pools, JVM-side tuning, broker settings): no warning for them.
var ignoredKafkaKeys = map[string]bool{
	"num.network.threads": true, "num.io.threads": true, "num.partitions": true,
	"socket.send.buffer.bytes": true, "socket.receive.buffer.bytes": true,
	"num.recovery.threads.per.data.dir": true, "offsets.topic.replication.factor": true,
	"transaction.state.log.replication.factor": true, "transaction.state.log.min.isr": true,
	"share.coordinator.state.topic.replication.factor": true, "share.coordinator.state.topic.min.isr": true,
	"log.retention.hours": true, "log.segment.bytes": true, "log.retention.check.interval.ms": true,
	"log.retention.bytes": true, "inter.broker.listener.name": true, "broker.id": true,
	"metadata.max.idle.interval.ms": true, "unstable.api.versions.enable": true,
	"unstable.feature.versions.enable": true, "group.initial.rebalance.delay.ms": true,
	"sasl.mechanism.controller.protocol": true, "auto.create.topics.enable": true,
	"default.replication.factor": true, "min.insync.replicas": true, "log.flush.interval.messages": true,
	"log.flush.interval.ms": true, "controller.quorum.auto.join.enable": true,
}

// ConfigError collects every validation problem found, so an operator fixes
// them in one go.
type ConfigError struct{ Problems []string }

func (e *ConfigError) Error() string {
	if len(e.Problems) == 1 {
		return "config: " + e.Problems[0]
	}
	return "config: " + strconv.Itoa(len(e.Problems)) + " problems:\n  " + strings.Join(e.Problems, "\n  ")
}

// ParseOverride splits a --override argument "key=value".
func ParseOverride(s string) (string, string, error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return "", "", fmt.Errorf("config: --override %q: want key=value", s)
	}
	return k, v, nil
}

// NewConfig validates properties and applies Kafka's defaults.
// forceController sets process.roles=controller as TestRaftServer does.
func NewConfig(p *clusterid.Properties, forceController bool) (*Config, error) {
	c := &Config{}
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	get := func(key, def string) string {
		if v, ok := p.Get(key); ok {
			return strings.TrimSpace(v)
		}
		return def
	}
	intKey := func(key string, def int64, min int64) int64 {
		s := get(key, "")
		if s == "" {
			return def
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			bad("%s: %q is not an integer", key, s)
			return def
		}
		if v < min {
			bad("%s: %d is below the minimum %d", key, v, min)
			return def
		}
		return v
	}
	msKey := func(key string, def int64, min int64) time.Duration {
		v := intKey(key, def, min)
		if v > int64(1<<31-1) {
			bad("%s: %d ms is larger than an int", key, v)
			v = def
		}
		return time.Duration(v) * time.Millisecond
	}

	// node.id
	nodeID := intKey("node.id", -1, -1)
	if nodeID > 1<<31-1 {
		bad("node.id: %d is larger than an int32", nodeID)
		nodeID = -1
	}
	c.NodeID = int32(nodeID)

	// process.roles
	if forceController {
		c.ProcessRoles = []string{"controller"}
	} else {
		seen := map[string]bool{}
		for _, r := range splitList(get("process.roles", "")) {
			r = strings.ToLower(r)
			if r != "broker" && r != "controller" {
				bad("process.roles: unknown role %q (want broker and/or controller)", r)
				continue
			}
			if seen[r] {
				bad("process.roles: duplicate role %q", r)
			}
			seen[r] = true
			c.ProcessRoles = append(c.ProcessRoles, r)
		}
		if len(c.ProcessRoles) == 0 {
			bad("process.roles: required (controller for a quorum node, broker for an observer)")
		} else if len(c.ProcessRoles) > 1 {
			c.Warnings = append(c.Warnings, "process.roles: kraftd serves only the controller side of combined mode; the broker role is ignored")
		}
	}
	if c.NodeID < 0 {
		bad("node.id: required and must be >= 0 in KRaft mode, got %d", c.NodeID)
	}

	// listener.security.protocol.map
	secMap := map[string]string{}
	if s := get("listener.security.protocol.map", ""); s != "" {
		for _, e := range splitList(s) {
			name, proto, ok := strings.Cut(e, ":")
			name, proto = strings.ToUpper(strings.TrimSpace(name)), strings.ToUpper(strings.TrimSpace(proto))
			if !ok || name == "" || proto == "" {
				bad("listener.security.protocol.map: malformed entry %q (want NAME:PROTOCOL)", e)
				continue
			}
			secMap[name] = proto
		}
	}

	// listeners
	listenerSet := map[string]bool{}
	ports := map[int]string{}
	for _, e := range splitList(get("listeners", defaultListeners)) {
		ep, err := parseListener(e)
		if err != nil {
			bad("listeners: %v", err)
			continue
		}
		if listenerSet[ep.Name] {
			bad("listeners: listener name %s appears more than once", ep.Name)
			continue
		}
		if other, ok := ports[ep.Port]; ok && ep.Port != 0 {
			bad("listeners: %s and %s use the same port %d", other, ep.Name, ep.Port)
		}
		ports[ep.Port] = ep.Name
		listenerSet[ep.Name] = true
		c.Listeners = append(c.Listeners, ep)
	}
	if len(c.Listeners) == 0 && !hasPrefixProblem(probs, "listeners:") {
		bad("listeners: at least one listener is required")
	}

	// controller.listener.names
	for _, n := range splitList(get("controller.listener.names", "")) {
		c.ControllerListenerNames = append(c.ControllerListenerNames, strings.ToUpper(n))
	}
	if len(c.ControllerListenerNames) == 0 {
		bad("controller.listener.names: required; it names the listener(s) the quorum uses")
	} else {
		cset := map[string]bool{}
		for _, n := range c.ControllerListenerNames {
			cset[n] = true
		}
		switch {
		case c.IsController():
			for _, n := range c.ControllerListenerNames {
				if !listenerSet[n] {
					bad("controller.listener.names: %s does not appear in listeners (%s)", n, get("listeners", defaultListeners))
				}
			}
			// A controller-only node may have only controller listeners.
			if len(c.ProcessRoles) == 1 {
				for _, l := range c.Listeners {
					if !cset[l.Name] {
						bad("listeners: %s is missing from controller.listener.names (%s); with process.roles=controller every listener must be a controller listener",
							l.Name, strings.Join(c.ControllerListenerNames, ","))
					}
				}
			}
		case len(c.ProcessRoles) > 0:
			// broker only (an observer): its listeners are not controller listeners.
			for _, l := range c.Listeners {
				if cset[l.Name] {
					bad("controller.listener.names: %s must not appear in listeners when process.roles=broker", l.Name)
				}
			}
		}
	}
	for _, l := range c.Listeners {
		proto, ok := secMap[l.Name]
		if !ok {
			proto = l.Name
			if len(secMap) > 0 || isSecurityProtocol(l.Name) {
				if len(secMap) > 0 && !isSecurityProtocol(l.Name) {
					bad("listener.security.protocol.map: no security protocol for listener %s", l.Name)
					continue
				}
			} else {
				proto = "PLAINTEXT" // controller listener names are implicitly PLAINTEXT
			}
		}
		if proto != "PLAINTEXT" {
			bad("listeners: %s uses security protocol %s; kraftd supports only PLAINTEXT", l.Name, proto)
		}
	}

	// advertised.listeners: per name, the advertised endpoint wins.
	adv := map[string]Endpoint{}
	if s := get("advertised.listeners", ""); s != "" {
		for _, e := range splitList(s) {
			ep, err := parseListener(e)
			if err != nil {
				bad("advertised.listeners: %v", err)
				continue
			}
			if ep.Host == "0.0.0.0" || ep.Host == "::" {
				bad("advertised.listeners: %s cannot advertise the non-routable address %s", ep.Name, ep.Host)
				continue
			}
			if !listenerSet[ep.Name] {
				bad("advertised.listeners: %s is not one of the listeners", ep.Name)
				continue
			}
			adv[ep.Name] = ep
		}
	}
	for _, l := range c.Listeners {
		if a, ok := adv[l.Name]; ok {
			c.AdvertisedListeners = append(c.AdvertisedListeners, a)
		} else {
			c.AdvertisedListeners = append(c.AdvertisedListeners, l)
		}
	}

	// controller.quorum.voters
	voterIDs := map[int32]bool{}
	if s := get("controller.quorum.voters", ""); s != "" {
		for _, e := range splitList(s) {
			v, err := parseVoter(e)
			if err != nil {
				bad("controller.quorum.voters: %v", err)
				continue
			}
			if voterIDs[v.ID] {
				bad("controller.quorum.voters: duplicate voter id %d", v.ID)
				continue
			}
			voterIDs[v.ID] = true
			c.Voters = append(c.Voters, v)
		}
	}
	if s := get("controller.quorum.bootstrap.servers", ""); s != "" {
		for _, e := range splitList(s) {
			h, port, err := parseHostPort(e)
			if err != nil {
				bad("controller.quorum.bootstrap.servers: %v", err)
				continue
			}
			if h == "0.0.0.0" || h == "::" {
				bad("controller.quorum.bootstrap.servers: %q is a non-routable address", e)
				continue
			}
			c.BootstrapServers = append(c.BootstrapServers, Endpoint{Host: h, Port: port})
		}
	}
	if get("controller.quorum.voters", "") == "" && get("controller.quorum.bootstrap.servers", "") == "" {
		bad("controller.quorum.voters / controller.quorum.bootstrap.servers: Missing kraft bootstrap servers; set controller.quorum.voters (id@host:port,...)")
	} else if len(c.Voters) == 0 && get("controller.quorum.voters", "") == "" {
		bad("controller.quorum.voters: required (kraftd supports static voter sets only; dynamic quorums need KIP-853 bootstrap snapshots)")
	}
	// A controller in a static quorum must be one of the voters (as Kafka
	// checks); a node outside the set runs with process.roles=broker and is
	// an observer: it fetches but never votes.
	if c.NodeID >= 0 && len(c.Voters) > 0 && !voterIDs[c.NodeID] && c.IsController() {
		bad("node.id: %d is not in controller.quorum.voters (%s); a controller must be a voter (process.roles=broker runs an observer)",
			c.NodeID, get("controller.quorum.voters", ""))
	}

	// log dirs
	dirs := get("log.dirs", "")
	if dirs == "" {
		dirs = get("log.dir", defaultLogDirs)
	}
	seenDir := map[string]bool{}
	for _, d := range splitList(dirs) {
		cd := filepath.Clean(d)
		if seenDir[cd] {
			bad("log.dirs: %s appears more than once", d)
			continue
		}
		seenDir[cd] = true
		c.LogDirs = append(c.LogDirs, cd)
	}
	if len(c.LogDirs) == 0 {
		bad("log.dirs: at least one log directory is required")
	}
	c.MetadataLogDir = get("metadata.log.dir", "")
	if c.MetadataLogDir == "" && len(c.LogDirs) > 0 {
		c.MetadataLogDir = c.LogDirs[0]
	}
	c.MetadataLogDir = filepath.Clean(c.MetadataLogDir)

	// quorum timeouts
	c.ElectionTimeout = msKey("controller.quorum.election.timeout.ms", defaultElectionTimeoutMs, 1)
	c.FetchTimeout = msKey("controller.quorum.fetch.timeout.ms", defaultFetchTimeoutMs, 1)
	c.ElectionBackoffMax = msKey("controller.quorum.election.backoff.max.ms", defaultElectionBackoffMaxMs, 0)
	c.AppendLinger = msKey("controller.quorum.append.linger.ms", defaultAppendLingerMs, 0)
	c.RequestTimeout = msKey("controller.quorum.request.timeout.ms", defaultRequestTimeoutMs, 1)
	c.RetryBackoff = msKey("controller.quorum.retry.backoff.ms", defaultRetryBackoffMs, 0)

	// log settings
	c.SegmentMinBytes = intKey("metadata.log.segment.min.bytes", defaultSegmentMinBytes, 12)
	c.SegmentBytes = intKey("metadata.log.segment.bytes", defaultSegmentBytes, 12)
	if c.SegmentBytes < c.SegmentMinBytes {
		bad("metadata.log.segment.bytes: %d is below metadata.log.segment.min.bytes (%d)", c.SegmentBytes, c.SegmentMinBytes)
	}
	if c.SegmentBytes > 1<<31-1 {
		bad("metadata.log.segment.bytes: %d is larger than an int", c.SegmentBytes)
	}
	c.SegmentMs = intKey("metadata.log.segment.ms", defaultSegmentMs, 1)
	c.MaxRetentionBytes = intKey("metadata.max.retention.bytes", defaultMaxRetentionBytes, -1<<62)
	c.MaxRetentionMs = intKey("metadata.max.retention.ms", defaultMaxRetentionMs, -1<<62)
	c.MaxRecordBytesBetweenSnapshots = intKey("metadata.log.max.record.bytes.between.snapshots", defaultMaxRecordBytesSnap, 1)
	c.MaxSnapshotIntervalMs = intKey("metadata.log.max.snapshot.interval.ms", defaultMaxSnapshotInterval, 0)

	srm := intKey("socket.request.max.bytes", defaultSocketRequestMax, 1)
	if srm > 1<<31-1 {
		bad("socket.request.max.bytes: %d is larger than an int", srm)
		srm = defaultSocketRequestMax
	}
	c.SocketRequestMaxBytes = int32(srm)
	c.ConnectionsMaxIdle = time.Duration(intKey("connections.max.idle.ms", defaultConnectionsMaxIdleMs, -1<<62)) * time.Millisecond

	// unknown keys: warnings, sorted for stable output
	var unknown []string
	for _, k := range p.Keys {
		if !handledKeys[k] && !ignoredKafkaKeys[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		where := "from --override"
		if line := p.Lines[k]; line > 0 {
			where = fmt.Sprintf("line %d", line)
		}
		c.Warnings = append(c.Warnings, fmt.Sprintf("unknown configuration key %q (%s) is ignored", k, where))
	}

	if len(probs) > 0 {
		return nil, &ConfigError{Problems: probs}
	}
	return c, nil
}

func hasPrefixProblem(probs []string, prefix string) bool {
	for _, p := range probs {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

func isSecurityProtocol(s string) bool {
	switch s {
	case "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
		return true
	}
	return false
}

// splitList splits a Kafka LIST value on commas, trimming blanks and dropping
// empty items.
func splitList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// parseListener parses NAME://host:port (host may be empty, IPv6 bracketed).
func parseListener(s string) (Endpoint, error) {
	name, rest, ok := strings.Cut(s, "://")
	if !ok || name == "" {
		return Endpoint{}, fmt.Errorf("malformed listener %q (want NAME://host:port)", s)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return Endpoint{}, fmt.Errorf("malformed listener %q: listener name %q may hold only letters, digits, '_' and '-'", s, name)
		}
	}
	host, port, err := parseHostPort(rest)
	if err != nil {
		return Endpoint{}, fmt.Errorf("malformed listener %q: %v", s, err)
	}
	return Endpoint{Name: strings.ToUpper(name), Host: host, Port: port}, nil
}

// parseHostPort parses host:port or [ipv6]:port with 0 <= port <= 65535.
// The host may be empty.
func parseHostPort(s string) (string, int, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", 0, fmt.Errorf("%q has no port (want host:port)", s)
	}
	host, ps := s[:i], s[i+1:]
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") {
			return "", 0, fmt.Errorf("%q: unterminated [ in IPv6 address", s)
		}
		host = host[1 : len(host)-1]
		if net.ParseIP(host) == nil {
			return "", 0, fmt.Errorf("%q: %q is not an IPv6 address", s, host)
		}
	} else if strings.Contains(host, ":") {
		return "", 0, fmt.Errorf("%q: IPv6 addresses must be in brackets", s)
	}
	for _, r := range host {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_' || r == '%' || r == ':') {
			return "", 0, fmt.Errorf("%q: invalid character %q in host", s, r)
		}
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 0 || port > 65535 || ps == "" || ps[0] == '+' || ps[0] == '-' {
		return "", 0, fmt.Errorf("%q: port %q is not a number in 0-65535", s, ps)
	}
	return host, port, nil
}

// parseVoter parses one controller.quorum.voters entry id@host:port.
func parseVoter(s string) (VoterAddr, error) {
	idStr, addr, ok := strings.Cut(s, "@")
	if !ok || strings.Contains(addr, "@") {
		return VoterAddr{}, fmt.Errorf("malformed entry %q (want id@host:port)", s)
	}
	id, err := strconv.ParseInt(strings.TrimSpace(idStr), 10, 32)
	if err != nil || id < 0 {
		return VoterAddr{}, fmt.Errorf("malformed entry %q: voter id %q is not a non-negative int32", s, idStr)
	}
	host, port, err := parseHostPort(addr)
	if err != nil {
		return VoterAddr{}, fmt.Errorf("malformed entry %q: %v", s, err)
	}
	if host == "" {
		return VoterAddr{}, fmt.Errorf("malformed entry %q: empty host", s)
	}
	if host == "0.0.0.0" || host == "::" {
		return VoterAddr{}, fmt.Errorf("entry %q: %s is a non-routable address", s, host)
	}
	if port == 0 {
		return VoterAddr{}, fmt.Errorf("entry %q: port 0 is not a reachable port", s)
	}
	return VoterAddr{ID: int32(id), Host: host, Port: port}, nil
}

var errNoConfig = errors.New("--config FILE is required")
