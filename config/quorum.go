package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kraftd/kraftd/raft"
)

// quorumKeys are the keys of the voter set and the raft timers.
var quorumKeys = []string{
	"controller.quorum.voters", "controller.quorum.bootstrap.servers",
	"controller.quorum.election.timeout.ms", "controller.quorum.fetch.timeout.ms",
	"controller.quorum.election.backoff.max.ms", "controller.quorum.append.linger.ms",
	"controller.quorum.request.timeout.ms", "controller.quorum.retry.backoff.ms",
	"controller.quorum.auto.join.enable",
	LeadershipDeferralKey, LeaderFsyncDeferralKey, FetchPaceKey, FetchPaceRateKey,
	AppendFlushBytesKey, MaxUncommittedBytesKey,
}

// LeadershipDeferralKey turns leadership deferral on or off (kraftd's own
// key, default true when kraftd.controller.active.enable is false, false
// otherwise): a kraftd voter of __cluster_metadata hands leadership
// to a Kafka controller that can be the active controller. It has no
// effect on test-kraft-server-start's partition, which has no controllers.
const LeadershipDeferralKey = "kraftd.controller.leadership.deferral.enable"

// LeaderFsyncDeferralKey turns leader fsync deferral on or off (kraftd's
// own key, default true): the leader fsyncs on a goroutine of its own
// instead of in its raft round, so it keeps serving fetches meanwhile and
// followers that flushed commit without waiting for its disk. Off, the
// leader fsyncs in its round, as Kafka 4.4's KafkaRaftClient does.
const LeaderFsyncDeferralKey = "kraftd.controller.quorum.leader.fsync.deferral.enable"

// FetchPaceKey and FetchPaceRateKey pace a follower's fetches (kraftd's
// own keys): while records arrive at FetchPaceRateKey bytes/s or more, the
// next Fetch waits FetchPaceKey microseconds after each answer (0: never).
// Every fetch round costs each node a write, an fsync and frames both ways
// however much it carries; at high rates pacing makes the rounds fewer and
// larger for that much commit latency, while below the rate fetches go at
// once.
const (
	FetchPaceKey     = "kraftd.controller.quorum.fetch.pace.us"
	FetchPaceRateKey = "kraftd.controller.quorum.fetch.pace.bytes.per.second"

	maxFetchPaceUs = 100000
)

// AppendFlushBytesKey and MaxUncommittedBytesKey shape a leader's appends
// (kraftd's own keys). A batch is written as soon as it holds
// AppendFlushBytesKey bytes, before controller.quorum.append.linger.ms
// ends (0: at the linger only, as Kafka), so the linger bounds the wait of
// a lone record without setting the pace at high rates. A leader refuses
// appends (the application sees a full buffer) while more than
// MaxUncommittedBytesKey bytes wait for their commit (0: no bound), so an
// overloaded quorum keeps committing at its highest rate with a bounded
// backlog and latency.
const (
	AppendFlushBytesKey    = "kraftd.controller.quorum.append.flush.bytes"
	MaxUncommittedBytesKey = "kraftd.controller.quorum.append.max.uncommitted.bytes"
)

// VoterAddr is one entry of controller.quorum.voters.
type VoterAddr struct {
	ID   int32
	Host string
	Port int
}

// IsVoter reports whether this node is in controller.quorum.voters (a node
// of a dynamic quorum learns whether it votes from its log).
func (c *Config) IsVoter() bool {
	for _, v := range c.Voters {
		if v.ID == c.NodeID {
			return true
		}
	}
	return false
}

