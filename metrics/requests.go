package metrics

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/network"
)

// requestBuckets span an in-memory answer to a Fetch parked for its
// MaxWaitMs (500 ms from Kafka's controllers) and beyond.
var requestBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}

// requests counts the network server's answered requests.
type requests struct {
	total    *prometheus.CounterVec   // listener, api
	errors   *prometheus.CounterVec   // api, error
	duration *prometheus.HistogramVec // api
	// series caches each (listener, api key)'s children: label lookups
	// hash strings, a cache hit costs a fraction of that.
	series sync.Map // seriesKey -> *apiSeries
}

type seriesKey struct {
	listener string
	api      int16
}

type apiSeries struct {
	name     string
	total    prometheus.Counter
	duration prometheus.Observer
}

func newRequests() *requests {
	return &requests{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kraftd_network_requests_total",
			Help: "Requests answered, by listener and api."}, []string{"listener", "api"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kraftd_network_request_errors_total",
			Help: "Requests answered with an error code (the top-level one, else the first of a partition), by api and Kafka error name; " +
				"error=\"CONNECTION_CLOSED\" counts requests answered by closing the connection."}, []string{"api", "error"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kraftd_network_request_duration_seconds",
			Help: "Time from a request's decoding to its answer (a parked Fetch included), by api.", Buckets: requestBuckets}, []string{"api"}),
	}
}

func (r *requests) collectors() []prometheus.Collector {
	return []prometheus.Collector{r.total, r.errors, r.duration}
}

func (r *requests) observe(d network.RequestDone) {
	s := r.seriesOf(d.Listener, d.APIKey)
	s.total.Inc()
	s.duration.Observe(d.Took.Seconds())
	if d.Response == nil {
		r.errors.WithLabelValues(s.name, "CONNECTION_CLOSED").Inc()
		return
	}
	if d.ErrorCode != 0 {
		r.errors.WithLabelValues(s.name, errorName(d.ErrorCode)).Inc()
	}
}

func (r *requests) seriesOf(listener string, key int16) *apiSeries {
	k := seriesKey{listener, key}
	if s, ok := r.series.Load(k); ok {
		return s.(*apiSeries)
	}
	name := kmsg.NameForKey(key)
	if name == "" {
		name = strconv.Itoa(int(key))
	}
	s, _ := r.series.LoadOrStore(k, &apiSeries{name: name, total: r.total.WithLabelValues(listener, name),
		duration: r.duration.WithLabelValues(name)})
	return s.(*apiSeries)
}

func errorName(code int16) string {
	// An unknown code maps to UNKNOWN_SERVER_ERROR there: keep the number.
	if ke := kerr.TypedErrorForCode(code); ke != nil && ke.Code == code {
		return ke.Message
	}
	return "UNKNOWN_" + strconv.Itoa(int(code))
}
