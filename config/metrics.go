package config

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
)

// Keys of kraftd's HTTP listener for metrics and health (off by default).
const (
	// MetricsListenerKey is http://HOST:PORT of /metrics, /livez and
	// /readyz; port 0 picks a free port.
	MetricsListenerKey = "kraftd.metrics.listener"
	// MetricsPprofKey also serves /debug/pprof on that listener (or on
	// the one --metrics-listener gives).
	MetricsPprofKey = "kraftd.metrics.pprof.enable"
)

var metricsKeys = []string{MetricsListenerKey, MetricsPprofKey}

// readMetrics reads the metrics listener. It runs after readListeners: the
// metrics listener must not take a Kafka listener's address.
func (c *Config) readMetrics(r *reader) {
	c.MetricsPprof = r.bool(MetricsPprofKey, false)
	v := r.get(MetricsListenerKey, "") // pprof alone waits for --metrics-listener
	if v == "" {
		return
	}
	addr, err := ParseMetricsListener(v)
	if err == nil {
		err = c.CheckMetricsAddr(addr)
	}
	if err != nil {
		r.bad("%s: %v", MetricsListenerKey, err)
		return
	}
	c.MetricsListener = addr
}

// ParseMetricsListener turns http://HOST:PORT into HOST:PORT. Only plain
// http is served (put a proxy in front for TLS); an empty host binds every
// interface.
func ParseMetricsListener(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%q is not a URL: want http://HOST:PORT", s)
	}
	if u.Scheme != "http" {
		return "", fmt.Errorf("%q: scheme %q is not served; want http://HOST:PORT", s, u.Scheme)
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%q: want http://HOST:PORT with nothing else", s)
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return "", fmt.Errorf("%q: want http://HOST:PORT: %v", s, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("%q: port %q is not 0-65535", s, port)
	}
	return net.JoinHostPort(host, port), nil
}

// CheckMetricsAddr refuses a metrics address that is a Kafka listener's:
// the same port on the same host, or on any host when either binds every
// interface. Port 0 never collides.
func (c *Config) CheckMetricsAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if port == "0" {
		return nil
	}
	for _, l := range c.Listeners {
		if strconv.Itoa(l.Port) != port {
			continue
		}
		if host == l.Host || wildcardHost(host) || wildcardHost(l.Host) {
			return fmt.Errorf("%s is the address of Kafka listener %s (%s); metrics need an address of their own", addr, l.Name, l.HostPort())
		}
	}
	return nil
}

func wildcardHost(h string) bool { return h == "" || h == "0.0.0.0" || h == "::" }
