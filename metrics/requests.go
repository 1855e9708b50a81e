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
	if code := ResponseError(d.Response); code != 0 {
		r.errors.WithLabelValues(s.name, errorName(code)).Inc()
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

// ResponseError is a response's error code: the top-level one, else the
// first non-zero one of its partitions (raft's apis answer per partition).
func ResponseError(resp kmsg.Response) int16 {
	switch r := resp.(type) {
	case *kmsg.FetchResponse:
		return firstCode(r.ErrorCode, r.Topics, func(t kmsg.FetchResponseTopic) []kmsg.FetchResponseTopicPartition { return t.Partitions },
			func(p kmsg.FetchResponseTopicPartition) int16 { return p.ErrorCode })
	case *kmsg.VoteResponse:
		return firstCode(r.ErrorCode, r.Topics, func(t kmsg.VoteResponseTopic) []kmsg.VoteResponseTopicPartition { return t.Partitions },
			func(p kmsg.VoteResponseTopicPartition) int16 { return p.ErrorCode })
	case *kmsg.BeginQuorumEpochResponse:
		return firstCode(r.ErrorCode, r.Topics, func(t kmsg.BeginQuorumEpochResponseTopic) []kmsg.BeginQuorumEpochResponseTopicPartition {
			return t.Partitions
		},
			func(p kmsg.BeginQuorumEpochResponseTopicPartition) int16 { return p.ErrorCode })
	case *kmsg.EndQuorumEpochResponse:
		return firstCode(r.ErrorCode, r.Topics, func(t kmsg.EndQuorumEpochResponseTopic) []kmsg.EndQuorumEpochResponseTopicPartition {
			return t.Partitions
		},
			func(p kmsg.EndQuorumEpochResponseTopicPartition) int16 { return p.ErrorCode })
	case *kmsg.DescribeQuorumResponse:
		return firstCode(r.ErrorCode, r.Topics, func(t kmsg.DescribeQuorumResponseTopic) []kmsg.DescribeQuorumResponseTopicPartition {
			return t.Partitions
		},
			func(p kmsg.DescribeQuorumResponseTopicPartition) int16 { return p.ErrorCode })
	case *kmsg.FetchSnapshotResponse:
		return firstCode(r.ErrorCode, r.Topics, func(t kmsg.FetchSnapshotResponseTopic) []kmsg.FetchSnapshotResponseTopicPartition {
			return t.Partitions
		},
			func(p kmsg.FetchSnapshotResponseTopicPartition) int16 { return p.ErrorCode })
	}
	return topLevelCode(resp)
}

func firstCode[T, P any](top int16, topics []T, partitions func(T) []P, code func(P) int16) int16 {
	if top != 0 {
		return top
	}
	for _, t := range topics {
		for _, p := range partitions(t) {
			if c := code(p); c != 0 {
				return c
			}
		}
	}
	return 0
}

// topLevelCode reads the ErrorCode of the other responses kraftd answers.
func topLevelCode(resp kmsg.Response) int16 {
	switch r := resp.(type) {
	case *kmsg.ApiVersionsResponse:
		return r.ErrorCode
	case *kmsg.AddRaftVoterResponse:
		return r.ErrorCode
	case *kmsg.RemoveRaftVoterResponse:
		return r.ErrorCode
	case *kmsg.UpdateRaftVoterResponse:
		return r.ErrorCode
	case *kmsg.UpdateFeaturesResponse:
		return r.ErrorCode
	case *kmsg.SASLHandshakeResponse:
		return r.ErrorCode
	case *kmsg.SASLAuthenticateResponse:
		return r.ErrorCode
	}
	return 0
}
