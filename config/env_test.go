package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestEnvKey(t *testing.T) {
	tests := []struct {
		name, key string
		ok        bool
	}{
		{"KAFKA_PROCESS_ROLES", "process.roles", true},
		{"KAFKA_CONTROLLER_QUORUM_VOTERS", "controller.quorum.voters", true},
		{"KAFKA_LISTENER_NAME_CONTROLLER_SSL_KEYSTORE_LOCATION", "listener.name.controller.ssl.keystore.location", true},
		// ___ is a dash, __ an underscore.
		{"KAFKA_LISTENER_NAME_SASL___SSL_PLAIN_SASL__JAAS__CONFIG", "listener.name.sasl-ssl.plain.sasl_jaas_config", true},
		{"KAFKA_A____B", "a-.b", true}, // four: the dash is taken first, as String.replace does
		{"KAFKA_node_id", "node.id", true},
		{"KAFKA_KAFKA_X", "kafka.x", true}, // only the prefix is dropped
		{"KAFKA_JMX_PORT", "jmx.port", true},
		{"KAFKA_HEAP_OPTS", "", false},
		{"KAFKA_OPTS", "", false},
		{"KAFKA_LOG4J_LOGGERS", "", false},
		{"KAFKA_JMX_HOSTNAME", "", false},
		{"kafka_node_id", "", false},
		{"CLUSTER_ID", "", false},
		{"PATH", "", false},
	}
	for _, tt := range tests {
		key, ok := EnvKey(tt.name)
		if key != tt.key || ok != tt.ok {
			t.Errorf("EnvKey(%q) = %q, %v; want %q, %v", tt.name, key, ok, tt.key, tt.ok)
		}
	}
}

