package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The properties files of Kafka's raft README (raft/config/kraft.properties
// and the 3-node variant) must parse and validate.
func TestKafkaRaftReadmeConfig(t *testing.T) {
	const kraft = `# Licensed to the Apache Software Foundation (ASF) under one or more
# contributor license agreements.

node.id=0
listeners=PLAINTEXT://localhost:9092
controller.listener.names=PLAINTEXT
controller.quorum.voters=0@localhost:9092
log.dirs=/tmp/kraft-logs
`
	p, err := ParseProperties(kraft)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(p, true)
	if err != nil {
		t.Fatal(err)
	}
	if c.NodeID != 0 || c.RaftListener() != "PLAINTEXT" || len(c.Voters) != 1 || c.Voters[0] != (VoterAddr{0, "localhost", 9092}) {
		t.Errorf("unexpected config %+v", c)
	}
	if c.MetadataLogDir != "/tmp/kraft-logs" {
		t.Errorf("metadata log dir %q", c.MetadataLogDir)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings %q", c.Warnings)
	}
	// Defaults from QuorumConfig / KRaftConfigs.
	if c.ElectionTimeout != time.Second || c.FetchTimeout != 2*time.Second || c.ElectionBackoffMax != time.Second ||
		c.AppendLinger != 25*time.Millisecond || c.RequestTimeout != 2*time.Second || c.RetryBackoff != 20*time.Millisecond {
		t.Errorf("quorum defaults wrong: %+v", c)
	}
	if c.SegmentBytes != 1<<30 || c.MaxRetentionBytes != 104857600 || c.MaxRetentionMs != 604800000 ||
		c.MaxRecordBytesBetweenSnapshots != 20971520 || c.SocketRequestMaxBytes != 104857600 || c.ConnectionsMaxIdle != 10*time.Minute {
		t.Errorf("log defaults wrong: %+v", c)
	}
	if c.SegmentMinBytes != 8<<20 || c.SegmentMs != 604800000 || c.MaxSnapshotIntervalMs != 3600000 || c.QueuedMaxRequests != 500 ||
		c.FetchPace != 1500*time.Microsecond || c.FetchPaceRate != 16<<20 {
		t.Errorf("other defaults wrong: %+v", c)
	}

	for i, id := range []string{"1", "2", "3"} {
		three := "node.id=" + id + `
listeners=PLAINTEXT://localhost:909` + string(rune('2'+i)) + `
controller.listener.names=PLAINTEXT
controller.quorum.voters=1@localhost:9092,2@localhost:9093,3@localhost:9094
log.dirs=/tmp/kraft-logs-` + id + "\n"
		p, err := ParseProperties(three)
		if err != nil {
			t.Fatal(err)
		}
		c, err := New(p, true)
		if err != nil {
			t.Fatalf("node %s: %v", id, err)
		}
		if len(c.Voters) != 3 || c.Voters[2] != (VoterAddr{3, "localhost", 9094}) {
			t.Errorf("voters %+v", c.Voters)
		}
	}
}

const baseConfig = `node.id=1
process.roles=controller
listeners=CONTROLLER://127.0.0.1:9093
controller.listener.names=CONTROLLER
controller.quorum.voters=1@127.0.0.1:9093,2@127.0.0.1:9094,3@[::1]:9095
log.dirs=/tmp/a,/tmp/b
`

