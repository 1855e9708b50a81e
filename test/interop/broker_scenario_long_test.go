//go:build interoplong

package interop

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// brokerScenario is a metadata quorum of controllers J,K,K (the kraftd voters deferring
// leadership, their default) with the JVM controller active, broker 101 registered and
// topic "before" (2 partitions) holding records a client produced with acks=all; later a
// second broker (102) that starts while kraftd leads.
type brokerScenario struct {
	t      *testing.T
	env    *kafkatest.Env
	q      *kafkatest.MixedRaft
	r      *mixedRun
	b1, b2 *kafkatest.Broker
	cl     *kafkatest.Client // through b1
	ctx    context.Context
	acked  []string // the records of "before"
}

// scenarioJVM is the JVM controller's node id in a brokerScenario.
const scenarioJVM = 1

// registrationWait is how long a broker gets to register once a controller is active.
const registrationWait = 90 * time.Second

// startBrokerScenario starts the controllers (node 3 only when start3) with props for all
// of them, waits for the JVM controller to be active, starts broker 101 and produces 200
// records to "before".
func startBrokerScenario(t *testing.T, props kafkatest.Props, start3 bool) *brokerScenario {
	t.Helper()
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	K, J := kafkatest.SideKraftd, kafkatest.SideKafka
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{J, K, K}, Controllers: true,
		Props: props, KraftdProps: kafkatest.Props{config.LeadershipDeferralKey: "true",
			// kraftd writes no snapshot of its own here: the scenarios follow the JVM's
			// snapshots byte for byte (TestKraftdSnapshotToJVMLong follows kraftd's).
			"metadata.log.max.snapshot.interval.ms": "0"}})
	s := &brokerScenario{t: t, env: env, q: q, r: &mixedRun{t: t, q: q, hw: -1, led: map[int32]kafkatest.Side{}}}
	for _, n := range q.Nodes {
		if n.ID != 3 || start3 {
			q.Start(n.ID)
		}
	}
	if active, err := q.WaitActiveController(time.Minute); err != nil || active != scenarioJVM {
		t.Fatalf("active controller %d (%v), want the JVM controller %d", active, err, scenarioJVM)
	}
	s.r.leader, s.r.epoch, _ = q.AgreedLeader()
	s.b1 = q.StartBrokers(101)[0]
	t.Cleanup(func() { keepBrokerLogs(t, q, s.b1, s.b2) })
	s.cl = kafkatest.NewClient(t, s.b1.Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	s.ctx = ctx
	if err := s.cl.CreateTopic(ctx, "before", 2, 1); err != nil {
		t.Fatal(err)
	}
	s.acked = produceConsume(t, ctx, s.cl, "before", "jvm-led", 200, nil)
	return s
}

// killJVM kills the JVM controller -9 and returns the kraftd voter elected after it.
func (s *brokerScenario) killJVM() int32 {
	s.t.Helper()
	s.q.Kill(scenarioJVM)
	s.r.elected(fmt.Sprintf("kill -9 of the JVM controller %d", scenarioJVM), time.Now())
	if s.r.side(s.r.leader) != kafkatest.SideKraftd {
		s.t.Fatalf("leader %s with the only JVM controller down", s.r.label(s.r.leader))
	}
	return s.r.leader
}

// launchLateBroker starts broker 102 while no controller is active. A broker that no
// controller registers within initial.broker.registration.timeout.ms (60 s) shuts down:
// this one gets the time the test needs to bring a controller back.
func (s *brokerScenario) launchLateBroker() *kafkatest.Broker {
	cfg := s.q.BrokerConfig(102)
	cfg.Props = kafkatest.Props{"initial.broker.registration.timeout.ms": "300000"}
	s.b2 = s.env.LaunchBrokers(s.t, cfg)[0]
	return s.b2
}

// restartJVM restarts the JVM controller: once it has caught up the kraftd leader hands
// over to it, broker 102 registers and finishes starting, a topic created now reaches both
// brokers, and "before" still holds every acked record (read through broker 102). Then
// everything stops and the copies of the metadata log are compared (checkBrokerLogs: they
// agree at least up to atLeast).
func (s *brokerScenario) restartJVM(atLeast int64) []metadataCopy {
	t, q := s.t, s.q
	t.Helper()
	q.Start(scenarioJVM)
	if err := q.WaitLoaded(scenarioJVM, time.Minute); err != nil {
		t.Fatal(err)
	}
	loaded := time.Now()
	if active, err := q.WaitActiveController(time.Minute); err != nil || active != scenarioJVM {
		t.Fatalf("active controller %d (%v) after the JVM controller's restart", active, err)
	}
	t.Logf("the restarted JVM controller is active %v after it loaded the log", time.Since(loaded).Round(time.Millisecond))
	if err := s.b2.WaitStarted(registrationWait); err != nil {
		t.Fatal(err)
	}
	if err := s.cl.CreateTopic(s.ctx, "after", 1, 2); err != nil {
		t.Fatal(err)
	}
	if err := kafkatest.WaitTopicsEverywhere(s.ctx, []string{s.b1.Addr, s.b2.Addr}, map[string]int{"before": 2, "after": 1}); err != nil {
		t.Fatal(err)
	}
	produceConsume(t, s.ctx, s.cl, "after", "jvm-again", 100, nil)
	if err := kafkatest.NewClient(t, s.b2.Addr).ConsumeAll(s.ctx, "before", s.acked); err != nil {
		t.Error(err)
	}
	brokers := []*kafkatest.Broker{s.b1, s.b2}
	stopAll(t, q, brokers)
	return checkBrokerLogs(t, s.env, q, brokers, atLeast)
}
