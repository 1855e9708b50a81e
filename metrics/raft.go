package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Raft receives the raft driver's events (it is a raft.Observer) and the
// node loop's idle time and fsyncs: Kafka's sensors and kraftd's counters
// and histograms. Its methods are safe for concurrent use and cost a few
// atomics (Kafka's windows: a mutex).
type Raft struct {
	now func() time.Time

	commit, election, fetched, appended kafkaStat
	idle                                timeRatio

	commitHist, electionHist, fsyncHist prometheus.Histogram
	appendedTotal, fetchedTotal         prometheus.Counter
	snapshots, snapshotBytes, expired   prometheus.Counter
}

// latencyBuckets span a sub-millisecond fsync to a multi-second stall.
var latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// electionBuckets span a pre-vote won at once to a long split vote.
var electionBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

func newRaft(now func() time.Time) *Raft {
	return &Raft{
		now: now,
		commitHist: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kraftd_raft_commit_latency_seconds",
			Help: "Time from a leader's append of a batch to its commit (the high watermark passing it).", Buckets: latencyBuckets}),
		electionHist: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kraftd_raft_election_duration_seconds",
			Help: "Time from this node's latest Prospective or Candidate entry to its becoming Leader or Follower.", Buckets: electionBuckets}),
		fsyncHist: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kraftd_log_fsync_duration_seconds",
			Help: "Duration of each fsync of the metadata log.", Buckets: latencyBuckets}),
		appendedTotal: prometheus.NewCounter(prometheus.CounterOpts{Name: "kraftd_raft_appended_records_total",
			Help: "Records appended as leader."}),
		fetchedTotal: prometheus.NewCounter(prometheus.CounterOpts{Name: "kraftd_raft_fetched_records_total",
			Help: "Records appended as follower from the leader."}),
		snapshots: prometheus.NewCounter(prometheus.CounterOpts{Name: "kraftd_raft_snapshot_fetches_total",
			Help: "Snapshots downloaded from the leader and installed."}),
		snapshotBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "kraftd_raft_snapshot_fetched_bytes_total",
			Help: "Bytes of the snapshots downloaded from the leader and installed."}),
		expired: prometheus.NewCounter(prometheus.CounterOpts{Name: "kraftd_raft_purgatory_expirations_total",
			Help: "Fetches parked on the leader answered at their MaxWaitMs without new records."}),
	}
}

func (r *Raft) collectors() []prometheus.Collector {
	return []prometheus.Collector{r.commitHist, r.electionHist, r.fsyncHist, r.appendedTotal, r.fetchedTotal,
		r.snapshots, r.snapshotBytes, r.expired}
}

// ElectionFinished implements raft.Observer.
func (r *Raft) ElectionFinished(took time.Duration) {
	r.election.record(ms(took), r.now())
	r.electionHist.Observe(took.Seconds())
}

// Committed implements raft.Observer. Kafka's commit-latency records the
// batch's latency divided by its record count, stamped with the append
// time; the histogram keeps the batch's latency.
func (r *Raft) Committed(records int, took time.Duration) {
	r.commit.record(ms(took)/float64(max(records, 1)), r.now().Add(-took))
	r.commitHist.Observe(took.Seconds())
}

// Appended implements raft.Observer.
func (r *Raft) Appended(records int) {
	r.appended.record(float64(records), r.now())
	r.appendedTotal.Add(float64(records))
}

// Fetched implements raft.Observer.
func (r *Raft) Fetched(records int) {
	r.fetched.record(float64(records), r.now())
	r.fetchedTotal.Add(float64(records))
}

// SnapshotFetched implements raft.Observer.
func (r *Raft) SnapshotFetched(size int64) {
	r.snapshots.Inc()
	r.snapshotBytes.Add(float64(size))
}

// ParkedFetchExpired implements raft.Observer.
func (r *Raft) ParkedFetchExpired() { r.expired.Inc() }

// Idle records time the node's run loop waited for work (Kafka's
// poll-idle-ratio: its raft thread's wait for the next message).
func (r *Raft) Idle(waited time.Duration) { r.idle.record(waited, r.now()) }

// Fsync records one fsync of the metadata log.
func (r *Raft) Fsync(took time.Duration) { r.fsyncHist.Observe(took.Seconds()) }

// ms is Kafka's unit for latencies, fractional so sub-millisecond values
// are not lost (Kafka's clock has whole milliseconds).
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
