package config

import "time"

// socketKeys are the keys of the network server.
var socketKeys = []string{"socket.request.max.bytes", "connections.max.idle.ms"}

// Kafka's defaults (SocketServerConfigs).
const (
	defaultSocketRequestMax     = 104857600
	defaultConnectionsMaxIdleMs = 600000
)

// readSocket reads the request size limit and the idle timeout.
func (c *Config) readSocket(r *reader) {
	c.SocketRequestMaxBytes = r.int32("socket.request.max.bytes", defaultSocketRequestMax, 1)
	c.ConnectionsMaxIdle = time.Duration(r.int("connections.max.idle.ms", defaultConnectionsMaxIdleMs, -1<<62)) * time.Millisecond
}
