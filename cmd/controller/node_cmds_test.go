package main

import (
	"strings"
	"testing"

	"github.com/kraftd/kraftd/config"
)

// --metrics-listener overrides kraftd.metrics.listener, with the key's checks.
func TestMetricsListenerFlag(t *testing.T) {
	p, err := config.ParseProperties("node.id=1\nprocess.roles=controller\nlisteners=CONTROLLER://127.0.0.1:9093\n" +
		"controller.listener.names=CONTROLLER\ncontroller.quorum.voters=1@127.0.0.1:9093\nlog.dirs=/tmp/x\n" +
		"kraftd.metrics.listener=http://127.0.0.1:9404\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flag, want, err string
	}{
		{flag: "", want: "127.0.0.1:9404"},
		{flag: "http://0.0.0.0:9500", want: "0.0.0.0:9500"},
		{flag: "https://127.0.0.1:9500", err: `--metrics-listener: "https://127.0.0.1:9500": scheme "https" is not served`},
		{flag: "http://127.0.0.1:9093", err: "--metrics-listener: 127.0.0.1:9093 is the address of Kafka listener CONTROLLER"},
	} {
		cfg, err := config.New(p, false)
		if err != nil {
			t.Fatal(err)
		}
		f := nodeFlags{metricsListener: c.flag}
		err = f.applyMetricsListener(cfg)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want %q", c.flag, err, c.err)
		case c.err == "" && (err != nil || cfg.MetricsListener != c.want):
			t.Errorf("%q: listener %q (%v), want %q", c.flag, cfg.MetricsListener, err, c.want)
		}
	}
}
