package config

import (
	"fmt"

	"github.com/kraftd/kraftd/security"
	"strconv"
	"strings"
	"time"
)

// Config is a validated node configuration with Kafka's defaults applied.
// Durations are whole milliseconds as Kafka reads them. Each group of fields
// is read by the file of its concern (roles.go, listeners.go, quorum.go,
// log.go, socket.go).
type Config struct {
	NodeID       int32
	ProcessRoles []string

	Listeners               []Endpoint // in file order, names upper-cased
	AdvertisedListeners     []Endpoint // effective: advertised.listeners overriding listeners per name
	ControllerListenerNames []string   // upper-cased; the first is the raft listener

	// ListenerSecurity is each listener's protocol and ssl/sasl settings
	// (server side); OutboundSecurity those of connections to voters.
	ListenerSecurity map[string]*security.Listener
	OutboundSecurity *security.Listener

	Voters           []VoterAddr
	BootstrapServers []Endpoint

	ElectionTimeout    time.Duration // controller.quorum.election.timeout.ms
	FetchTimeout       time.Duration // controller.quorum.fetch.timeout.ms
	ElectionBackoffMax time.Duration // controller.quorum.election.backoff.max.ms
	AppendLinger       time.Duration // controller.quorum.append.linger.ms
	RequestTimeout     time.Duration // controller.quorum.request.timeout.ms
	RetryBackoff       time.Duration // controller.quorum.retry.backoff.ms
	AutoJoin           bool          // controller.quorum.auto.join.enable (KIP-1186)
	DeferLeadership    bool          // kraftd.controller.leadership.deferral.enable (__cluster_metadata only)
	DeferLeaderFsync   bool          // kraftd.controller.quorum.leader.fsync.deferral.enable
	FetchPace          time.Duration // kraftd.controller.quorum.fetch.pace.us; 0: no pacing
	FetchPaceRate      int64         // kraftd.controller.quorum.fetch.pace.bytes.per.second
	AppendFlushBytes   int           // kraftd.controller.quorum.append.flush.bytes; 0: at the linger only
	MaxUncommitted     int           // kraftd.controller.quorum.append.max.uncommitted.bytes; 0: no bound

	LogDirs        []string
	MetadataLogDir string

	SegmentBytes                   int64 // metadata.log.segment.bytes
	SegmentMinBytes                int64 // metadata.log.segment.min.bytes (internal)
	SegmentMs                      int64 // metadata.log.segment.ms
	MaxRetentionBytes              int64 // metadata.max.retention.bytes; < 0 disables
	MaxRetentionMs                 int64 // metadata.max.retention.ms; < 0 disables
	MaxRecordBytesBetweenSnapshots int64 // metadata.log.max.record.bytes.between.snapshots
	MaxSnapshotIntervalMs          int64 // metadata.log.max.snapshot.interval.ms

	// The active controller (active.go).
	ActiveController          bool   // kraftd.controller.active.enable
	MaxIdleIntervalMs         int64  // metadata.max.idle.interval.ms
	BrokerSessionTimeoutMs    int64  // broker.session.timeout.ms
	BrokerHeartbeatIntervalMs int64  // broker.heartbeat.interval.ms
	MinInsyncReplicas         string // min.insync.replicas (the static value)
	// The topic operations and periodic elections.
	NumPartitions                       int32 // num.partitions
	DefaultReplicationFactor            int16 // default.replication.factor
	DeleteTopicEnable                   bool  // delete.topic.enable
	AutoLeaderRebalance                 bool  // auto.leader.rebalance.enable
	LeaderImbalanceCheckIntervalSeconds int64 // leader.imbalance.check.interval.seconds
	UncleanElectionIntervalMs           int64 // unclean.leader.election.interval.ms

	SocketRequestMaxBytes        int32            // socket.request.max.bytes
	ConnectionsMaxIdle           time.Duration    // connections.max.idle.ms; NeverIdle for negative
	MaxConnections               int32            // max.connections
	MaxConnectionsPerIP          int32            // max.connections.per.ip
	MaxConnectionsPerIPOverrides map[string]int32 // max.connections.per.ip.overrides: host -> count
	MaxConnectionCreationRate    int32            // max.connection.creation.rate, per second
	QueuedMaxRequests            int32            // queued.max.requests
	QueuedMaxRequestBytes        int64            // queued.max.request.bytes; <= 0: no bound

	MetricsListener string // kraftd.metrics.listener as HOST:PORT; "" when off
	MetricsPprof    bool   // kraftd.metrics.pprof.enable

	SchedulerSlice time.Duration // kraftd.process.scheduler.slice.us; 0: the kernel's

	// Warnings lists what was accepted but deserves a log line (unknown keys,
	// ignored settings), in a stable order.
	Warnings []string
}