func TestConfigValidation(t *testing.T) {
	tests := []struct {
		name      string
		overrides map[string]string // "" value with key "-" prefix deletes
		wantErr   []string          // substrings of the error
		check     func(t *testing.T, c *Config)
	}{
		{name: "base", check: func(t *testing.T, c *Config) {
			if c.MetadataLogDir != "/tmp/a" || !reflect.DeepEqual(c.LogDirs, []string{"/tmp/a", "/tmp/b"}) {
				t.Errorf("dirs %q %q", c.LogDirs, c.MetadataLogDir)
			}
			if c.Voters[2] != (VoterAddr{3, "::1", 9095}) {
				t.Errorf("ipv6 voter %+v", c.Voters[2])
			}
			if !c.IsVoter() || !c.IsController() {
				t.Error("not a voter controller")
			}
		}},
		{name: "authorizer refused", overrides: map[string]string{"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer"},
			wantErr: []string{"authorizer.class.name: kraftd cannot load Java classes"}},
		{name: "policies refused", overrides: map[string]string{"alter.config.policy.class.name": "a.P", "create.topic.policy.class.name": "b.P"},
			wantErr: []string{"alter.config.policy.class.name: kraftd cannot", "create.topic.policy.class.name: kraftd cannot"}},
		{name: "empty authorizer allowed", overrides: map[string]string{"authorizer.class.name": " "}},
		{name: "plugged keys on a standby-only node", overrides: map[string]string{"authorizer.class.name": "x.A", ActiveControllerKey: "false"},
			check: func(t *testing.T, c *Config) {
				if c.ActiveController {
					t.Error("active side on")
				}
			}},
		{name: "auto join", overrides: map[string]string{"controller.quorum.auto.join.enable": "TRUE"}, check: func(t *testing.T, c *Config) {
			if !c.AutoJoin {
				t.Error("controller.quorum.auto.join.enable=TRUE not read")
			}
		}},
		{name: "auto join not a boolean", overrides: map[string]string{"controller.quorum.auto.join.enable": "yes"},
			wantErr: []string{"controller.quorum.auto.join.enable"}},
		{name: "active controller, no leadership deferral by default", check: func(t *testing.T, c *Config) {
			if c.DeferLeadership || !c.ActiveController {
				t.Errorf("defaults: defer %v, active %v", c.DeferLeadership, c.ActiveController)
			}
			if c.MaxIdleIntervalMs != 500 || c.BrokerSessionTimeoutMs != 9000 || c.MinInsyncReplicas != "1" {
				t.Errorf("defaults: idle %d, session %d, min isr %q", c.MaxIdleIntervalMs, c.BrokerSessionTimeoutMs, c.MinInsyncReplicas)
			}
		}},
		{name: "leadership deferral alone: a plain voter", overrides: map[string]string{LeadershipDeferralKey: "true"}, check: func(t *testing.T, c *Config) {
			if !c.DeferLeadership || c.ActiveController {
				t.Errorf("%s=true: defer %v, active %v", LeadershipDeferralKey, c.DeferLeadership, c.ActiveController)
			}
		}},
		{name: "leadership deferral on without the active controller", overrides: map[string]string{ActiveControllerKey: "false"}, check: func(t *testing.T, c *Config) {
			if !c.DeferLeadership || c.ActiveController {
				t.Errorf("%s=false: defer %v, active %v", ActiveControllerKey, c.DeferLeadership, c.ActiveController)
			}
		}},
		{name: "leadership deferral off", overrides: map[string]string{LeadershipDeferralKey: "false"}, check: func(t *testing.T, c *Config) {
			if c.DeferLeadership || len(c.Warnings) != 0 {
				t.Errorf("%s=false: defer %v, warnings %q", LeadershipDeferralKey, c.DeferLeadership, c.Warnings)
			}
		}},
		{name: "leadership deferral not a boolean", overrides: map[string]string{LeadershipDeferralKey: "1"},
			wantErr: []string{LeadershipDeferralKey + `: "1" is not true or false`}},
		{name: "leader fsync deferral on by default", check: func(t *testing.T, c *Config) {
			if !c.DeferLeaderFsync {
				t.Error("leader fsync deferral is off by default")
			}
		}},
		{name: "leader fsync deferral off", overrides: map[string]string{LeaderFsyncDeferralKey: "false"}, check: func(t *testing.T, c *Config) {
			if c.DeferLeaderFsync {
				t.Errorf("%s=false not read", LeaderFsyncDeferralKey)
			}
		}},
		{name: "leader fsync deferral not a boolean", overrides: map[string]string{LeaderFsyncDeferralKey: "on"},
			wantErr: []string{LeaderFsyncDeferralKey + `: "on" is not true or false`}},
		{name: "fetch pacing 1.5 ms from 16 MiB/s by default", check: func(t *testing.T, c *Config) {
			if c.FetchPace != 1500*time.Microsecond || c.FetchPaceRate != 16<<20 {
				t.Errorf("default fetch pace %v from %d bytes/s", c.FetchPace, c.FetchPaceRate)
			}
		}},
		{name: "fetch pacing off", overrides: map[string]string{FetchPaceKey: "0"}, check: func(t *testing.T, c *Config) {
			if c.FetchPace != 0 {
				t.Errorf("%s=0: pace %v", FetchPaceKey, c.FetchPace)
			}
		}},
		{name: "fetch pacing set", overrides: map[string]string{FetchPaceKey: "2500", FetchPaceRateKey: "65536"}, check: func(t *testing.T, c *Config) {
			if c.FetchPace != 2500*time.Microsecond || c.FetchPaceRate != 65536 {
				t.Errorf("fetch pace %v from %d bytes/s, want 2.5ms from 65536", c.FetchPace, c.FetchPaceRate)
			}
		}},
		{name: "fetch pace above its range", overrides: map[string]string{FetchPaceKey: "100001"},
			wantErr: []string{FetchPaceKey + "=100001: want 0 (no pacing) to 100000"}},
		{name: "fetch pace not below the fetch timeout", overrides: map[string]string{FetchPaceKey: "2000", "controller.quorum.fetch.timeout.ms": "2"},
			wantErr: []string{FetchPaceKey + "=2000: must be below controller.quorum.fetch.timeout.ms (2)"}},
		{name: "fetch pace negative", overrides: map[string]string{FetchPaceKey: "-1"},
			wantErr: []string{FetchPaceKey + ": -1 is below the minimum 0"}},
		{name: "fetch pace rate zero", overrides: map[string]string{FetchPaceRateKey: "0"},
			wantErr: []string{FetchPaceRateKey + ": 0 is below the minimum 1"}},
		{name: "scheduler slice 100 us by default", check: func(t *testing.T, c *Config) {
			if c.SchedulerSlice != 100*time.Microsecond {
				t.Errorf("default slice %v", c.SchedulerSlice)
			}
		}},
		{name: "scheduler slice the kernel's", overrides: map[string]string{SchedulerSliceKey: "0"}, check: func(t *testing.T, c *Config) {
			if c.SchedulerSlice != 0 {
				t.Errorf("%s=0: slice %v", SchedulerSliceKey, c.SchedulerSlice)
			}
		}},
		{name: "scheduler slice 3 ms", overrides: map[string]string{SchedulerSliceKey: "3000"}, check: func(t *testing.T, c *Config) {
			if c.SchedulerSlice != 3*time.Millisecond {
				t.Errorf("%s=3000: slice %v", SchedulerSliceKey, c.SchedulerSlice)
			}
		}},
		{name: "scheduler slice below the kernel's range", overrides: map[string]string{SchedulerSliceKey: "99"},
			wantErr: []string{SchedulerSliceKey + "=99: want 0 (the kernel's) or 100 to 100000"}},
		{name: "scheduler slice above the kernel's range", overrides: map[string]string{SchedulerSliceKey: "100001"},
			wantErr: []string{SchedulerSliceKey + "=100001"}},
		{name: "scheduler slice negative", overrides: map[string]string{SchedulerSliceKey: "-5"},
			wantErr: []string{SchedulerSliceKey + ": -5 is below the minimum 0"}},
		{name: "node not in voters", overrides: map[string]string{"node.id": "7"}, wantErr: []string{"node.id: 7 is not in controller.quorum.voters"}},
		{name: "observer as broker", overrides: map[string]string{"node.id": "7", "process.roles": "broker", "listeners": "PLAINTEXT://127.0.0.1:0"}, check: func(t *testing.T, c *Config) {
			if c.IsController() || c.IsVoter() {
				t.Error("observer reported as controller or voter")
			}
		}},
		{name: "duplicate voter", overrides: map[string]string{"controller.quorum.voters": "1@h:1,2@h:2,1@h:3"}, wantErr: []string{"duplicate voter id 1"}},
		{name: "voter without id", overrides: map[string]string{"controller.quorum.voters": "1@h:1,h:2"}, wantErr: []string{`malformed entry "h:2"`}},
		{name: "voter bad id", overrides: map[string]string{"controller.quorum.voters": "1@h:1,x@h:2"}, wantErr: []string{`voter id "x"`}},
		{name: "voter no port", overrides: map[string]string{"controller.quorum.voters": "1@h"}, wantErr: []string{"has no port"}},
		{name: "voter bad port", overrides: map[string]string{"controller.quorum.voters": "1@h:70000"}, wantErr: []string{"not a number in 0-65535"}},
		{name: "voter non-routable", overrides: map[string]string{"controller.quorum.voters": "1@0.0.0.0:9093"}, wantErr: []string{"non-routable"}},
		{name: "voter two @", overrides: map[string]string{"controller.quorum.voters": "1@2@h:3"}, wantErr: []string{"malformed entry"}},
		{name: "no voters", overrides: map[string]string{"-controller.quorum.voters": ""}, wantErr: []string{"Missing kraft bootstrap servers"}},
		{name: "dynamic controller: bootstrap servers only", overrides: map[string]string{"-controller.quorum.voters": "",
			"controller.quorum.bootstrap.servers": "127.0.0.1:9093", "node.id": "7"}, check: func(t *testing.T, c *Config) {
			if !c.IsController() || c.IsVoter() || len(c.Voters) != 0 || len(c.BootstrapServers) != 1 {
				t.Errorf("controller=%v voter=%v voters=%v bootstrap=%v", c.IsController(), c.IsVoter(), c.Voters, c.BootstrapServers)
			}
		}},
		{name: "both keys: a controller must still be a static voter", overrides: map[string]string{
			"controller.quorum.bootstrap.servers": "127.0.0.1:9093", "node.id": "7"}, wantErr: []string{"node.id: 7 is not in controller.quorum.voters"}},
		{name: "listener missing from controller names", overrides: map[string]string{"listeners": "CONTROLLER://127.0.0.1:9093,PLAINTEXT://127.0.0.1:9092"},
			wantErr: []string{"listeners: PLAINTEXT is missing from controller.listener.names"}},
		{name: "controller name not a listener", overrides: map[string]string{"controller.listener.names": "CTRL"},
			wantErr: []string{"controller.listener.names: CTRL does not appear in listeners", "CONTROLLER is missing"}},
		{name: "controller names required", overrides: map[string]string{"-controller.listener.names": ""}, wantErr: []string{"controller.listener.names: required"}},
		{name: "lower-case names normalised", overrides: map[string]string{"listeners": "controller://127.0.0.1:9093", "controller.listener.names": "Controller"},
			check: func(t *testing.T, c *Config) {
				if c.RaftListener() != "CONTROLLER" || c.Listeners[0].Name != "CONTROLLER" {
					t.Errorf("names %+v", c.Listeners)
				}
			}},
		{name: "malformed listener", overrides: map[string]string{"listeners": "CONTROLLER:/127.0.0.1:9093"}, wantErr: []string{"malformed listener"}},
		{name: "duplicate listener port", overrides: map[string]string{"listeners": "CONTROLLER://:9093,C2://:9093", "controller.listener.names": "CONTROLLER,C2"}, wantErr: []string{"same port 9093"}},
		{name: "unknown protocol refused", overrides: map[string]string{"listener.security.protocol.map": "CONTROLLER:TRACE"},
			wantErr: []string{"Invalid security protocol `TRACE` defined in listener.security.protocol.map"}},
		{name: "listener missing from the map", overrides: map[string]string{"listener.security.protocol.map": "OTHER:SSL"},
			wantErr: []string{"No security protocol defined for listener CONTROLLER"}},
		{name: "ssl needs a key store", overrides: map[string]string{"listener.security.protocol.map": "CONTROLLER:SSL"},
			wantErr: []string{"listener CONTROLLER (SSL): ssl.keystore.location: an SSL listener needs a key store"}},
		{name: "ssl and sasl settings resolved", overrides: map[string]string{"listener.security.protocol.map": "CONTROLLER:SASL_SSL",
			"listener.name.controller.ssl.keystore.location": "/ks.p12", "ssl.keystore.password": "pw",
			"listener.name.controller.sasl.enabled.mechanisms": "PLAIN", "sasl.mechanism.controller.protocol": "PLAIN",
			"listener.name.controller.plain.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b" user_a="b";`},
			check: func(t *testing.T, c *Config) {
				ls := c.ListenerSecurity["CONTROLLER"]
				if ls == nil || ls.Protocol != "SASL_SSL" || ls.SSL.KeystoreLocation != "/ks.p12" || ls.SASL.JAAS["PLAIN"].PlainUsers()["a"] != "b" {
					t.Errorf("listener security %+v", ls)
				}
				if o := c.OutboundSecurity; o == nil || o.SASL.ClientUsername != "a" || o.SSL.KeystorePassword != "pw" {
					t.Errorf("outbound security %+v", o)
				}
				if len(c.Warnings) != 0 {
					t.Errorf("security keys warned about: %q", c.Warnings)
				}
			}},
		{name: "advertised overrides", overrides: map[string]string{"listeners": "CONTROLLER://0.0.0.0:9093", "advertised.listeners": "CONTROLLER://node1.example:9093"},
			check: func(t *testing.T, c *Config) {
				if got := c.AdvertisedControllerListeners(); len(got) != 1 || got[0].Host != "node1.example" {
					t.Errorf("advertised %+v", got)
				}
				if got := c.ControllerListeners(); got[0].Host != "0.0.0.0" {
					t.Errorf("bind %+v", got)
				}
			}},
		{name: "advertised 0.0.0.0", overrides: map[string]string{"advertised.listeners": "CONTROLLER://0.0.0.0:9093"}, wantErr: []string{"non-routable"}},
		{name: "node id required", overrides: map[string]string{"-node.id": ""}, wantErr: []string{"node.id: required"}},
		{name: "node id not int", overrides: map[string]string{"node.id": "one"}, wantErr: []string{`node.id: "one" is not an integer`}},
		{name: "bad role", overrides: map[string]string{"process.roles": "controller,leader"}, wantErr: []string{`unknown role "leader"`}},
		{name: "timeouts", overrides: map[string]string{"controller.quorum.election.timeout.ms": "150", "controller.quorum.append.linger.ms": "0", "controller.quorum.fetch.timeout.ms": "300"},
			check: func(t *testing.T, c *Config) {
				if c.ElectionTimeout != 150*time.Millisecond || c.AppendLinger != 0 || c.FetchTimeout != 300*time.Millisecond {
					t.Errorf("%v %v %v", c.ElectionTimeout, c.AppendLinger, c.FetchTimeout)
				}
			}},
		{name: "negative linger", overrides: map[string]string{"controller.quorum.append.linger.ms": "-1"}, wantErr: []string{"below the minimum 0"}},
		{name: "zero election timeout", overrides: map[string]string{"controller.quorum.election.timeout.ms": "0"}, wantErr: []string{"election.timeout.ms: 0 is below"}},
		{name: "segment below min", overrides: map[string]string{"metadata.log.segment.bytes": "1024"}, wantErr: []string{"below metadata.log.segment.min.bytes"}},
		{name: "segment min lowered", overrides: map[string]string{"metadata.log.segment.bytes": "1024", "metadata.log.segment.min.bytes": "100"},
			check: func(t *testing.T, c *Config) {
				if c.SegmentBytes != 1024 {
					t.Error(c.SegmentBytes)
				}
			}},
		{name: "metadata dir", overrides: map[string]string{"metadata.log.dir": "/tmp/meta/"}, check: func(t *testing.T, c *Config) {
			if c.MetadataLogDir != "/tmp/meta" {
				t.Error(c.MetadataLogDir)
			}
		}},
		{name: "duplicate log dir", overrides: map[string]string{"log.dirs": "/tmp/a,/tmp/a/"}, wantErr: []string{"appears more than once"}},
		{name: "unknown key warns", overrides: map[string]string{"controller.quorum.votres": "x", "num.io.threads": "8"}, check: func(t *testing.T, c *Config) {
			if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], `"controller.quorum.votres"`) {
				t.Errorf("warnings %q", c.Warnings)
			}
		}},
		{name: "bootstrap servers parse", overrides: map[string]string{"controller.quorum.bootstrap.servers": "127.0.0.1:9093, [::1]:9094"}, check: func(t *testing.T, c *Config) {
			if len(c.BootstrapServers) != 2 || c.BootstrapServers[1].Host != "::1" {
				t.Errorf("%+v", c.BootstrapServers)
			}
		}},
		{name: "several problems reported together", overrides: map[string]string{"node.id": "x", "controller.quorum.voters": "1@h:1,1@h:2"},
			wantErr: []string{"problems", "not an integer", "duplicate voter id 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParseProperties(baseConfig)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.overrides {
				if strings.HasPrefix(k, "-") {
					delete(p.Values, k[1:])
					continue
				}
				p.Set(k, v)
			}
			c, err := New(p, false)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("want error containing %q", tt.wantErr)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				tt.check(t, c)
			}
		})
	}
}

func TestParseOverride(t *testing.T) {
	k, v, err := ParseOverride("controller.quorum.append.linger.ms=0")
	if err != nil || k != "controller.quorum.append.linger.ms" || v != "0" {
		t.Fatal(k, v, err)
	}
	if k, v, err := ParseOverride("a=b=c"); err != nil || k != "a" || v != "b=c" {
		t.Fatal(k, v, err)
	}
	for _, bad := range []string{"novalue", "=x"} {
		if _, _, err := ParseOverride(bad); err == nil {
			t.Errorf("%q: want error", bad)
		}
	}
}

func TestLoadAppliesOverrides(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(path, []byte(baseConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path, []string{"node.id=2", "extra.key=x"})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := p.Get("node.id"); v != "2" || p.Lines["node.id"] != 0 {
		t.Fatalf("node.id %q at line %d, want the override without a line", v, p.Lines["node.id"])
	}
	c, err := New(p, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "from --override") {
		t.Errorf("warnings %q", c.Warnings)
	}
	if _, err := Load(path, []string{"novalue"}); err == nil {
		t.Error("malformed override: want error")
	}
}

// RawLogDirs finds the directories of a file that does not validate.
func TestRawLogDirs(t *testing.T) {
	p, err := ParseProperties("log.dir=/a, /b\nmetadata.log.dir=/m\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := RawLogDirs(p); !reflect.DeepEqual(got, []string{"/a", "/b", "/m"}) {
		t.Fatalf("dirs %q", got)
	}
}
