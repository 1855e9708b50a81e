package interop

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// metadataVersionFeature is the feature only a node running Kafka's QuorumController
// supports: kraftd learns from it which voters can be the active controller.
const metadataVersionFeature = "metadata.version"

// TestKafkaControllerAdvertisesMetadataVersion: a Kafka 4.4.0 controller's ApiVersions
// answer (v4, as kraftd's peer client sends on every connection) lists metadata.version
// among its SupportedFeatures; kraftd's lists kraft.version only. Leadership deferral
// (node/deferral.go) rests on this difference.
func TestKafkaControllerAdvertisesMetadataVersion(t *testing.T) {
	env := kafkatest.Require(t)
	c := env.StartController(t, kafkatest.ControllerConfig{NodeID: 1})
	k := kafkatest.StartKraftd(t, kafkatest.KraftdConfig{NodeID: 1})
	for _, tc := range []struct {
		name, addr string
		want       bool
	}{{"Kafka controller", c.Addr, true}, {"kraftd", k.Addr, false}} {
		names := connectFeatures(t, tc.addr)
		if got := slices.Contains(names, metadataVersionFeature); got != tc.want {
			t.Errorf("%s supports %q: %s listed: %v, want %v", tc.name, names, metadataVersionFeature, got, tc.want)
		}
		if !slices.Contains(names, features.KRaftVersionName) {
			t.Errorf("%s supports %q: no %s", tc.name, names, features.KRaftVersionName)
		}
		t.Logf("%s at %s: SupportedFeatures %q", tc.name, tc.addr, names)
	}
}

// connectFeatures opens one connection with kraftd's peer client and returns the
// SupportedFeatures names of the peer's ApiVersions answer.
func connectFeatures(t *testing.T, addr string) []string {
	t.Helper()
	got := make(chan []string, 1)
	p := network.NewPeers(network.PeerConfig{ClientID: "raft-client-1", OnConnect: func(_ int32, f []string) { got <- f }})
	defer p.Close()
	p.SetAddress(1, addr)
	p.Send(1, kmsg.NewPtrDescribeQuorumRequest(), func(kmsg.Response, error) {})
	select {
	case f := <-got:
		return f
	case <-time.After(30 * time.Second):
		t.Fatalf("no connection to %s within 30s", addr)
		return nil
	}
}

// TestMixedControllerDeferral: two Kafka 4.4.0 controllers and a kraftd `start` voter with
// leadership deferral on (kraftd's default). kraftd is made to win an election (only it and
// a restarted Kafka controller are up, and it campaigns first); it then hands leadership to
// the Kafka controller as soon as that one has caught up: EndQuorumEpoch naming it first,
// which campaigns at once: kraftd logs the hand-over, a Kafka controller leads again
// (checkKraftdHandoffs), and with both Kafka controllers back the quorum stays under a Kafka
// leader.
func TestMixedControllerDeferral(t *testing.T) {
	t.Parallel() // see interop/doc.go
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	K, J := kafkatest.SideKraftd, kafkatest.SideKafka
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{J, J, K}, Controllers: true,
		KafkaLog4j: kafkaRaftDebug, KraftdProps: kafkatest.Props{config.LeadershipDeferralKey: "true"}})
	r := &mixedRun{t: t, q: q, hw: -1, led: map[int32]kafkatest.Side{}}
	const kraftd = 3
	start := time.Now()
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	// Even should kraftd win the first election, a Kafka controller leads soon after.
	r.waitKafkaLeader("first election")
	t.Logf("first election: %s leads epoch %d, %v after the first start", r.label(r.leader), r.epoch, time.Since(start).Round(time.Millisecond))

	var window time.Duration
	for attempt := 0; ; attempt++ {
		if attempt == 3 {
			t.Fatal("kraftd won no election in 3 attempts")
		}
		old, w := r.leader, r.others(r.leader)[0]
		if w == kraftd {
			w = r.others(r.leader)[1]
		}
		before := r.epoch
		// Stop the other Kafka controller and the leader: kraftd is left alone and
		// campaigns; the restarted follower grants it its vote before its own election
		// timer runs out.
		if err := q.Stop(w); err != nil {
			t.Fatalf("stop %s: %v", r.label(w), err)
		}
		q.Terminate(old)
		r.waitExit(old)
		q.Start(w)
		r.waitKafkaLeader("kraftd's hand-over")
		q.Start(old)
		if led, ok := kraftdLedBetween(t, q.Node(kraftd).Proc.Log(), q.Node(r.leader).Proc.Log(), before, r.epoch); ok {
			window = led
			break
		}
		t.Logf("attempt %d: %s won epoch %d without kraftd leading; again", attempt+1, r.label(r.leader), r.epoch)
	}
	t.Logf("a Kafka controller led %v after kraftd's election", window.Round(time.Millisecond))
	checkKraftdHandoffs(t, q.KraftdLeads())
	// Both Kafka controllers up: the quorum stays under a Kafka leader.
	leader, epoch := r.leader, r.epoch
	time.Sleep(3 * time.Second) // the scenario: three election timeouts in which nothing may move
	if l, e, ok := q.AgreedLeader(); !ok || l != leader || e != epoch {
		t.Errorf("after the hand-over the quorum moved: leader %d epoch %d (agreed %v), want %s in %d", l, e, ok, r.label(leader), epoch)
	}
	keepLogs(t, q)
}

// handoffHangBound bounds the time from a kraftd voter's election in a metadata quorum (or,
// when its Kafka successor was down or starting then, from when that one follows it) to a
// Kafka controller's leadership: a hang bound, not a speed. The hand-over itself is checked
// by its mechanism (kraftd resigned in the epoch); how soon it comes (about one election
// timeout plus round trips) is a figure the tests log, and make interop-long's
// controller-less windows report. A restarted JVM catches up (and may time out and campaign
// itself) at its own pace within kafkatest.SettleTimeout.
const handoffHangBound = kafkatest.SettleTimeout

