//go:build interopbench

package interop

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/kraftd/kraftd/test/controllerload"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// createCase is one load of the create scenario.
type createCase struct {
	parts int32
	rate  float64 // topics/s; 0: a closed loop
	conns int
}

func (c createCase) name() string {
	if c.rate == 0 {
		return fmt.Sprintf("%dp closed loop, %d conns", c.parts, c.conns)
	}
	return fmt.Sprintf("%dp at %g topics/s", c.parts, c.rate)
}

// scenarioCreate is scenario 1: BENCH_CONTROLLER_CREATE_BROKERS brokers (100; quick 30),
// 1-partition topics offered at BENCH_CONTROLLER_CREATE_1P_RATES topics/s ("100,500,2000";
// quick "200") over 64 connections, then a closed loop over BENCH_CONTROLLER_CREATE_1P_CONNS
// (128; quick 32), and 100-partition topics at BENCH_CONTROLLER_CREATE_100P_RATES ("5,20,50";
// quick "10") over 16, then a closed loop over BENCH_CONTROLLER_CREATE_100P_CONNS (32; quick 8).
func (b *ctrlBench) scenarioCreate() {
	t := b.t
	brokers := envInt(t, "BENCH_CONTROLLER_CREATE_BROKERS", b.pick(100, 30))
	cases := map[string]createCase{}
	var names []string
	add := func(c createCase) {
		cases[c.name()] = c
		names = append(names, c.name())
	}
	for _, spec := range []struct {
		parts         int32
		key, rates    string
		quickRates    string
		conns         int
		closed, quick int
	}{
		{1, "1P", "100,500,2000", "200", 64, 128, 32},
		{100, "100P", "5,20,50", "10", 16, 32, 8},
	} {
		for _, r := range envList(t, "BENCH_CONTROLLER_CREATE_"+spec.key+"_RATES", b.pickS(spec.rates, spec.quickRates), 1) {
			add(createCase{parts: spec.parts, rate: float64(r), conns: spec.conns})
		}
		if n := envInt(t, "BENCH_CONTROLLER_CREATE_"+spec.key+"_CONNS", b.pick(spec.closed, spec.quick)); n > 0 {
			add(createCase{parts: spec.parts, conns: n})
		}
	}
	b.interleave(names, func(sys, c string) ctrlRow { return b.runCreate(sys, cases[c], brokers) })
}

func (b *ctrlBench) runCreate(sys string, c createCase, brokers int) ctrlRow {
	cq := b.startQuorum(sys, nil, nil)
	defer cq.stop()
	f := cq.fleet(brokers, 2*time.Second)
	defer f.Close()
	active := cq.active()
	l := controllerload.StartLoad(cq.ctx, cq.finder, controllerload.CreateTopics("load", c.parts, 3),
		controllerload.LoadConfig{Rate: c.rate, Conns: c.conns})
	time.Sleep(time.Duration(b.warmup) * time.Second)
	from := time.Now()
	window := time.Duration(b.seconds) * time.Second
	profiled := cq.profile(active, fmt.Sprintf("create-%dp-%g-%d", c.parts, c.rate, c.conns), window)
	time.Sleep(window)
	to := time.Now()
	l.Stop()
	profiled()
	w := l.Summarize(from, to)
	hb := f.Heartbeats.Summarize(from, to)
	v := map[string]float64{"brokers": float64(brokers), "offered_topics_per_s": c.rate, "conns": float64(c.conns),
		"topics_per_s": w.PerSecond(), "partitions_per_s": w.PartsPerSecond(),
		"p50_ms": msOf(w.P50), "p99_ms": msOf(w.P99), "errors": float64(w.Requests - w.OK), "hb_p99_ms": msOf(hb.P99)}
	cq.usage(v, active, from, to)
	r := ctrlRow{Scenario: "create", Values: v}
	if len(w.Errors) > 0 {
		r.Note = fmt.Sprintf("errors by code %v", w.Errors)
	}
	if now := cq.active(); now != active {
		r.Note = strings.TrimSpace(fmt.Sprintf("%s; the active controller changed from %d to %d", r.Note, active, now))
	}
	return r
}

