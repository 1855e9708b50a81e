package config

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/protocol"
)

// socketKeys are the keys of the network server.
var socketKeys = []string{
	"socket.request.max.bytes", "connections.max.idle.ms",
	"max.connections", "max.connections.per.ip", "max.connections.per.ip.overrides",
	"max.connection.creation.rate", "queued.max.requests", "queued.max.request.bytes",
}

// Kafka's defaults (SocketServerConfigs) are the network server's
// (network.DefaultIdleTimeout, network.DefaultQueuedMaxRequests) and
// protocol.DefaultMaxFrameSize; these are config's own.
const (
	unlimited = math.MaxInt32 // max.connections* and the creation rate
	// failedAuthDelayMs is failed.authentication.delay.ms's default, which Kafka
	// requires connections.max.idle.ms to exceed when it is not negative.
	failedAuthDelayMs = 100
)

// NeverIdle as ConnectionsMaxIdle keeps idle connections open (Kafka's negative
// connections.max.idle.ms).
const NeverIdle time.Duration = -1

// readSocket reads the request size limit, the idle timeout and the connection and
// queued request limits.
func (c *Config) readSocket(r *reader) {
	c.SocketRequestMaxBytes = r.int32("socket.request.max.bytes", int64(protocol.DefaultMaxFrameSize), 1)
	c.ConnectionsMaxIdle = readIdle(r)
	c.MaxConnections = r.int32("max.connections", unlimited, 0)
	c.MaxConnectionsPerIP = r.int32("max.connections.per.ip", unlimited, 0)
	c.MaxConnectionsPerIPOverrides = readOverrides(r)
	if c.MaxConnectionsPerIP == 0 && len(c.MaxConnectionsPerIPOverrides) == 0 && !r.hasProblem("max.connections.per.ip") {
		r.bad("max.connections.per.ip: 0 is only allowed with max.connections.per.ip.overrides set")
	}
	c.MaxConnectionCreationRate = r.int32("max.connection.creation.rate", unlimited, 0)
	c.QueuedMaxRequests = r.int32("queued.max.requests", network.DefaultQueuedMaxRequests, 1)
	c.QueuedMaxRequestBytes = r.int("queued.max.request.bytes", -1, math.MinInt64)
	if c.QueuedMaxRequestBytes > 0 && c.QueuedMaxRequestBytes < int64(c.SocketRequestMaxBytes) {
		r.bad("queued.max.request.bytes: %d must be at least socket.request.max.bytes (%d), or not positive for no bound",
			c.QueuedMaxRequestBytes, c.SocketRequestMaxBytes)
	}
}

// readIdle reads connections.max.idle.ms: negative means never; a value beyond what a
// Duration holds (292 years) is never in practice too.
func readIdle(r *reader) time.Duration {
	ms := r.int("connections.max.idle.ms", network.DefaultIdleTimeout.Milliseconds(), math.MinInt64)
	switch {
	case ms < 0 || ms > math.MaxInt64/int64(time.Millisecond):
		return NeverIdle
	case ms <= failedAuthDelayMs:
		r.bad("connections.max.idle.ms: %d must be above failed.authentication.delay.ms (%d), or negative for never",
			ms, failedAuthDelayMs)
		return network.DefaultIdleTimeout
	}
	return time.Duration(ms) * time.Millisecond
}

// validHost is Kafka's Utils.validHostPattern.
var validHost = regexp.MustCompile(`^[a-zA-Z0-9._\-]+$`)

// readOverrides reads max.connections.per.ip.overrides, "host:count,host:count" (Kafka's
// CSV map: an IPv6 address cannot be named, as in Kafka).
func readOverrides(r *reader) map[string]int32 {
	const key = "max.connections.per.ip.overrides"
	var out map[string]int32
	for _, e := range SplitList(r.get(key, "")) {
		host, count, ok := strings.Cut(e, ":")
		host, count = strings.TrimSpace(host), strings.TrimSpace(count)
		n, err := strconv.ParseInt(count, 10, 32)
		switch {
		case !ok || strings.Contains(count, ":"):
			r.bad("%s: %q is not host:count", key, e)
		case !validHost.MatchString(host):
			r.bad("%s: %q is not a valid host", key, host)
		case err != nil || n < 0:
			r.bad("%s: count %q for %s is not a non-negative int", key, count, host)
		default:
			if out == nil {
				out = make(map[string]int32)
			}
			out[host] = int32(n)
		}
	}
	return out
}
