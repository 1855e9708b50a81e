package metrics

import (
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ControllerView is what a scrape reads of a controller application: its
// committed image's figures and its own counters, published off the loop.
type ControllerView struct {
	Active bool
	// The committed image's counts (image.Counts).
	FencedBrokers, ActiveBrokers, ControlledShutdownBrokers     int
	Topics, Partitions, OfflinePartitions, ImbalancedPartitions int
	// Brokers is each registered broker's state: Kafka's
	// BrokerRegistrationState values (BrokerFenced, ...).
	Brokers []BrokerState
	// MetadataErrors counts replay and snapshot generation failures.
	MetadataErrors int64
	// LastAppliedOffset is the last record of the image the controller
	// decides on (appended, on the active controller; committed, on the
	// others), LastAppliedTimestampMs its batch's time; LastCommittedOffset
	// the last committed record (-1 before any).
	LastAppliedOffset, LastAppliedTimestampMs, LastCommittedOffset int64
	// NewActiveControllers counts leader changes naming a leader;
	// TimedOutHeartbeats heartbeats that waited past their deadline;
	// OperationsStarted the requests and periodic tasks the controller ran,
	// OperationsTimedOut those that waited past their deadline.
	NewActiveControllers, TimedOutHeartbeats, OperationsStarted, OperationsTimedOut int64
	// MetadataVersion is the finalized metadata.version level, 0 before one.
	MetadataVersion int16
	// ControllerID is the leader raft last reported, -1 when unknown.
	ControllerID  int32
	SnapshotLoads int64
	// Features are the finalized features, metadata.version included, by
	// Kafka's name ("metadata.version").
	Features []FeatureLevel
	// LatestSnapshotBytes and LatestSnapshotAt describe the latest snapshot
	// this node generated (0 and the start time before one).
	LatestSnapshotBytes int64
	LatestSnapshotAt    time.Time
}

// FeatureLevel is one finalized feature.
type FeatureLevel struct {
	Name  string
	Level int16
}

// BrokerState is one broker's Kafka BrokerRegistrationState.
type BrokerState struct {
	ID    int32
	State int
}

// Kafka's BrokerRegistrationState values.
const (
	BrokerFenced             = 10
	BrokerControlledShutdown = 20
	BrokerActive             = 30
)

// ControllerSource gives the latest ControllerView; false before one.
type ControllerSource func() (ControllerView, bool)

// AddController exports a controller's metrics under Kafka's names, the
// Prometheus JMX exporter's lowercased form of its yammer MBeans
// (kafka.controller:type=KafkaController,name=ActiveBrokerCount becomes
// kafka_controller_kafkacontroller_activebrokercount). Call it once, before
// serving.
func (m *Metrics) AddController(src ControllerSource) {
	m.reg.MustRegister(controllerCollector{src: src, now: m.now})
}

func yammerDesc(domain, typ, name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(domain+"_"+lower(typ)+"_"+lower(name), help, labels, nil)
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func kcDesc(name, help string, labels ...string) *prometheus.Desc {
	return yammerDesc("kafka_controller", "KafkaController", name, help, labels...)
}

var controllerDescs = struct {
	activeControllers, activeBrokers, fencedBrokers, shuttingBrokers          *prometheus.Desc
	topics, partitions, offline, imbalanced, brokerState, errors, lastApplied *prometheus.Desc
	lastCommitted, mv, controllerID, snapshotLoads, snapBytes, snapAge        *prometheus.Desc
	finalized, lastAppliedTs, lastAppliedLag, newActive, timedOutHeartbeats   *prometheus.Desc
	opsStarted, opsTimedOut                                                   *prometheus.Desc
}{
	activeControllers: kcDesc("ActiveControllerCount", "1 on the active controller, 0 on the others."),
	activeBrokers:     kcDesc("ActiveBrokerCount", "Registered brokers that are not fenced (in controlled shutdown or not)."),
	fencedBrokers:     kcDesc("FencedBrokerCount", "Registered brokers that are fenced."),
	shuttingBrokers:   kcDesc("ControlledShutdownBrokerCount", "Registered brokers in controlled shutdown."),
	topics:            kcDesc("GlobalTopicCount", "Topics in the committed metadata image."),
	partitions:        kcDesc("GlobalPartitionCount", "Partitions in the committed metadata image."),
	offline:           kcDesc("OfflinePartitionsCount", "Partitions without a leader."),
	imbalanced:        kcDesc("PreferredReplicaImbalanceCount", "Partitions whose leader is not their preferred (first) replica."),
	brokerState: kcDesc("BrokerRegistrationState", "Each registered broker's state: 10 fenced, 20 in controlled shutdown, 30 active.",
		"broker"),
	errors:         kcDesc("MetadataErrorCount", "Metadata replay and snapshot generation failures."),
	lastApplied:    kcDesc("LastAppliedRecordOffset", "Offset of the last record applied to the controller's image."),
	lastCommitted:  kcDesc("LastCommittedRecordOffset", "Offset of the last committed record."),
	lastAppliedTs:  kcDesc("LastAppliedRecordTimestamp", "Time (ms since the epoch) of the last applied record's batch; on the active controller, of its append."),
	lastAppliedLag: kcDesc("LastAppliedRecordLagMs", "Milliseconds between now and LastAppliedRecordTimestamp."),
	newActive:      kcDesc("NewActiveControllersCount", "Leader changes this node saw that named an active controller."),
	timedOutHeartbeats: kcDesc("TimedOutBrokerHeartbeatCount",
		"Broker heartbeats that waited past their deadline before the active controller ran them."),
	opsStarted:  kcDesc("EventQueueOperationsStartedCount", "Controller operations (requests and periodic tasks) started."),
	opsTimedOut: kcDesc("EventQueueOperationsTimedOutCount", "Controller operations that waited past their deadline."),
	mv: yammerDesc("kafka_server", "MetadataLoader", "CurrentMetadataVersion",
		"The finalized metadata.version feature level; 0 before one."),
	controllerID: yammerDesc("kafka_server", "MetadataLoader", "CurrentControllerId",
		"The quorum leader raft last reported; -1 when unknown."),
	finalized: yammerDesc("kafka_server", "MetadataLoader", "FinalizedLevel",
		"Each finalized feature's level, by Kafka's camel-cased feature name.", "featureName"),
	snapshotLoads: yammerDesc("kafka_server", "MetadataLoader", "HandleLoadSnapshotCount",
		"Snapshots loaded by the metadata loader."),
	snapBytes: yammerDesc("kafka_server", "SnapshotEmitter", "LatestSnapshotGeneratedBytes",
		"Size of the latest snapshot this node generated; 0 before one."),
	snapAge: yammerDesc("kafka_server", "SnapshotEmitter", "LatestSnapshotGeneratedAgeMs",
		"Milliseconds since this node generated its latest snapshot (since it started before one)."),
}

type controllerCollector struct {
	src ControllerSource
	now func() time.Time
}

func (c controllerCollector) Describe(ch chan<- *prometheus.Desc) {
	prometheus.DescribeByCollect(c, ch)
}

func (c controllerCollector) Collect(ch chan<- prometheus.Metric) {
	v, ok := c.src()
	if !ok {
		return
	}
	d := &controllerDescs
	gauge := func(desc *prometheus.Desc, val float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, val, labels...)
	}
	gauge(d.activeControllers, b2f(v.Active))
	gauge(d.activeBrokers, float64(v.ActiveBrokers))
	gauge(d.fencedBrokers, float64(v.FencedBrokers))
	gauge(d.shuttingBrokers, float64(v.ControlledShutdownBrokers))
	gauge(d.topics, float64(v.Topics))
	gauge(d.partitions, float64(v.Partitions))
	gauge(d.offline, float64(v.OfflinePartitions))
	gauge(d.imbalanced, float64(v.ImbalancedPartitions))
	for _, b := range v.Brokers {
		gauge(d.brokerState, float64(b.State), strconv.Itoa(int(b.ID)))
	}
	gauge(d.errors, float64(v.MetadataErrors))
	gauge(d.lastApplied, float64(v.LastAppliedOffset))
	gauge(d.lastCommitted, float64(v.LastCommittedOffset))
	gauge(d.lastAppliedTs, float64(v.LastAppliedTimestampMs))
	gauge(d.lastAppliedLag, float64(c.now().UnixMilli()-v.LastAppliedTimestampMs))
	gauge(d.newActive, float64(v.NewActiveControllers))
	gauge(d.timedOutHeartbeats, float64(v.TimedOutHeartbeats))
	gauge(d.opsStarted, float64(v.OperationsStarted))
	gauge(d.opsTimedOut, float64(v.OperationsTimedOut))
	gauge(d.mv, float64(v.MetadataVersion))
	gauge(d.controllerID, float64(v.ControllerID))
	gauge(d.snapshotLoads, float64(v.SnapshotLoads))
	for _, f := range v.Features {
		gauge(d.finalized, float64(f.Level), camelFeature(f.Name))
	}
	gauge(d.snapBytes, float64(v.LatestSnapshotBytes))
	gauge(d.snapAge, float64(max(c.now().Sub(v.LatestSnapshotAt).Milliseconds(), 0)))
}

// camelFeature is Kafka's MetadataLoaderMetrics.sanitizeFeatureName:
// "eligible.leader.replicas.version" is "eligibleLeaderReplicasVersion".
func camelFeature(name string) string {
	parts := strings.Split(name, ".")
	var b strings.Builder
	b.WriteString(parts[0])
	for _, p := range parts[1:] {
		if p == "" {
			continue
		}
		b.WriteString(strings.ToUpper(p[:1]))
		b.WriteString(strings.ToLower(p[1:]))
	}
	return b.String()
}
