//go:build interoplong

package interop

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// maxControllerlessWindow bounds every controller-less window of a run: a hang bound, not
// a speed. The windows are the figure each run logs (WindowsLine: median and max); the
// JVM-only quorum measures 2-5 s on this harness's timeouts (the followers' fetch timeout,
// 2 s, an election, the new controller's activation), and a kraftd voter, deferring
// leadership, adds about an election timeout in the rare election it wins, which
// checkKraftdHandoffs checks by its mechanism.
const maxControllerlessWindow = kafkatest.SettleTimeout

// createTimeout bounds a topic creation: the next active controller creates it within
// its window plus a few retries.
const createTimeout = 2 * time.Minute

// controllerlessKills is how many times a run kills the active controller;
// KRAFTD_CONTROLLERLESS_KILLS overrides it (more kills, steadier statistics).
func controllerlessKills(t *testing.T) int {
	v := os.Getenv("KRAFTD_CONTROLLERLESS_KILLS")
	if v == "" {
		return 5
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("KRAFTD_CONTROLLERLESS_KILLS=%q: want a positive number", v)
	}
	return n
}

// TestControllerlessWindowJVMOnlyLong is the baseline: 3 Kafka 4.4.0 controllers and 2
// brokers; the active controller is killed -9 and restarted controllerlessKills times (5)
// while a client creates topics and produces and consumes with acks=all.
func TestControllerlessWindowJVMOnlyLong(t *testing.T) {
	J := kafkatest.SideKafka
	runControllerless(t, []kafkatest.Side{J, J, J})
}

// TestControllerlessWindowKraftdVoterLong is the baseline with a kraftd voter (leadership
// deferral on, its default) in place of the third JVM controller: the windows stay within
// maxControllerlessWindow as the baseline's do, and whenever kraftd wins an election it
// hands leadership to a Kafka controller (checkKraftdHandoffs).
func TestControllerlessWindowKraftdVoterLong(t *testing.T) {
	J, K := kafkatest.SideKafka, kafkatest.SideKraftd
	runControllerless(t, []kafkatest.Side{J, J, K})
}

// controllerlessRun is one quorum with brokers and a client under kills.
type controllerlessRun struct {
	t       *testing.T
	q       *kafkatest.MixedRaft
	cl      *kafkatest.Client
	addrs   []string // the brokers'
	outages *kafkatest.Outages
	label   string
	acked   map[string][]string // topic -> every acked value
	topics  map[string]int      // topic -> partitions
	mu      sync.Mutex
}

func runControllerless(t *testing.T, sides []kafkatest.Side) {
	env := kafkatest.Require(t)
	if slices.Contains(sides, kafkatest.SideKraftd) {
		kafkatest.BuildKraftd(t)
	}
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: sides, Controllers: true,
		KraftdProps: kafkatest.Props{config.LeadershipDeferralKey: "true"}})
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	r := &controllerlessRun{t: t, q: q, outages: q.NewOutages(), acked: map[string][]string{}, topics: map[string]int{}}
	var names []string
	for _, s := range sides {
		names = append(names, string(s))
	}
	r.label = strings.Join(names, ",")
	if _, err := q.WaitActiveController(time.Minute); err != nil {
		t.Fatal(err)
	}
	brokers := q.StartBrokers(101, 102)
	t.Cleanup(func() { keepBrokerLogs(t, q, brokers...) })
	r.addrs = []string{brokers[0].Addr, brokers[1].Addr}
	r.cl = kafkatest.NewClient(t, r.addrs...)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	if err := r.create(ctx, "base"); err != nil {
		t.Fatal(err)
	}
	r.produce(ctx, "base", "setup")

	for i := 1; i <= controllerlessKills(t); i++ {
		r.round(ctx, i)
	}

	ws := r.outages.Windows()
	leads := q.KraftdLeads()
	t.Logf("%s kraftd_leads=%d", kafkatest.WindowsLine(r.label, ws), len(leads))
	for i, w := range ws {
		if w.Open || w.Window > maxControllerlessWindow {
			t.Errorf("kill %d (node %d): controller-less for %v (open %v), above maxControllerlessWindow %v", i+1, w.Killed, w.Window, w.Open, maxControllerlessWindow)
		}
	}
	checkKraftdHandoffs(t, leads)
	if err := kafkatest.WaitTopicsEverywhere(ctx, r.addrs, r.topics); err != nil {
		t.Error(err)
	}
	for topic, values := range r.acked {
		if err := r.cl.ConsumeAll(ctx, topic, values); err != nil {
			t.Error(err)
		}
	}
	stopAll(t, q, brokers)
	checkBrokerLogs(t, env, q, brokers, 0)
}

// round kills the active controller; while no controller is active the client creates a
// topic (it waits for the next active controller) and produces to existing partitions
// (which needs none). The killed node restarts once a JVM controller is active again.
func (r *controllerlessRun) round(ctx context.Context, i int) {
	r.t.Helper()
	killed, err := r.outages.KillActive(time.Minute)
	if err != nil {
		r.t.Fatalf("kill %d: %v", i, err)
	}
	var wg sync.WaitGroup
	var createErr error
	topic := fmt.Sprintf("during-kill-%d", i)
	wg.Go(func() { createErr = r.create(ctx, topic) })
	wg.Go(func() { r.produce(ctx, "base", fmt.Sprintf("kill-%d", i)) })

	o := r.outages.WaitWindowClosed(time.Minute)
	r.q.Start(killed)
	r.t.Logf("kill %d of active controller %d: controller %d active after %v (open %v)", i, killed, o.Next.Node, o.Window.Round(time.Millisecond), o.Open)
	wg.Wait()
	if createErr != nil {
		lacking, err := kafkatest.LackingCreateTopics(ctx, r.addrs)
		r.t.Fatalf("kill %d: %v (brokers advertising no CreateTopics: %v %v)", i, createErr, lacking, err)
	}
	r.produce(ctx, topic, "after")
	if err := r.q.WaitLoaded(killed, time.Minute); err != nil {
		r.t.Fatal(err)
	}
}

// create creates a topic with 2 partitions, each on both brokers, within createTimeout.
func (r *controllerlessRun) create(ctx context.Context, topic string) error {
	ctx, cancel := context.WithTimeout(ctx, createTimeout)
	defer cancel()
	if err := r.cl.CreateTopic(ctx, topic, 2, 2); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.topics[topic] = 2
	return nil
}

// produce writes 100 records with acks=all and remembers the acked ones.
func (r *controllerlessRun) produce(ctx context.Context, topic, prefix string) {
	acked, err := r.cl.Produce(ctx, topic, prefix, 100)
	if err != nil {
		r.t.Errorf("%d of 100 records to %s acked: %v", len(acked), topic, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acked[topic] = append(r.acked[topic], acked...)
}
