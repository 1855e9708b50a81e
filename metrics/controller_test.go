package metrics

import (
	"testing"
	"time"
)

// A controller's metrics carry Kafka's MBean names in the JMX exporter's
// lowercased form, with the view's figures.
func TestControllerMetricNames(t *testing.T) {
	now := time.Unix(1000, 0)
	m := newMetrics(func() (View, bool) { return View{}, false }, func() time.Time { return now }, func() time.Time { return now })
	m.AddController(func() (ControllerView, bool) {
		return ControllerView{ActiveBrokers: 3, FencedBrokers: 1, Topics: 2, Partitions: 7, OfflinePartitions: 1,
			Brokers: []BrokerState{{ID: 4, State: BrokerFenced}}, LastAppliedOffset: 43, LastCommittedOffset: 41, MetadataVersion: 33,
			LastAppliedTimestampMs: now.UnixMilli() - 250, NewActiveControllers: 2, TimedOutHeartbeats: 1,
			OperationsStarted: 9, OperationsTimedOut: 1,
			ControllerID: 2, Features: []FeatureLevel{{"metadata.version", 33}, {"eligible.leader.replicas.version", 1}},
			LatestSnapshotBytes: 512, LatestSnapshotAt: now.Add(-1500 * time.Millisecond)}, true
	})
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, mm := range mf.GetMetric() {
			name := mf.GetName()
			for _, l := range mm.GetLabel() {
				name += "{" + l.GetName() + "=" + l.GetValue() + "}"
			}
			got[name] = mm.GetGauge().GetValue()
		}
	}
	want := map[string]float64{
		"kafka_controller_kafkacontroller_activecontrollercount":                                0,
		"kafka_controller_kafkacontroller_activebrokercount":                                    3,
		"kafka_controller_kafkacontroller_fencedbrokercount":                                    1,
		"kafka_controller_kafkacontroller_controlledshutdownbrokercount":                        0,
		"kafka_controller_kafkacontroller_globaltopiccount":                                     2,
		"kafka_controller_kafkacontroller_globalpartitioncount":                                 7,
		"kafka_controller_kafkacontroller_offlinepartitionscount":                               1,
		"kafka_controller_kafkacontroller_preferredreplicaimbalancecount":                       0,
		"kafka_controller_kafkacontroller_brokerregistrationstate{broker=4}":                    10,
		"kafka_controller_kafkacontroller_metadataerrorcount":                                   0,
		"kafka_controller_kafkacontroller_lastappliedrecordoffset":                              43,
		"kafka_controller_kafkacontroller_lastappliedrecordtimestamp":                           float64(now.UnixMilli() - 250),
		"kafka_controller_kafkacontroller_lastappliedrecordlagms":                               250,
		"kafka_controller_kafkacontroller_newactivecontrollerscount":                            2,
		"kafka_controller_kafkacontroller_timedoutbrokerheartbeatcount":                         1,
		"kafka_controller_kafkacontroller_eventqueueoperationsstartedcount":                     9,
		"kafka_controller_kafkacontroller_eventqueueoperationstimedoutcount":                    1,
		"kafka_controller_kafkacontroller_lastcommittedrecordoffset":                            41,
		"kafka_server_metadataloader_currentmetadataversion":                                    33,
		"kafka_server_metadataloader_currentcontrollerid":                                       2,
		"kafka_server_metadataloader_finalizedlevel{featureName=metadataVersion}":               33,
		"kafka_server_metadataloader_finalizedlevel{featureName=eligibleLeaderReplicasVersion}": 1,
		"kafka_server_metadataloader_handleloadsnapshotcount":                                   0,
		"kafka_server_snapshotemitter_latestsnapshotgeneratedbytes":                             512,
		"kafka_server_snapshotemitter_latestsnapshotgeneratedagems":                             1500,
	}
	for name, v := range want {
		if g, ok := got[name]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", name, g, ok, v)
		}
	}
}
