package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

func nodeDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("kraftd_"+name, help, labels, nil)
}

var nodeDescs = struct {
	logStart, logSize, segments, parked, lag, fetchAge *prometheus.Desc
	conns, accepted, bytesIn, bytesOut, peer           *prometheus.Desc
}{
	logStart: nodeDesc("log_start_offset", "First offset held in the metadata log."),
	logSize:  nodeDesc("log_size_bytes", "Bytes of the metadata log's segments."),
	segments: nodeDesc("log_segments", "Segments of the metadata log."),
	parked:   nodeDesc("raft_purgatory_size", "Fetches parked on the leader waiting for records or their MaxWaitMs."),
	lag: nodeDesc("raft_voter_lag_records", "On the leader: its log end offset minus each voter's fetch offset "+
		"(the leader's log end offset while the voter's is unknown).", "voter"),
	fetchAge: nodeDesc("raft_voter_last_fetch_age_seconds", "On the leader: time since each voter's last fetch; absent while unknown.", "voter"),
	conns:    nodeDesc("network_connections", "Inbound connections open, by listener.", "listener"),
	accepted: nodeDesc("network_connections_accepted_total", "Inbound connections accepted, by listener.", "listener"),
	bytesIn:  nodeDesc("network_received_bytes_total", "Request bytes read, by listener.", "listener"),
	bytesOut: nodeDesc("network_sent_bytes_total", "Response bytes written, by listener.", "listener"),
	peer: nodeDesc("network_peer_connected", "1 while the outbound connection to a node is up, by node id "+
		"(bootstrap servers are -2, -3, ...).", "peer"),
}

// nodeCollector exports kraftd's gauges of the latest View.
type nodeCollector struct {
	src Source
	r   *Raft
}

func (c nodeCollector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }

func (c nodeCollector) Collect(ch chan<- prometheus.Metric) {
	v, ok := c.src()
	if !ok {
		return
	}
	d := &nodeDescs
	emit := func(desc *prometheus.Desc, t prometheus.ValueType, val float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, t, val, labels...)
	}
	emit(d.logStart, prometheus.GaugeValue, float64(v.LogStartOffset))
	emit(d.logSize, prometheus.GaugeValue, float64(v.LogSizeBytes))
	emit(d.segments, prometheus.GaugeValue, float64(v.LogSegments))
	emit(d.parked, prometheus.GaugeValue, float64(v.ParkedFetches))
	now := c.r.now()
	// The leader's own entry was sampled with the others: lags are
	// consistent even when the Status is newer.
	leo := v.Status.LogEndOffset
	for _, p := range v.Voters {
		if p.ID == v.Status.NodeID {
			leo = p.EndOffset
		}
	}
	for _, p := range v.Voters {
		id := strconv.Itoa(int(p.ID))
		lag := leo
		if p.EndOffset >= 0 {
			lag = max(leo-p.EndOffset, 0)
		}
		emit(d.lag, prometheus.GaugeValue, float64(lag), id)
		if !p.LastFetch.IsZero() {
			emit(d.fetchAge, prometheus.GaugeValue, max(now.Sub(p.LastFetch).Seconds(), 0), id)
		}
	}
	for _, l := range v.Listeners {
		emit(d.conns, prometheus.GaugeValue, float64(l.Open), l.Listener)
		emit(d.accepted, prometheus.CounterValue, float64(l.Accepted), l.Listener)
		emit(d.bytesIn, prometheus.CounterValue, float64(l.BytesIn), l.Listener)
		emit(d.bytesOut, prometheus.CounterValue, float64(l.BytesOut), l.Listener)
	}
	for _, p := range v.Peers {
		emit(d.peer, prometheus.GaugeValue, b2f(p.Connected), strconv.Itoa(int(p.ID)))
	}
}