// readQuorum reads the voter set and the raft timers. It runs after
// readRoles: a controller must be one of the voters.
func (c *Config) readQuorum(r *reader) {
	voterIDs := c.readVoters(r)
	c.readBootstrapServers(r)
	voters := r.get("controller.quorum.voters", "")
	// Either key may be set, or both (as Kafka 4.4's KafkaConfig allows):
	// static voters fix the set at kraft.version 0; bootstrap servers alone
	// leave it to the log (a dynamic quorum's bootstrap snapshot or Voters
	// records). With both, the static set is used until the log holds a
	// Voters record, and the bootstrap servers are where a node without a
	// leader looks for one.
	if voters == "" && r.get("controller.quorum.bootstrap.servers", "") == "" {
		r.bad("controller.quorum.voters / controller.quorum.bootstrap.servers: Missing kraft bootstrap servers; set controller.quorum.bootstrap.servers (host:port,...) or controller.quorum.voters (id@host:port,...)")
	}
	// A controller in a static quorum must be one of the voters (as Kafka
	// checks); a node outside the set runs with process.roles=broker and is
	// an observer: it fetches but never votes. In a dynamic quorum any
	// controller may start, as an observer until the set names it.
	if c.NodeID >= 0 && len(c.Voters) > 0 && !voterIDs[c.NodeID] && c.IsController() {
		r.bad("node.id: %d is not in controller.quorum.voters (%s); a controller must be a voter (process.roles=broker runs an observer)",
			c.NodeID, voters)
	}
	c.ElectionTimeout = r.ms("controller.quorum.election.timeout.ms", raft.DefaultElectionTimeout, 1)
	c.FetchTimeout = r.ms("controller.quorum.fetch.timeout.ms", raft.DefaultFetchTimeout, 1)
	c.ElectionBackoffMax = r.ms("controller.quorum.election.backoff.max.ms", raft.DefaultElectionBackoffMax, 0)
	c.AppendLinger = r.ms("controller.quorum.append.linger.ms", raft.DefaultAppendLinger, 0)
	c.RequestTimeout = r.ms("controller.quorum.request.timeout.ms", raft.DefaultRequestTimeout, 1)
	c.RetryBackoff = r.ms("controller.quorum.retry.backoff.ms", raft.DefaultRetryBackoff, 0)
	c.AutoJoin = r.bool("controller.quorum.auto.join.enable", false)
	// A node that can be the active controller leads when raft elects it;
	// one that cannot hands leadership to one that can. Deferral asked for
	// alone makes a plain voter (no active side), as before.
	c.ActiveController = r.bool(ActiveControllerKey, !r.bool(LeadershipDeferralKey, false))
	c.DeferLeadership = r.bool(LeadershipDeferralKey, !c.ActiveController)
	c.DeferLeaderFsync = r.bool(LeaderFsyncDeferralKey, true)
	if us := r.int(FetchPaceKey, raft.DefaultFetchPace.Microseconds(), 0); us > maxFetchPaceUs {
		r.bad("%s=%d: want 0 (no pacing) to %d", FetchPaceKey, us, maxFetchPaceUs)
	} else if d := time.Duration(us) * time.Microsecond; us > 0 && d >= c.FetchTimeout {
		// A follower paused that long would miss its own fetch timeout.
		r.bad("%s=%d: must be below controller.quorum.fetch.timeout.ms (%d)", FetchPaceKey, us, c.FetchTimeout.Milliseconds())
	} else {
		c.FetchPace = d
	}
	c.FetchPaceRate = r.int(FetchPaceRateKey, raft.DefaultFetchPaceRate, 1)
	c.AppendFlushBytes = int(r.int32(AppendFlushBytesKey, raft.DefaultAppendFlushBytes, 0))
	c.MaxUncommitted = int(r.int32(MaxUncommittedBytesKey, raft.DefaultMaxUncommittedBytes, 0))
}

// readVoters reads controller.quorum.voters and returns the set of ids.
func (c *Config) readVoters(r *reader) map[int32]bool {
	ids := map[int32]bool{}
	for _, e := range SplitList(r.get("controller.quorum.voters", "")) {
		v, err := parseVoter(e)
		if err != nil {
			r.bad("controller.quorum.voters: %v", err)
			continue
		}
		if ids[v.ID] {
			r.bad("controller.quorum.voters: duplicate voter id %d", v.ID)
			continue
		}
		ids[v.ID] = true
		c.Voters = append(c.Voters, v)
	}
	return ids
}

func (c *Config) readBootstrapServers(r *reader) {
	for _, e := range SplitList(r.get("controller.quorum.bootstrap.servers", "")) {
		h, port, err := ParseHostPort(e)
		if err != nil {
			r.bad("controller.quorum.bootstrap.servers: %v", err)
			continue
		}
		if isNonRoutable(h) {
			r.bad("controller.quorum.bootstrap.servers: %q is a non-routable address", e)
			continue
		}
		c.BootstrapServers = append(c.BootstrapServers, Endpoint{Host: h, Port: port})
	}
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
	host, port, err := ParseHostPort(addr)
	if err != nil {
		return VoterAddr{}, fmt.Errorf("malformed entry %q: %v", s, err)
	}
	if host == "" {
		return VoterAddr{}, fmt.Errorf("malformed entry %q: empty host", s)
	}
	if isNonRoutable(host) {
		return VoterAddr{}, fmt.Errorf("entry %q: %s is a non-routable address", s, host)
	}
	if port == 0 {
		return VoterAddr{}, fmt.Errorf("entry %q: port 0 is not a reachable port", s)
	}
	return VoterAddr{ID: int32(id), Host: host, Port: port}, nil
}
