//go:build interoplong

package interop

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/admin"
	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// Kafka's defaults, which the harness leaves alone: broker.session.timeout.ms on the
// controllers, broker.heartbeat.interval.ms on the brokers.
const (
	loadSession   = 9 * time.Second
	loadHeartbeat = 2 * time.Second
	loadTopic     = "load"
	loadGroup     = "load-group"
)

// TestActiveBrokerKillUnderLoadLong: a kraftd-only quorum (the active side on) with three
// Kafka 4.4.0 brokers; an idempotent franz-go producer (acks=all) writes numbered records
// without pause to a topic of six partitions, three replicas and min.insync.replicas=2,
// while a consumer group reads them. The broker leading the most partitions is killed -9:
// it is fenced once its session expires (the time from the kill to its leaving the brokers'
// metadata is measured and logged; bound: before a second session), and leadership and
// the ISRs move off it (kadm). Restarted, it is back in every ISR (AlterPartition). Then
// the broker leading the most partitions is sent SIGTERM: the controller grants its
// controlled shutdown, it leads nothing within half a session of its exit (the time is
// measured and logged);
// restarted, the ISRs are whole again. Every acknowledged record is then read back exactly
// once, and the group has seen every one. The same scenario then runs on three Kafka
// controllers, as the reference for the times measured.
func TestActiveBrokerKillUnderLoadLong(t *testing.T) {
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	for _, side := range []kafkatest.Side{kafkatest.SideKraftd, kafkatest.SideKafka} {
		t.Run(string(side), func(t *testing.T) { brokerKillUnderLoad(t, env, side) })
	}
}