// scenarioHeartbeat is scenario 4: BENCH_CONTROLLER_HB_BROKERS brokers ("1000"; quick "100";
// one case each) heartbeating every BENCH_CONTROLLER_HB_INTERVAL_MS (2000), nothing else;
// the active controller's CPU while idle (no broker yet) is measured first.
func (b *ctrlBench) scenarioHeartbeat() {
	t := b.t
	interval := time.Duration(envInt(t, "BENCH_CONTROLLER_HB_INTERVAL_MS", 2000)) * time.Millisecond
	counts := envList(t, "BENCH_CONTROLLER_HB_BROKERS", b.pickS("1000", "100"), 1)
	var names []string
	for _, n := range counts {
		names = append(names, fmt.Sprintf("%d brokers", n))
	}
	b.interleave(names, func(sys, c string) ctrlRow {
		var n int
		fmt.Sscanf(c, "%d brokers", &n)
		return b.runHeartbeat(sys, n, interval)
	})
}

func (b *ctrlBench) runHeartbeat(sys string, brokers int, interval time.Duration) ctrlRow {
	cq := b.startQuorum(sys, nil, nil)
	defer cq.stop()
	active := cq.active()
	window := time.Duration(b.seconds) * time.Second
	idle := min(window, 10*time.Second)
	time.Sleep(time.Duration(b.warmup) * time.Second)
	idleFrom := time.Now()
	time.Sleep(idle)
	v := map[string]float64{}
	cq.usage(v, active, idleFrom, time.Now())
	idleCores := v["active_cores"]

	f := cq.fleet(brokers, interval)
	defer f.Close()
	time.Sleep(time.Duration(b.warmup) * time.Second)
	from := time.Now()
	profiled := cq.profile(active, fmt.Sprintf("heartbeat-%d", brokers), window)
	time.Sleep(window)
	to := time.Now()
	profiled()
	hb := f.Heartbeats.Summarize(from, to)
	v = map[string]float64{"brokers": float64(brokers), "interval_ms": msOf(interval), "hb_per_s": hb.PerSecond(),
		"hb_p50_ms": msOf(hb.P50), "hb_p99_ms": msOf(hb.P99), "hb_max_ms": msOf(hb.Max), "errors": float64(hb.Requests - hb.OK),
		"active_idle_cores": idleCores}
	cq.usage(v, active, from, to)
	if hb.OK > 0 {
		v["cpu_us_per_hb"] = (v["active_cores"] - idleCores) / hb.PerSecond() * 1e6
	}
	r := ctrlRow{Scenario: "heartbeat", Values: v}
	if len(hb.Errors) > 0 {
		r.Note = fmt.Sprintf("errors by code %v", hb.Errors)
	}
	if u := f.Unfenced(); u != brokers {
		r.Note = strings.TrimSpace(fmt.Sprintf("%s; %d of %d brokers unfenced at the end", r.Note, u, brokers))
	}
	return r
}

// scenarioFailover is scenario 3: BENCH_CONTROLLER_FAILOVER_PARTITIONS partitions (100000;
// quick 2000) in 100-partition topics, BENCH_CONTROLLER_FAILOVER_BROKERS brokers (1000;
// quick 50), 1-partition creates offered at 20/s (retried every 20 ms after a failure), then
// kill -9 of the active controller; BENCH_CONTROLLER_FAILOVER_ROUNDS runs per system (3;
// quick 1), or BENCH_CONTROLLER_ROUNDS when more.
func (b *ctrlBench) scenarioFailover() {
	t := b.t
	partitions := envInt(t, "BENCH_CONTROLLER_FAILOVER_PARTITIONS", b.pick(100000, 2000))
	brokers := envInt(t, "BENCH_CONTROLLER_FAILOVER_BROKERS", b.pick(1000, 50))
	// One kill is a poor sample: the election after it can split the vote and take another
	// election timeout.
	rounds := envInt(t, "BENCH_CONTROLLER_FAILOVER_ROUNDS", b.pick(3, 1))
	c := fmt.Sprintf("%s partitions, %d brokers", thousands(partitions), brokers)
	b.interleaveRounds(max(rounds, b.rounds), []string{c}, func(sys, _ string) ctrlRow { return b.runFailover(sys, partitions, brokers) })
}