// New validates properties and applies Kafka's defaults. It reports every
// problem at once (as an *Error) so an operator fixes them in one go.
// forceController sets process.roles=controller as TestRaftServer does.
func New(p *Properties, forceController bool) (*Config, error) {
	c := &Config{}
	r := &reader{p: p}
	c.readRoles(r, forceController)
	c.readListeners(r)
	c.readQuorum(r)
	c.readLog(r)
	c.readSocket(r)
	c.readMetrics(r)
	c.readProcess(r)
	c.readActive(r)
	c.warnUnknownKeys(p)
	if len(r.problems) > 0 {
		return nil, &Error{Problems: r.problems}
	}
	return c, nil
}

// Error collects every validation problem found.
type Error struct{ Problems []string }

func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return "config: " + e.Problems[0]
	}
	return "config: " + strconv.Itoa(len(e.Problems)) + " problems:\n  " + strings.Join(e.Problems, "\n  ")
}

// reader reads typed values from properties and records every problem
// instead of stopping at the first; a bad value yields the default so later
// checks still run.
type reader struct {
	p        *Properties
	problems []string
}

func (r *reader) bad(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

// hasProblem reports whether a problem starting with prefix was recorded.
func (r *reader) hasProblem(prefix string) bool {
	for _, p := range r.problems {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// get returns the trimmed value of key, or def when it is not set.
func (r *reader) get(key, def string) string {
	if v, ok := r.p.Get(key); ok {
		return strings.TrimSpace(v)
	}
	return def
}

// bool reads a boolean key as Kafka's ConfigDef does: true or false in
// any case.
func (r *reader) bool(key string, def bool) bool {
	v := r.get(key, "")
	switch {
	case v == "":
		return def
	case strings.EqualFold(v, "true"):
		return true
	case strings.EqualFold(v, "false"):
		return false
	}
	r.bad("%s: %q is not true or false", key, v)
	return def
}

// int reads an integer key of at least min.
func (r *reader) int(key string, def, min int64) int64 {
	s := r.get(key, "")
	if s == "" {
		return def
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		r.bad("%s: %q is not an integer", key, s)
		return def
	}
	if v < min {
		r.bad("%s: %d is below the minimum %d", key, v, min)
		return def
	}
	return v
}

// int32 reads an integer key of at least min that must fit a Java int.
func (r *reader) int32(key string, def, min int64) int32 {
	v := r.int(key, def, min)
	if v > 1<<31-1 {
		r.bad("%s: %d is larger than an int", key, v)
		v = def
	}
	return int32(v)
}

// ms reads a millisecond key that Kafka holds in a Java int; def is a whole
// number of milliseconds.
func (r *reader) ms(key string, def time.Duration, min int64) time.Duration {
	v := r.int(key, def.Milliseconds(), min)
	if v > 1<<31-1 {
		r.bad("%s: %d ms is larger than an int", key, v)
		v = def.Milliseconds()
	}
	return time.Duration(v) * time.Millisecond
}

// SplitList splits a Kafka LIST value on commas, trimming blanks and
// dropping empty items.
func SplitList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}
