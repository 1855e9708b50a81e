package config

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

const minimalController = `node.id=1
process.roles=controller
listeners=CONTROLLER://localhost:9093
controller.listener.names=CONTROLLER
controller.quorum.voters=1@localhost:9093
log.dirs=/tmp/kraft-socket-test
`

func socketConfig(t *testing.T, extra string) (*Config, error) {
	t.Helper()
	p, err := ParseProperties(minimalController + extra)
	if err != nil {
		t.Fatal(err)
	}
	return New(p, false)
}

func TestSocketDefaults(t *testing.T) {
	c, err := socketConfig(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxConnections != math.MaxInt32 || c.MaxConnectionsPerIP != math.MaxInt32 || c.MaxConnectionsPerIPOverrides != nil ||
		c.MaxConnectionCreationRate != math.MaxInt32 || c.QueuedMaxRequests != 500 || c.QueuedMaxRequestBytes != -1 ||
		c.ConnectionsMaxIdle != 10*time.Minute {
		t.Errorf("socket defaults wrong: %+v", c)
	}
}

func TestSocketValues(t *testing.T) {
	c, err := socketConfig(t, `max.connections=100
max.connections.per.ip=0
max.connections.per.ip.overrides=127.0.0.1:5, kafka-1.example:2
max.connection.creation.rate=20
queued.max.requests=50
queued.max.request.bytes=209715200
connections.max.idle.ms=-1
`)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxConnections != 100 || c.MaxConnectionsPerIP != 0 || c.MaxConnectionCreationRate != 20 ||
		c.QueuedMaxRequests != 50 || c.QueuedMaxRequestBytes != 209715200 || c.ConnectionsMaxIdle != NeverIdle {
		t.Errorf("socket values wrong: %+v", c)
	}
	if want := map[string]int32{"127.0.0.1": 5, "kafka-1.example": 2}; !reflect.DeepEqual(c.MaxConnectionsPerIPOverrides, want) {
		t.Errorf("overrides %v, want %v", c.MaxConnectionsPerIPOverrides, want)
	}
}

// A connections.max.idle.ms beyond what a Duration holds means never, not a wrapped
// (negative or short) timeout.
func TestIdleBeyondDurationIsNever(t *testing.T) {
	c, err := socketConfig(t, "connections.max.idle.ms=9223372036854775807\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.ConnectionsMaxIdle != NeverIdle {
		t.Errorf("ConnectionsMaxIdle = %v, want NeverIdle", c.ConnectionsMaxIdle)
	}
}

// Every socket problem is reported at once.
func TestSocketProblems(t *testing.T) {
	_, err := socketConfig(t, `max.connections=-1
max.connections.per.ip=0
max.connections.per.ip.overrides=a:1,b,c:-2,d e:3
max.connection.creation.rate=x
queued.max.requests=0
queued.max.request.bytes=1000
connections.max.idle.ms=100
`)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"max.connections: -1 is below the minimum 0",
		`max.connections.per.ip.overrides: "b" is not host:count`,
		`count "-2" for c`,
		`"d e" is not a valid host`,
		"max.connection.creation.rate: \"x\" is not an integer",
		"queued.max.requests: 0 is below the minimum 1",
		"queued.max.request.bytes: 1000 must be at least socket.request.max.bytes",
		"connections.max.idle.ms: 100 must be above",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	_, err = socketConfig(t, "max.connections.per.ip=0\n")
	if err == nil || !strings.Contains(err.Error(), "only allowed with max.connections.per.ip.overrides") {
		t.Errorf("per-ip 0 without overrides: %v", err)
	}
}
