package interop

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// controllerGauges are the image gauges of Kafka 4.4.0's ControllerMetadataMetrics and
// MetadataLoaderMetrics that every controller, active or not, computes from its image:
// the JVM's MBean names and kraftd's Prometheus names.
var controllerGauges = map[string]string{
	"kafka.controller:type=KafkaController,name=ActiveBrokerCount":              "kafka_controller_kafkacontroller_activebrokercount",
	"kafka.controller:type=KafkaController,name=FencedBrokerCount":              "kafka_controller_kafkacontroller_fencedbrokercount",
	"kafka.controller:type=KafkaController,name=ControlledShutdownBrokerCount":  "kafka_controller_kafkacontroller_controlledshutdownbrokercount",
	"kafka.controller:type=KafkaController,name=GlobalTopicCount":               "kafka_controller_kafkacontroller_globaltopiccount",
	"kafka.controller:type=KafkaController,name=GlobalPartitionCount":           "kafka_controller_kafkacontroller_globalpartitioncount",
	"kafka.controller:type=KafkaController,name=OfflinePartitionsCount":         "kafka_controller_kafkacontroller_offlinepartitionscount",
	"kafka.controller:type=KafkaController,name=PreferredReplicaImbalanceCount": "kafka_controller_kafkacontroller_preferredreplicaimbalancecount",
	"kafka.controller:type=KafkaController,name=MetadataErrorCount":             "kafka_controller_kafkacontroller_metadataerrorcount",
	"kafka.server:type=MetadataLoader,name=CurrentMetadataVersion":              "kafka_server_metadataloader_currentmetadataversion",
	"kafka.server:type=MetadataLoader,name=CurrentControllerId":                 "kafka_server_metadataloader_currentcontrollerid",
	"kafka.server:type=MetadataLoader,name=HandleLoadSnapshotCount":             "kafka_server_metadataloader_handleloadsnapshotcount",
}

// TestMixedControllerImageMetrics: a JVM controller (active) and two kraftd standbys
// following the same log report the same image gauges (brokers by state, topics,
// partitions, offline and imbalanced partitions, metadata errors, metadata.version, the
// current controller, snapshots loaded, each finalized feature's level) once a broker registered and a topic exists; ActiveControllerCount
// is 1 on the JVM and 0 on kraftd, and the broker's BrokerRegistrationState is the JVM's.
func TestMixedControllerImageMetrics(t *testing.T) {
	t.Parallel() // see interop/doc.go
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	K, J := kafkatest.SideKraftd, kafkatest.SideKafka
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{J, K, K}, Controllers: true, Metrics: true,
		KraftdProps: kafkatest.Props{config.LeadershipDeferralKey: "true"}})
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	if active, err := q.WaitActiveController(time.Minute); err != nil || active != 1 {
		t.Fatalf("active controller %d (%v), want the JVM controller 1", active, err)
	}
	b := q.StartBrokers(101)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cl := kafkatest.NewClient(t, b.Addr)
	if err := cl.CreateTopic(ctx, "gauges", 3, 1); err != nil {
		t.Fatal(err)
	}
	var jvm, k2, k3 map[string]string
	var err error
	for {
		readCtx, cancelRead := context.WithTimeout(ctx, 20*time.Second)
		jvm, err = jmxGauges(readCtx, env, q.Node(1).MetricsPort)
		cancelRead()
		if err == nil && jvm["GlobalTopicCount"] == "1" && jvm["ActiveBrokerCount"] == "1" {
			k2, k3 = kraftdGauges(t, q.Node(2).MetricsPort), kraftdGauges(t, q.Node(3).MetricsPort)
			if sameGauges(jvm, k2) && sameGauges(jvm, k3) {
				break
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("no agreement (last JMX error %v):\njvm %v\nkraftd 2 %v\nkraftd 3 %v", err, jvm, k2, k3)
		}
		time.Sleep(time.Second)
	}
	t.Logf("JVM controller gauges %v", jvm)
	for id, k := range map[int32]map[string]string{2: k2, 3: k3} {
		if k["ActiveControllerCount"] != "0" || k["BrokerRegistrationState{broker=101}"] != "30" {
			t.Errorf("kraftd %d: ActiveControllerCount %s, BrokerRegistrationState of 101 %s", id,
				k["ActiveControllerCount"], k["BrokerRegistrationState{broker=101}"])
		}
	}
	if jvm["ActiveControllerCount"] != "1" {
		t.Errorf("the JVM's ActiveControllerCount %s", jvm["ActiveControllerCount"])
	}
}

// sameGauges: every gauge of controllerGauges reads the same number.
// The JVM's FinalizedLevel of each feature too.
func sameGauges(jvm, k map[string]string) bool {
	for mbean := range controllerGauges {
		name := mbean[strings.LastIndex(mbean, "=")+1:]
		if !sameNumber(jvm[name], k[name]) {
			return false
		}
	}
	for name, v := range jvm {
		if strings.HasPrefix(name, "FinalizedLevel") && !sameNumber(v, k[name]) {
			return false
		}
	}
	return true
}

// jmxGauges reads the JVM's KafkaController and MetadataLoader gauges by Kafka's
// JmxTool, keyed by MBean name (BrokerRegistrationState as "...{broker=N}").
func jmxGauges(ctx context.Context, env *kafkatest.Env, port int) (map[string]string, error) {
	url := fmt.Sprintf("service:jmx:rmi:///jndi/rmi://127.0.0.1:%d/jmxrmi", port)
	m := map[string]string{}
	for _, obj := range []string{"kafka.controller:type=KafkaController,*", "kafka.server:type=MetadataLoader,*"} {
		out, err := env.RunTool(ctx, "org.apache.kafka.tools.JmxTool", "--jmx-url", url,
			"--object-name", obj, "--one-time", "true", "--report-format", "properties")
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(strings.NewReader(out))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			i := strings.Index(line, ",name=")
			if i < 0 {
				continue
			}
			rest := line[i+len(",name="):]
			name, attrVal, ok := strings.Cut(rest, ":")
			if !ok {
				continue
			}
			attr, v, ok := strings.Cut(attrVal, "=")
			if !ok || attr != "Value" {
				continue
			}
			if n, broker, ok := strings.Cut(name, ",broker="); ok {
				name = n + "{broker=" + broker + "}"
			}
			m[name] = v
		}
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("no controller gauges over JMX")
	}
	return m, nil
}

// kraftdGauges scrapes kraftd's /metrics into the MBean names of controllerGauges.
func kraftdGauges(t *testing.T, port int) map[string]string {
	t.Helper()
	names := map[string]string{"kafka_controller_kafkacontroller_activecontrollercount": "ActiveControllerCount"}
	for mbean, prom := range controllerGauges {
		names[prom] = mbean[strings.LastIndex(mbean, "=")+1:]
	}
	m := map[string]string{}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Logf("scrape kraftd: %v", err)
		return m
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		if f, ok := strings.CutPrefix(name, `kafka_server_metadataloader_finalizedlevel{featureName="`); ok {
			m["FinalizedLevel,featureName="+strings.TrimSuffix(f, `"}`)] = v
			continue
		}
		if broker, ok := strings.CutPrefix(name, `kafka_controller_kafkacontroller_brokerregistrationstate{broker="`); ok {
			m["BrokerRegistrationState{broker="+strings.TrimSuffix(broker, `"}`)+"}"] = v
			continue
		}
		if n, ok := names[name]; ok {
			m[n] = v
		}
	}
	return m
}