// checkKraftdHandoffs fails on an epoch a kraftd voter led, with the Kafka controller that
// led next following it, that no Kafka controller's leadership followed within
// handoffHangBound (an open epoch: with any Kafka controller following it), or, when that
// controller followed kraftd from its election on, that kraftd did not end by resigning to
// hand leadership over. (A controller that was down or starting at kraftd's election
// catches up at its own pace and may time out and campaign before kraftd hands over.)
func checkKraftdHandoffs(t *testing.T, leads []kafkatest.KraftdLead) {
	t.Helper()
	for _, l := range leads {
		t.Logf("kraftd node %d led epoch %d (elected %s, followed by its successor %s, no successor followed %v, resigned %v): Kafka controller %d led %v later (open %v)",
			l.Node, l.Epoch, l.At.Format("15:04:05.000"), l.Followed.Format("15:04:05.000"), l.Unfollowed, l.Resigned, l.Next.Node, l.Handoff.Round(time.Millisecond), l.Open)
		if l.Unfollowed {
			continue // no Kafka controller kraftd could hand over to took over in that epoch
		}
		if l.Open || l.Handoff > handoffHangBound {
			t.Errorf("kraftd node %d led epoch %d and no Kafka controller led within %v (%v, open %v)", l.Node, l.Epoch, handoffHangBound, l.Handoff, l.Open)
		}
		if !l.Open && !l.Resigned && l.Followed.Sub(l.At) <= time.Second {
			t.Errorf("kraftd node %d led epoch %d and Kafka controller %d followed it, but kraftd did not resign to hand over (%q)", l.Node, l.Epoch, l.Next.Node, kafkatest.KraftdResignedLine)
		}
	}
}

// waitKafkaLeader waits until the nodes agree on a Kafka controller leading an epoch above
// the current one and it commits in that epoch. A kraftd leader on the way is skipped: it
// resigns as soon as its epoch commits, so its high watermark may never be seen.
func (r *mixedRun) waitKafkaLeader(what string) {
	r.t.Helper()
	deadline := time.Now().Add(mixedElectionWait)
	for {
		leader, epoch, err := r.q.WaitLeader(r.epoch, time.Until(deadline))
		if err != nil {
			r.t.Fatalf("%s: no Kafka controller leads: %v", what, err)
		}
		r.leader, r.epoch = leader, epoch
		r.led[epoch] = r.side(leader)
		if r.side(leader) == kafkatest.SideKafka {
			break
		}
	}
	hw, err := r.q.WaitCommit(r.epoch, r.hw, 30*time.Second)
	if err != nil {
		r.t.Fatalf("%s: new leader %s (epoch %d) commits nothing: %v", what, r.label(r.leader), r.epoch, err)
	}
	r.hw = hw
}

// kraftdLedBetween finds an epoch in (after, kafkaEpoch) that kraftd led, checks its log
// shows the deferral hand-over in that epoch, and returns the time from its election to the
// Kafka controller's election in kafkaEpoch (from the two processes' log timestamps).
func kraftdLedBetween(t *testing.T, kraftdLog, kafkaLog string, after, kafkaEpoch int32) (time.Duration, bool) {
	t.Helper()
	var became time.Time
	var epoch int32 = -1
	handedOver := false
	for _, line := range strings.Split(kraftdLog, "\n") {
		var v struct {
			TS        string `json:"ts"`
			Msg       string `json:"msg"`
			Epoch     int32  `json:"epoch"`
			Successor int32  `json:"successor"`
		}
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &v) != nil || v.Epoch <= after || v.Epoch >= kafkaEpoch {
			continue
		}
		switch v.Msg {
		case "became leader":
			ts, err := time.Parse("2006-01-02T15:04:05.000Z0700", v.TS)
			if err != nil {
				t.Fatalf("kraftd log time %q: %v", v.TS, err)
			}
			became, epoch, handedOver = ts, v.Epoch, false
		case "resigning to hand leadership to a voter that can act as the active controller":
			handedOver = v.Epoch == epoch
			t.Logf("kraftd: %s", line)
		}
	}
	if epoch < 0 {
		return 0, false
	}
	if !handedOver {
		t.Errorf("kraftd led epoch %d but logged no deferral hand-over", epoch)
	}
	elected := kafkaLeaderAt(t, kafkaLog, kafkaEpoch)
	return elected.Sub(became), true
}

var (
	log4jTime   = regexp.MustCompile(`^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\]`)
	leaderEpoch = regexp.MustCompile(`Completed transition to Leader\(.*\bepoch=(\d+)`)
)

// kafkaLeaderAt is when a Kafka controller's log says it became leader of epoch.
func kafkaLeaderAt(t *testing.T, log string, epoch int32) time.Time {
	t.Helper()
	for _, line := range strings.Split(log, "\n") {
		m := leaderEpoch.FindStringSubmatch(line)
		if m == nil || m[1] != strconv.Itoa(int(epoch)) {
			continue
		}
		tm := log4jTime.FindStringSubmatch(line)
		if tm == nil {
			t.Fatalf("Kafka log line without a time: %s", line)
		}
		ts, err := time.ParseInLocation("2006-01-02 15:04:05,000", tm[1], time.Local)
		if err != nil {
			t.Fatalf("Kafka log time %q: %v", tm[1], err)
		}
		return ts
	}
	t.Fatalf("the Kafka leader's log has no transition to Leader in epoch %d", epoch)
	return time.Time{}
}