func (b *ctrlBench) runFailover(sys string, partitions, brokers int) ctrlRow {
	t := b.t
	cq := b.startQuorum(sys, nil, nil)
	defer cq.stop()
	f := cq.fleet(brokers, 2*time.Second)
	defer f.Close()
	built := cq.build("base", partitions, 100, 8)
	probe := controllerload.StartLoad(cq.ctx, cq.finder, controllerload.CreateTopics("probe", 1, 3),
		controllerload.LoadConfig{Rate: 20, Conns: 4, Retry: true, Timeout: 10 * time.Second})
	defer probe.Stop()
	time.Sleep(time.Duration(b.warmup) * time.Second)
	victim := cq.active()
	t0 := time.Now()
	cq.q.Kill(victim)
	killed := time.Now() // requests sent from now on cannot reach the victim

	v := map[string]float64{"partitions": float64(partitions), "brokers": float64(brokers), "build_s": built}
	bound := time.Duration(b.pick(90, 45)) * time.Second
	var createAt, hbFirst, hbAll time.Time
	for deadline := killed.Add(bound); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		far := time.Now().Add(time.Hour)
		if createAt.IsZero() {
			createAt = firstOK(probe.Samples(killed, far), killed)
		}
		first, all := heartbeatsAfter(f, killed)
		if hbFirst.IsZero() {
			hbFirst = first
		}
		hbAll = all
		if !createAt.IsZero() && !hbAll.IsZero() {
			break
		}
	}
	r := ctrlRow{Scenario: "failover", Values: v}
	for name, at := range map[string]time.Time{"create_gap_ms": createAt, "hb_first_ms": hbFirst, "hb_all_ms": hbAll} {
		if at.IsZero() {
			r.Note = strings.TrimSpace(fmt.Sprintf("%s; no %s within %v", r.Note, name, bound))
			continue
		}
		v[name] = msOf(at.Sub(t0))
	}
	// From the logs: the new raft leader's election and its activation as controller.
	if l, ok := kafkatest.FirstAfter(cq.q.RaftLeads(), t0); ok {
		v["elected_ms"] = msOf(l.At.Sub(t0))
	}
	if a, ok := kafkatest.FirstAfter(cq.q.ControllerActivations(), t0); ok {
		v["activated_ms"] = msOf(a.At.Sub(t0))
	}
	now := cq.active()
	r.Note = strings.TrimSpace(fmt.Sprintf("%s killed node %d, node %d active after", r.Note, victim, now))
	time.Sleep(2 * time.Second)
	if u := f.Unfenced(); u != brokers {
		r.Note += fmt.Sprintf("; %d of %d brokers unfenced after", u, brokers)
	}
	t.Logf("%s failover: %s", sys, r.Note)
	return r
}

// firstOK is the end of the earliest successful request sent after since (zero: none).
func firstOK(samples []controllerload.Sample, since time.Time) time.Time {
	var at time.Time
	for _, s := range samples {
		if s.OK() && !s.Start.Before(since) && (at.IsZero() || s.End.Before(at)) {
			at = s.End
		}
	}
	return at
}

// heartbeatsAfter is when the first broker had a heartbeat answered that it sent after
// since, and when the last of the running brokers did (zero while one has not).
func heartbeatsAfter(f *controllerload.Fleet, since time.Time) (first, all time.Time) {
	byBroker := map[int32]time.Time{}
	for _, s := range f.Heartbeats.Samples(since, time.Now().Add(time.Hour)) {
		if s.OK() && !s.Start.Before(since) {
			if at, ok := byBroker[s.ID]; !ok || s.End.Before(at) {
				byBroker[s.ID] = s.End
			}
		}
	}
	for _, br := range f.Brokers() {
		if br.Stopped() {
			continue
		}
		at, ok := byBroker[br.ID]
		if !ok {
			all = time.Time{}
			break
		}
		if at.After(all) {
			all = at
		}
	}
	for _, at := range byBroker {
		if first.IsZero() || at.Before(first) {
			first = at
		}
	}
	return first, all
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// pickS is pick for strings.
func (b *ctrlBench) pickS(full, quick string) string {
	if b.quick {
		return quick
	}
	return full
}

// thousands writes n as 100k or 1M when it is a round number of those.
func thousands(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// fetchTo writes the body of an HTTP GET of url to path.
func fetchTo(url, path string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// sortedKeys are m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
