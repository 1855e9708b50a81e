// Package dashboards checks kraftd's Grafana dashboard (dashboards/kraftd.json at the
// repository's top): every PromQL query in it must read only metrics and labels a live
// kraftd node exposes, so a renamed metric breaks a test rather than a panel nobody looks
// at until an outage.
package dashboards
