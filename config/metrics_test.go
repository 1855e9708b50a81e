package config

import (
	"strings"
	"testing"
)

func TestMetricsListener(t *testing.T) {
	tests := []struct {
		name    string
		extra   string
		want    string // MetricsListener
		pprof   bool
		wantErr string // substring of the error; "" for none
	}{
		{name: "off by default"},
		{name: "host and port", extra: "kraftd.metrics.listener=http://127.0.0.1:9404", want: "127.0.0.1:9404"},
		{name: "every interface", extra: "kraftd.metrics.listener=http://:9404", want: ":9404"},
		{name: "ipv6", extra: "kraftd.metrics.listener=http://[::1]:9404", want: "[::1]:9404"},
		{name: "free port", extra: "kraftd.metrics.listener=http://127.0.0.1:0", want: "127.0.0.1:0"},
		{name: "pprof", extra: "kraftd.metrics.listener=http://127.0.0.1:9404\nkraftd.metrics.pprof.enable=true", want: "127.0.0.1:9404", pprof: true},
		{name: "https refused", extra: "kraftd.metrics.listener=https://127.0.0.1:9404",
			wantErr: `kraftd.metrics.listener: "https://127.0.0.1:9404": scheme "https" is not served`},
		{name: "no scheme", extra: "kraftd.metrics.listener=127.0.0.1:9404", wantErr: "kraftd.metrics.listener: "},
		{name: "no port", extra: "kraftd.metrics.listener=http://127.0.0.1", wantErr: "kraftd.metrics.listener: \"http://127.0.0.1\": want http://HOST:PORT"},
		{name: "bad port", extra: "kraftd.metrics.listener=http://127.0.0.1:99999", wantErr: `port "99999" is not 0-65535`},
		{name: "path", extra: "kraftd.metrics.listener=http://127.0.0.1:9404/metrics", wantErr: "with nothing else"},
		{name: "kafka listener's address", extra: "kraftd.metrics.listener=http://127.0.0.1:9093",
			wantErr: "kraftd.metrics.listener: 127.0.0.1:9093 is the address of Kafka listener CONTROLLER"},
		{name: "wildcard on a kafka port", extra: "kraftd.metrics.listener=http://0.0.0.0:9093", wantErr: "Kafka listener CONTROLLER"},
		{name: "same port other host", extra: "kraftd.metrics.listener=http://127.0.0.2:9093", want: "127.0.0.2:9093"},
		{name: "pprof alone", extra: "kraftd.metrics.pprof.enable=true", pprof: true},
		{name: "pprof not a boolean", extra: "kraftd.metrics.listener=http://127.0.0.1:0\nkraftd.metrics.pprof.enable=on",
			wantErr: `kraftd.metrics.pprof.enable: "on" is not true or false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParseProperties(baseConfig + tt.extra + "\n")
			if err != nil {
				t.Fatal(err)
			}
			c, err := New(p, false)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.MetricsListener != tt.want || c.MetricsPprof != tt.pprof {
				t.Errorf("listener %q pprof %v, want %q %v", c.MetricsListener, c.MetricsPprof, tt.want, tt.pprof)
			}
			if len(c.Warnings) != 0 {
				t.Errorf("warnings %q", c.Warnings)
			}
		})
	}
}
