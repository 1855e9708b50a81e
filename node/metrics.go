package node

import (
	"context"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/metrics"
	"github.com/kraftd/kraftd/raft"
)

// viewPeriod is how often the loop samples what changes on every append
// (replication progress, log size) for scrapes; the raft status itself is
// published at every change.
const viewPeriod = 500 * time.Millisecond

// loopHeartbeat bounds the loop's sleep while metrics are on, so /livez
// tells a loop that is idle from one that is stuck.
const loopHeartbeat = time.Second

// observed is the node's metrics state; nil fields when metrics are off.
type observed struct {
	m      *metrics.Metrics
	http   *metrics.Server
	addr   atomic.Pointer[string]     // bound address, once listening
	detail atomic.Pointer[viewDetail] // sampled by the loop every viewPeriod
	turned atomic.Int64               // unix ns of the loop's latest round
	next   time.Time                  // loop only: when detail is due
}

// viewDetail is the part of a metrics.View the loop samples periodically.
type viewDetail struct {
	voters            []raft.ReplicaProgress
	logStart, logSize int64
	segments, parked  int
}

// newMetrics builds the registry when a metrics listener is configured:
// before the network and the driver, which report to it.
func (n *Node) newMetrics() {
	if n.cfg.MetricsListener == "" {
		return
	}
	o := &n.obs
	o.m = metrics.New(n.view, func() time.Time {
		if ns := o.turned.Load(); ns != 0 {
			return time.Unix(0, ns)
		}
		return time.Time{}
	})
	if c, ok := n.o.App.(interface {
		ControllerView() (metrics.ControllerView, bool)
	}); ok {
		o.m.AddController(c.ControllerView)
	}
}

// startMetrics binds the metrics listener.
func (n *Node) startMetrics() error {
	o := &n.obs
	if o.m == nil {
		return nil
	}
	h := o.m.Handler(metrics.HandlerOptions{FetchTimeout: n.cfg.FetchTimeout, Pprof: n.cfg.MetricsPprof, Logger: n.lg.Named("metrics")})
	srv, err := metrics.Listen(n.cfg.MetricsListener, h, n.lg.Named("metrics"))
	if err != nil {
		return err
	}
	o.http = srv
	addr := srv.Addr().String()
	o.addr.Store(&addr)
	n.lg.Info("metrics listener started", zap.Stringer("address", srv.Addr()), zap.Bool("pprof", n.cfg.MetricsPprof))
	return nil
}

func (n *Node) stopMetrics() {
	if n.obs.http == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := n.obs.http.Close(ctx); err != nil {
		n.lg.Warn("metrics listener shutdown", zap.Error(err))
	}
}

// MetricsAddr is the bound address of the metrics listener ("" when off or
// before Run bound it); safe from any goroutine.
func (n *Node) MetricsAddr() string {
	if a := n.obs.addr.Load(); a != nil {
		return *a
	}
	return ""
}

// view composes the metrics.View from what the loop published.
func (n *Node) view() (metrics.View, bool) {
	st := n.status.Load()
	if st == nil {
		return metrics.View{}, false
	}
	v := metrics.View{Status: *st}
	if d := n.obs.detail.Load(); d != nil {
		v.Voters, v.LogStartOffset, v.LogSizeBytes = d.voters, d.logStart, d.logSize
		v.LogSegments, v.ParkedFetches = d.segments, d.parked
	}
	if n.server != nil {
		v.Listeners = n.server.Stats()
	}
	if n.peers != nil {
		v.Peers = n.peers.States()
	}
	return v, true
}

// noteTurn runs on the loop each round while metrics are on: it stamps the
// turn for /livez and samples the view's detail when due. It returns the
// latest time the loop may sleep until.
func (n *Node) noteTurn(now time.Time) time.Time {
	o := &n.obs
	o.turned.Store(now.UnixNano())
	if !now.Before(o.next) {
		o.detail.Store(&viewDetail{
			voters:   n.driver.VoterProgress(now),
			logStart: n.log.StartOffset(), logSize: n.log.Size(), segments: len(n.log.SegmentBases()),
			parked: n.driver.ParkedFetches(),
		})
		o.next = now.Add(viewPeriod)
	}
	return now.Add(loopHeartbeat)
}

// timedLog times the metadata log's fsyncs for the metrics.
type timedLog struct {
	*metadatalog.Log
	r *metrics.Raft
}

func (l timedLog) Flush() error {
	start := time.Now()
	err := l.Log.Flush()
	l.r.Fsync(time.Since(start))
	return err
}
