package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/network"
)

// DefaultLivenessTimeout is how long the run loop may go without turning
// before /livez fails: it turns at least once a second, so only a loop
// stuck (a hung disk, a deadlock) fails it.
const DefaultLivenessTimeout = 10 * time.Second

// Metrics is one node's registry, the Raft observer feeding it, and the
// HTTP handler serving it with the health endpoints.
type Metrics struct {
	reg      *prometheus.Registry
	raft     *Raft
	requests *requests
	src      Source
	lastTurn func() time.Time
	now      func() time.Time
}

// New builds a node's metrics: src gives the published View, lastTurn when
// the run loop last turned.
func New(src Source, lastTurn func() time.Time) *Metrics {
	return newMetrics(src, lastTurn, time.Now)
}

func newMetrics(src Source, lastTurn func() time.Time, now func() time.Time) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), raft: newRaft(now), requests: newRequests(),
		src: src, lastTurn: lastTurn, now: now}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		kafkaCollector{src: src, r: m.raft}, nodeCollector{src: src, r: m.raft})
	m.reg.MustRegister(m.raft.collectors()...)
	m.reg.MustRegister(m.requests.collectors()...)
	return m
}

// Raft is the raft.Observer and loop recorder feeding the registry.
func (m *Metrics) Raft() *Raft { return m.raft }

// OnRequest is the network server's request hook (ServerConfig.OnRequest).
func (m *Metrics) OnRequest(d network.RequestDone) { m.requests.observe(d) }

// Registry is the registry scraped at /metrics.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// HandlerOptions configure the HTTP endpoints.
type HandlerOptions struct {
	FetchTimeout    time.Duration // controller.quorum.fetch.timeout.ms, for /readyz
	LivenessTimeout time.Duration // 0: DefaultLivenessTimeout
	Pprof           bool          // serve /debug/pprof/
	Logger          *zap.Logger
}

// Handler serves /metrics, /livez, /readyz and, when enabled, /debug/pprof/.
func (m *Metrics) Handler(o HandlerOptions) http.Handler {
	if o.LivenessTimeout <= 0 {
		o.LivenessTimeout = DefaultLivenessTimeout
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		MaxRequestsInFlight: 4, Timeout: 10 * time.Second, ErrorLog: zapPrinter{o.Logger}}))
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) {
		h := Liveness(m.lastTurn(), m.now(), o.LivenessTimeout)
		if v, ok := m.src(); ok {
			h.State, h.Epoch, h.LeaderID = KafkaState(v.Status), v.Status.Epoch, v.Status.LeaderID
			h.HighWatermark, h.LogEndOffset = v.Status.HighWatermark, v.Status.LogEndOffset
		}
		writeHealth(w, h)
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		v, ok := m.src()
		if !ok {
			writeHealth(w, Health{Reason: "starting: no raft state yet", LeaderID: -1, HighWatermark: -1})
			return
		}
		writeHealth(w, Readiness(v.Status, m.now(), o.FetchTimeout))
	})
	if o.Pprof {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// zapPrinter lets promhttp log its errors through zap.
type zapPrinter struct{ lg *zap.Logger }

func (p zapPrinter) Println(v ...any) {
	if p.lg != nil {
		p.lg.Warn("metrics: " + fmt.Sprint(v...))
	}
}

// Server is the HTTP listener of the metrics and health endpoints.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan error
}

// Listen binds addr (host:port; port 0 picks one) and serves h on it.
func Listen(addr string, h http.Handler, lg *zap.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener %s: %w", addr, err)
	}
	if lg == nil {
		lg = zap.NewNop()
	}
	s := &Server{
		srv: &http.Server{
			Handler: h,
			// Bounded everywhere: a scraper that stalls must not hold a
			// connection, nor a slow reader a goroutine (a CPU profile
			// takes its seconds= argument, 30 s by default, in the write).
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       10 * time.Second,
			WriteTimeout:      60 * time.Second,
			IdleTimeout:       60 * time.Second,
			MaxHeaderBytes:    16 << 10,
			ErrorLog:          zap.NewStdLog(lg.Named("http")),
		},
		ln:   ln,
		done: make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the bound address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops accepting and waits, bounded by ctx, for open requests.
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
