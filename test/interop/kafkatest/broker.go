package kafkatest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BrokerConfig describes a Kafka broker (kafka.Kafka, process.roles=broker) listening on
// 127.0.0.1: an observer of the controller quorum's __cluster_metadata.
type BrokerConfig struct {
	NodeID    int32  // node.id; must differ from every controller's
	ClusterID string // the quorum's cluster id (kafka-storage format -t)
	Port      int    // PLAINTEXT listener port; FreePort when 0
	// Voters (controller.quorum.voters) or BootstrapServers
	// (controller.quorum.bootstrap.servers) locate the controller quorum.
	Voters           []string
	BootstrapServers []string
	NoFormat         bool   // the log dir is already formatted (a restart)
	Dir              string // log dir; a fresh t.TempDir() when empty
	Props            Props  // extra or overriding server properties
	Log4jLevels      map[string]string
	JVMFlags         []string // replace BrokerJVMFlags
}

// Broker is a running Kafka broker.
type Broker struct {
	Server
}

// BrokerListener is the listener name the helpers give brokers.
const BrokerListener = "PLAINTEXT"

// BrokerJVMFlags are the harness's controller flags with a little more heap: a broker also
// holds partitions, producer state and fetch sessions. Several JVMs share two cores, so
// the serial collector and C1 only, as for controllers.
var BrokerJVMFlags = []string{"-Xmx384m", "-Xms32m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true"}

// BrokerProps returns the server properties StartBroker writes for cfg. Internal topics
// get one replica and one partition and group rebalances start at once: tests run one or
// two brokers and must not wait on Kafka's production defaults.
func BrokerProps(cfg BrokerConfig, dir string) Props {
	p := Props{
		"process.roles":                                    "broker",
		"node.id":                                          strconv.Itoa(int(cfg.NodeID)),
		"listeners":                                        fmt.Sprintf("%s://127.0.0.1:%d", BrokerListener, cfg.Port),
		"advertised.listeners":                             fmt.Sprintf("%s://127.0.0.1:%d", BrokerListener, cfg.Port),
		"inter.broker.listener.name":                       BrokerListener,
		"controller.listener.names":                        ControllerListener,
		"listener.security.protocol.map":                   BrokerListener + ":PLAINTEXT," + ControllerListener + ":PLAINTEXT",
		"log.dirs":                                         dir,
		"num.network.threads":                              "1",
		"num.io.threads":                                   "2",
		"background.threads":                               "2",
		"num.replica.fetchers":                             "1",
		"auto.create.topics.enable":                        "false",
		"offsets.topic.replication.factor":                 "1",
		"offsets.topic.num.partitions":                     "1",
		"transaction.state.log.replication.factor":         "1",
		"transaction.state.log.min.isr":                    "1",
		"transaction.state.log.num.partitions":             "1",
		"share.coordinator.state.topic.replication.factor": "1",
		"share.coordinator.state.topic.min.isr":            "1",
		"group.initial.rebalance.delay.ms":                 "0",
	}
	if len(cfg.Voters) > 0 {
		p["controller.quorum.voters"] = strings.Join(cfg.Voters, ",")
	}
	if len(cfg.BootstrapServers) > 0 {
		p["controller.quorum.bootstrap.servers"] = strings.Join(cfg.BootstrapServers, ",")
	}
	return p.Merge(cfg.Props)
}

// BrokerStarted is what kafka.Kafka logs once a broker is up: it has caught up with the
// metadata log and registered with the active controller.
const BrokerStarted = "Kafka Server started"

// StartBroker formats a log dir with Kafka's storage tool (unless NoFormat), starts
// kafka.Kafka as a broker and waits until it logs BrokerStarted, so a return means the
// quorum serves it. The broker is stopped when the test ends; its log is dumped if the
// test failed. Failures are fatal to the test.
func (e *Env) StartBroker(t testing.TB, cfg BrokerConfig) *Broker {
	t.Helper()
	return e.StartBrokers(t, cfg)[0]
}

// StartBrokers starts several brokers as StartBroker does, formatting and starting them
// all at once (each JVM takes seconds to start) before waiting for each.
func (e *Env) StartBrokers(t testing.TB, cfgs ...BrokerConfig) []*Broker {
	t.Helper()
	bs := e.LaunchBrokers(t, cfgs...)
	for _, b := range bs {
		if err := b.WaitStarted(StartTimeout); err != nil {
			b.DumpLog(80)
			t.Fatal(err)
		}
	}
	return bs
}

// LaunchBrokers formats and starts brokers without waiting for them to start: a broker
// fetches the metadata log as soon as it runs, but only starts (WaitStarted) once an
// active controller has registered it.
func (e *Env) LaunchBrokers(t testing.TB, cfgs ...BrokerConfig) []*Broker {
	t.Helper()
	specs := make([]serverSpec, len(cfgs))
	for i := range cfgs {
		if cfgs[i].NodeID < 0 || cfgs[i].ClusterID == "" || len(cfgs[i].Voters)+len(cfgs[i].BootstrapServers) == 0 {
			t.Fatalf("kafkatest: broker %d needs a node id >= 0, a cluster id and the quorum's voters or bootstrap servers", cfgs[i].NodeID)
		}
		if cfgs[i].Port == 0 {
			cfgs[i].Port = FreePort(t)
		}
		specs[i] = brokerSpec(cfgs[i])
	}
	servers, _, err := e.prepareServers(t, specs)
	if err != nil {
		t.Fatal(err)
	}
	bs := make([]*Broker, len(cfgs))
	for i, srv := range servers {
		bs[i] = &Broker{Server: *srv}
		if err := e.launch(t, &bs[i].Server, specs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return bs
}

// WaitStarted waits until the broker logs BrokerStarted.
func (b *Broker) WaitStarted(timeout time.Duration) error { return b.WaitLog(BrokerStarted, timeout) }

// brokerSpec is how LaunchBrokers formats and starts cfg.
func brokerSpec(cfg BrokerConfig) serverSpec {
	flags := cfg.JVMFlags
	if flags == nil {
		flags = BrokerJVMFlags
	}
	return serverSpec{role: "broker", nodeID: cfg.NodeID, clusterID: cfg.ClusterID, port: cfg.Port, dir: cfg.Dir,
		props: func(dir string) Props { return BrokerProps(cfg, dir) }, noFormat: cfg.NoFormat,
		log4j: cfg.Log4jLevels, jvmFlags: flags}
}

// BrokerConfig returns the config of a broker observing the quorum: its static voters and
// cluster id, node id id (which must not be a voter's).
func (q *MixedRaft) BrokerConfig(id int32) BrokerConfig {
	return BrokerConfig{NodeID: id, ClusterID: q.cfg.ClusterID, Voters: q.Voters}
}

// StartBrokers starts brokers with the given node ids beside a Controllers quorum (at
// once: each JVM takes seconds to start) and waits until each listens.
func (q *MixedRaft) StartBrokers(ids ...int32) []*Broker {
	q.t.Helper()
	if !q.cfg.Controllers {
		q.t.Fatalf("kafkatest: brokers need a Controllers quorum")
	}
	cfgs := make([]BrokerConfig, len(ids))
	for i, id := range ids {
		cfgs[i] = q.BrokerConfig(id)
	}
	return q.env.StartBrokers(q.t, cfgs...)
}