func TestFromEnviron(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		want    map[string]string
		keys    []string
		wantErr string
	}{
		{name: "controller", environ: []string{
			"PATH=/bin", "KAFKA_NODE_ID=1", "KAFKA_PROCESS_ROLES=controller", "CLUSTER_ID=x",
			"KAFKA_CONTROLLER_QUORUM_VOTERS=1@c1:9093,2@c2:9093", "KAFKA_HEAP_OPTS=-Xmx1G",
		}, want: map[string]string{"node.id": "1", "process.roles": "controller", "controller.quorum.voters": "1@c1:9093,2@c2:9093"},
			keys: []string{"node.id", "process.roles", "controller.quorum.voters"}},
		{name: "none", environ: []string{"HOME=/root"}, want: map[string]string{}},
		{name: "empty value kept", environ: []string{"KAFKA_ADVERTISED_LISTENERS="}, want: map[string]string{"advertised.listeners": ""}},
		{name: "value keeps = and blanks", environ: []string{"KAFKA_SASL_JAAS_CONFIG=a=b c "}, want: map[string]string{"sasl.jaas.config": "a=b c "}},
		{name: "escapes as in a properties file", environ: []string{`KAFKA_A=x\u0041\\y\:`}, want: map[string]string{"a": `xA\y:`}},
		{name: "last of a repeated name wins", environ: []string{"KAFKA_NODE_ID=1", "KAFKA_NODE_ID=2"}, want: map[string]string{"node.id": "2"}},
		{name: "listeners derived from advertised listeners on a broker", environ: []string{
			"KAFKA_PROCESS_ROLES=broker", "KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://b1:9092,SSL://b1.example.com:9094",
		}, want: map[string]string{"process.roles": "broker", "advertised.listeners": "PLAINTEXT://b1:9092,SSL://b1.example.com:9094",
			"listeners": "PLAINTEXT://0.0.0.0:9092,SSL://0.0.0.0:9094"}},
		{name: "empty listeners derived too", environ: []string{"KAFKA_LISTENERS=", "KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://h:1"},
			want: map[string]string{"listeners": "PLAINTEXT://0.0.0.0:1", "advertised.listeners": "PLAINTEXT://h:1"}},
		{name: "no derivation on a controller", environ: []string{"KAFKA_PROCESS_ROLES=controller", "KAFKA_ADVERTISED_LISTENERS=CONTROLLER://c1:9093"},
			want: map[string]string{"process.roles": "controller", "advertised.listeners": "CONTROLLER://c1:9093"}},
		{name: "no derivation over given listeners", environ: []string{"KAFKA_LISTENERS=PLAINTEXT://:9092", "KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://h:9092"},
			want: map[string]string{"listeners": "PLAINTEXT://:9092", "advertised.listeners": "PLAINTEXT://h:9092"}},
		{name: "no key", environ: []string{"KAFKA_=1"}, wantErr: "environment variable KAFKA_: no configuration key"},
		{name: "blank in name", environ: []string{"KAFKA_NODE ID=1"}, wantErr: `environment variable KAFKA_NODE ID: key "node id"`},
		{name: "separator in name", environ: []string{"KAFKA_A:B=1"}, wantErr: "environment variable KAFKA_A:B"},
		{name: "two names one key", environ: []string{"KAFKA_NODE_ID=1", "KAFKA_node_id=2"}, wantErr: "KAFKA_NODE_ID, KAFKA_node_id each set node.id; keep one"},
		{name: "line break", environ: []string{"KAFKA_A=1\nnode.id=7"}, wantErr: "environment variable KAFKA_A: the value holds a line break"},
		{name: "carriage return", environ: []string{"KAFKA_A=1\r"}, wantErr: "KAFKA_A: the value holds a line break"},
		{name: "trailing backslash", environ: []string{`KAFKA_A=1\`}, wantErr: "KAFKA_A: the value ends in a lone backslash"},
		{name: "bad escape", environ: []string{`KAFKA_A=\u12`}, wantErr: "environment variable KAFKA_A:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := FromEnviron(tt.environ)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p.Values, tt.want) {
				t.Fatalf("values = %v, want %v", p.Values, tt.want)
			}
			if tt.keys != nil && !reflect.DeepEqual(p.Keys, tt.keys) {
				t.Fatalf("keys = %v, want %v", p.Keys, tt.keys)
			}
		})
	}
}

// TestComposeLayers: the environment overrides the file, --override both,
// and a warning about an unknown key names where it came from.
func TestComposeLayers(t *testing.T) {
	file, err := ParseProperties("node.id=1\nprocess.roles=controller\nlisteners=CONTROLLER://:9093\n" +
		"controller.listener.names=CONTROLLER\ncontroller.quorum.voters=1@localhost:9093\nlog.dirs=/data\ntypo.in.file=1\n")
	if err != nil {
		t.Fatal(err)
	}
	env, err := FromEnviron([]string{"KAFKA_NODE_ID=2", "KAFKA_CONTROLLER_QUORUM_VOTERS=2@localhost:9093", "KAFKA_HOME=/opt/kafka", "KAFKA_LOG_DIRS=/env"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compose(file, env, []string{"log.dirs=/flag"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := New(p, false)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.NodeID != 2 || !reflect.DeepEqual(cfg.LogDirs, []string{"/flag"}) {
		t.Fatalf("node %d dirs %v: want node 2 from the environment, dirs from --override", cfg.NodeID, cfg.LogDirs)
	}
	want := []string{
		`unknown configuration key "home" (from environment variable KAFKA_HOME) is ignored`,
		`unknown configuration key "typo.in.file" (line 7) is ignored`,
	}
	if !reflect.DeepEqual(cfg.Warnings, want) {
		t.Fatalf("warnings %q, want %q", cfg.Warnings, want)
	}
	if _, err := Compose(nil, env, []string{"=x"}); err == nil {
		t.Fatal("a bad --override was accepted")
	}
}

func TestDefaultPropertiesAreValid(t *testing.T) {
	cfg, err := New(DefaultProperties(), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 0 || cfg.NodeID != 1 || !cfg.IsController() || len(cfg.Voters) != 1 {
		t.Fatalf("default config: %+v", cfg)
	}
}