func brokerKillUnderLoad(t *testing.T, env *kafkatest.Env, side kafkatest.Side) {
	t.Logf("load average at the start: %s", procLoadAverage())
	mc := kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{side, side, side}, Controllers: true}
	if side == kafkatest.SideKraftd {
		mc.KraftdProps = kafkatest.Props{config.ActiveControllerKey: "true"}
	}
	q := env.NewMixedRaft(t, mc)
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	if _, _, err := q.WaitLeader(0, activeBound); err != nil {
		t.Fatal(err)
	}
	ids := []int32{101, 102, 103}
	started := q.StartBrokers(ids...)
	brokers := map[int32]*kafkatest.Broker{}
	all := slices.Clone(started)
	var seeds []string
	for _, b := range started {
		brokers[b.NodeID] = b
		seeds = append(seeds, b.Addr)
	}
	t.Cleanup(func() { keepBrokerLogs(t, q, all...) })
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	cl := kafkatest.NewClient(t, seeds...)
	waitBrokers(t, ctx, cl, ids)

	minISR := "2"
	for {
		resp, err := cl.Admin.CreateTopic(ctx, 6, 3, map[string]*string{"min.insync.replicas": &minISR}, loadTopic)
		if err == nil && resp.Err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("create %s: %v %v", loadTopic, err, resp.Err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	live := func() []*kafkatest.Broker {
		var bs []*kafkatest.Broker
		for _, id := range ids {
			if exited, _ := brokers[id].Exited(); !exited {
				bs = append(bs, brokers[id])
			}
		}
		return bs
	}
	waitPartsWithin := func(bound time.Duration, what string, ok func([]kmsg.MetadataResponseTopicPartition) bool) time.Duration {
		t.Helper()
		start := time.Now()
		deadline := start.Add(bound)
		for {
			all := true
			for _, b := range live() {
				parts, err := sbsMetadata(ctx, b.Addr)
				if err != nil || !ok(parts[loadTopic]) {
					all = false
					break
				}
			}
			if all {
				return time.Since(start)
			}
			if time.Now().After(deadline) {
				t.Fatalf("the brokers' metadata never showed %s within %v", what, bound)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitParts := func(what string, ok func([]kmsg.MetadataResponseTopicPartition) bool) time.Duration {
		t.Helper()
		return waitPartsWithin(activeBound, what, ok)
	}
	whole := func(ps []kmsg.MetadataResponseTopicPartition) bool {
		return len(ps) == 6 && !slices.ContainsFunc(ps, func(p kmsg.MetadataResponseTopicPartition) bool { return p.Leader < 0 || len(p.ISR) != 3 })
	}
	waitParts("every partition led with three in-sync replicas", whole)

	p := startLoad(t, ctx, seeds)
	g := startGroupReader(t, ctx, seeds)
	p.waitAcked(t, 500)

	// kill -9 of the broker leading the most partitions.
	victim := mostLeader(t, ctx, cl)
	brokers[victim].Kill()
	killedAt := time.Now()
	fenced := waitUnlisted(t, ctx, live(), victim, killedAt)
	t.Logf("%s controllers: broker %d killed -9 while leading partitions: fenced (gone from the brokers' metadata) after %v; session %v, heartbeat every %v",
		side, victim, fenced.Round(10*time.Millisecond), loadSession, loadHeartbeat)
	if fenced > 2*loadSession {
		t.Errorf("broker %d fenced %v after its kill: a second session went by", victim, fenced)
	}
	waitParts(fmt.Sprintf("leadership and ISRs off broker %d", victim), func(ps []kmsg.MetadataResponseTopicPartition) bool {
		return len(ps) == 6 && !slices.ContainsFunc(ps, func(p kmsg.MetadataResponseTopicPartition) bool {
			return p.Leader < 0 || p.Leader == victim || slices.Contains(p.ISR, victim)
		})
	})
	t.Logf("leadership and ISRs off broker %d %v after the kill", victim, time.Since(killedAt).Round(10*time.Millisecond))
	logTopic(t, ctx, cl, "after the kill")
	p.waitAcked(t, p.ackedCount()+300) // writes go on with one broker down (min.insync.replicas=2)

	restart := func(id int32) {
		t.Helper()
		old := brokers[id]
		cfg := q.BrokerConfig(id)
		cfg.NoFormat, cfg.Dir, cfg.Port = true, old.LogDir, old.Port
		restartAt := time.Now()
		nb := env.StartBroker(t, cfg)
		brokers[id] = nb
		all = append(all, nb)
		up := time.Since(restartAt)
		back := waitParts("every ISR whole again", whole)
		t.Logf("broker %d restarted: started after %v, back in every ISR %v later", id, up.Round(10*time.Millisecond), back.Round(10*time.Millisecond))
		logTopic(t, ctx, cl, fmt.Sprintf("after broker %d's restart", id))
	}
	restart(victim)
	p.waitAcked(t, p.ackedCount()+300)

	// SIGTERM: a controlled shutdown the controller grants; the broker leads nothing when it
	// exits.
	victim = mostLeader(t, ctx, cl)
	b := brokers[victim]
	b.Terminate()
	termAt := time.Now()
	granted := time.Duration(-1)
	for {
		if granted < 0 && strings.Contains(b.Log(), "The controller has asked us to exit controlled shutdown") {
			granted = time.Since(termAt)
		}
		select {
		case <-b.Done():
		case <-time.After(50 * time.Millisecond):
			if time.Since(termAt) > activeBound {
				t.Fatalf("broker %d did not exit within %v of SIGTERM", victim, activeBound)
			}
			continue
		}
		break
	}
	exited := time.Since(termAt)
	if granted < 0 && strings.Contains(b.Log(), "The controller has asked us to exit controlled shutdown") {
		granted = exited
	}
	if granted < 0 {
		t.Errorf("broker %d exited without its controlled shutdown granted:\n%s", victim, lastLines(b.Log(), 30))
	}
	t.Logf("%s controllers: broker %d SIGTERM: controlled shutdown granted after %v, process exited after %v", side, victim,
		granted.Round(10*time.Millisecond), exited.Round(10*time.Millisecond))
	// Its leadership moved before the controller let it go, not when a session expired
	// later: half a session after its exit (its last heartbeat) at most.
	waitPartsWithin(loadSession/2, fmt.Sprintf("no partition led by broker %d", victim), func(ps []kmsg.MetadataResponseTopicPartition) bool {
		return len(ps) == 6 && !slices.ContainsFunc(ps, func(p kmsg.MetadataResponseTopicPartition) bool {
			return p.Leader < 0 || p.Leader == victim
		})
	})
	logTopic(t, ctx, cl, "after the controlled shutdown")
	p.waitAcked(t, p.ackedCount()+300)
	restart(victim)
	p.waitAcked(t, p.ackedCount()+300)

	acked, failed := p.stop(t, ctx)
	t.Logf("producer: %d records acknowledged, %d failed", len(acked), failed)
	readBackOnce(t, ctx, seeds, acked)
	g.waitAll(t, acked)
	t.Logf("load average at the end: %s", procLoadAverage())
}

// loadProducer writes records numbered from 0 with an idempotent, acks=all producer.
type loadProducer struct {
	cl     *kgo.Client
	stopCh chan struct{}
	done   chan struct{}
	mu     sync.Mutex
	acked  map[string]bool
	failed int
	errs   []error
}

func startLoad(t *testing.T, ctx context.Context, seeds []string) *loadProducer {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(loadTopic),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(5*time.Millisecond),
		kgo.MaxBufferedRecords(2000), kgo.MetadataMinAge(250*time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 200 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	p := &loadProducer{cl: cl, stopCh: make(chan struct{}), done: make(chan struct{}), acked: map[string]bool{}}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(2 * time.Millisecond) // about 500 records/s
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-p.stopCh:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			v := fmt.Sprintf("n-%07d", i)
			cl.Produce(ctx, &kgo.Record{Key: []byte(v), Value: []byte(v)}, func(r *kgo.Record, err error) {
				p.mu.Lock()
				defer p.mu.Unlock()
				if err != nil {
					p.failed++
					if len(p.errs) < 5 {
						p.errs = append(p.errs, err)
					}
					return
				}
				p.acked[string(r.Value)] = true
			})
		}
	}()
	return p
}

func (p *loadProducer) ackedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.acked)
}

// waitAcked waits until n records are acknowledged (writes go on).
func (p *loadProducer) waitAcked(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(activeBound)
	for p.ackedCount() < n {
		if time.Now().After(deadline) {
			p.mu.Lock()
			defer p.mu.Unlock()
			t.Fatalf("only %d of %d records acknowledged within %v (%d failed: %v)", len(p.acked), n, activeBound, p.failed, p.errs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends the writes, waits for every record in flight and returns the acknowledged ones.
func (p *loadProducer) stop(t *testing.T, ctx context.Context) ([]string, int) {
	t.Helper()
	close(p.stopCh)
	<-p.done
	fctx, cancel := context.WithTimeout(ctx, activeBound)
	defer cancel()
	if err := p.cl.Flush(fctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed > 0 {
		t.Logf("%d records failed, e.g. %v", p.failed, p.errs)
	}
	var acked []string
	for v := range p.acked {
		acked = append(acked, v)
	}
	slices.Sort(acked)
	return acked, p.failed
}

// readBackOnce reads the topic from its start to its end offsets and requires every
// acknowledged value exactly once (the producer is idempotent: no value twice at all).
func readBackOnce(t *testing.T, ctx context.Context, seeds []string, acked []string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(loadTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, loadTopic)
	if err != nil {
		t.Fatal(err)
	}
	remaining := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			remaining[o.Partition] = o.Offset
		}
	})
	seen := map[string]int{}
	rctx, cancel := context.WithTimeout(ctx, activeBound)
	defer cancel()
	for len(remaining) > 0 {
		fs := cl.PollFetches(rctx)
		if rctx.Err() != nil {
			t.Fatalf("read back: partitions %v not read to their end: %v", remaining, rctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			seen[string(r.Value)]++
			if end, ok := remaining[r.Partition]; ok && r.Offset+1 >= end {
				delete(remaining, r.Partition)
			}
		})
	}
	lost, dup := 0, 0
	for _, v := range acked {
		if seen[v] == 0 {
			if lost < 5 {
				t.Errorf("acknowledged record %s lost", v)
			}
			lost++
		}
	}
	for v, n := range seen {
		if n > 1 {
			if dup < 5 {
				t.Errorf("record %s read %d times", v, n)
			}
			dup++
		}
	}
	t.Logf("read back %d distinct records (%d acknowledged): %d acknowledged lost, %d duplicated", len(seen), len(acked), lost, dup)
}

// groupReader consumes the topic in a consumer group and remembers every value seen.
type groupReader struct {
	mu   sync.Mutex
	seen map[string]bool
	stop context.CancelFunc
	done chan struct{}
}

func startGroupReader(t *testing.T, ctx context.Context, seeds []string) *groupReader {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumerGroup(loadGroup), kgo.ConsumeTopics(loadTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	gctx, cancel := context.WithCancel(ctx)
	g := &groupReader{seen: map[string]bool{}, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(g.done)
		defer cl.Close()
		for gctx.Err() == nil {
			cl.PollFetches(gctx).EachRecord(func(r *kgo.Record) {
				g.mu.Lock()
				g.seen[string(r.Value)] = true
				g.mu.Unlock()
			})
		}
	}()
	t.Cleanup(func() { cancel(); <-g.done })
	return g
}

// waitAll waits until the group has seen every acknowledged value, then stops it.
func (g *groupReader) waitAll(t *testing.T, acked []string) {
	t.Helper()
	deadline := time.Now().Add(activeBound)
	for {
		g.mu.Lock()
		missing := 0
		for _, v := range acked {
			if !g.seen[v] {
				missing++
			}
		}
		g.mu.Unlock()
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the consumer group never saw %d of the %d acknowledged records", missing, len(acked))
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	g.stop()
	<-g.done
}

// mostLeader is the broker leading the most partitions of the topic (kadm).
func mostLeader(t *testing.T, ctx context.Context, cl *kafkatest.Client) int32 {
	t.Helper()
	td, err := cl.Admin.ListTopics(ctx, loadTopic)
	if err != nil {
		t.Fatal(err)
	}
	leads := map[int32]int{}
	for _, p := range td[loadTopic].Partitions {
		leads[p.Leader]++
	}
	best := int32(-1)
	for id, n := range leads {
		if best < 0 || n > leads[best] || (n == leads[best] && id < best) {
			best = id
		}
	}
	return best
}

// logTopic logs the topic's leaders and ISRs as a broker describes them (kadm).
func logTopic(t *testing.T, ctx context.Context, cl *kafkatest.Client, when string) {
	t.Helper()
	td, err := cl.Admin.ListTopics(ctx, loadTopic)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, p := range td[loadTopic].Partitions.Sorted() {
		fmt.Fprintf(&b, " p%d leader %d isr %v;", p.Partition, p.Leader, p.ISR)
	}
	t.Logf("%s:%s", when, b.String())
}

// waitUnlisted waits until no broker of bs lists id among its brokers (a fenced broker is
// not listed) and returns the time since since.
func waitUnlisted(t *testing.T, ctx context.Context, bs []*kafkatest.Broker, id int32, since time.Time) time.Duration {
	t.Helper()
	for {
		listed := false
		for _, b := range bs {
			rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			resp, err := admin.Request(rctx, b.Addr, kmsg.NewPtrMetadataRequest())
			cancel()
			if err != nil || slices.ContainsFunc(resp.(*kmsg.MetadataResponse).Brokers,
				func(m kmsg.MetadataResponseBroker) bool { return m.NodeID == id }) {
				listed = true
				break
			}
		}
		if !listed {
			return time.Since(since)
		}
		if time.Since(since) > activeBound {
			t.Fatalf("broker %d still listed %v after it was killed", id, activeBound)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// procLoadAverage is /proc/loadavg's first three fields.
func procLoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return err.Error()
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
