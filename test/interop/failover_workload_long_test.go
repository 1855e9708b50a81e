//go:build interoplong

package interop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// failoverWorkload is the clients of a failover run, all through the brokers: an
// idempotent producer of numbered records, a consumer group, an admin loop.
type failoverWorkload struct {
	t          *testing.T
	topic      string
	addrs      []string
	prod, cons *kgo.Client
	stopLoops  context.CancelFunc
	stopCons   context.CancelFunc
	loops      sync.WaitGroup
	consumer   sync.WaitGroup
	once       sync.Once

	mu       sync.Mutex
	sent     int64
	acked    map[int64]bool
	prodErrs int
	prodErr  error
	read     map[int64]int // by the group
	admin    adminOutcomes
}

// adminOutcomes are the admin loop's confirmed results: an operation that failed may
// still have been applied, so it leaves its subject unjudged.
type adminOutcomes struct {
	ok, failed int
	present    map[string]bool // created (answer seen), no deletion tried since
	gone       map[string]bool // deleted (answer seen)
	retention  string          // the last retention.ms set on the topic; "" when the last alter's outcome is unknown
}

func startWorkload(t *testing.T, addrs []string, topic string) *failoverWorkload {
	w := &failoverWorkload{t: t, topic: topic, addrs: addrs, acked: map[int64]bool{}, read: map[int64]int{},
		admin: adminOutcomes{present: map[string]bool{}, gone: map[string]bool{}}}
	var err error
	w.prod, err = kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordDeliveryTimeout(failoverBound), kgo.ProducerLinger(10*time.Millisecond), kgo.MetadataMinAge(250*time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 200 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	w.cons, err = kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumerGroup("failover-readers"), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(250*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cctx, ccancel := context.WithCancel(context.Background())
	w.stopLoops, w.stopCons = cancel, ccancel
	w.loops.Add(2)
	go w.produce(ctx)
	go w.adminLoop(ctx)
	w.consumer.Add(1)
	go w.consume(cctx)
	return w
}

// produce sends record seq (its value) every 20 ms; the callback notes the acks.
func (w *failoverWorkload) produce(ctx context.Context) {
	defer w.loops.Done()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for seq := int64(0); ; seq++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		w.mu.Lock()
		w.sent++
		w.mu.Unlock()
		w.prod.Produce(context.Background(), &kgo.Record{Value: strconv.AppendInt(nil, seq, 10)}, func(r *kgo.Record, err error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			if err != nil {
				w.prodErrs++
				w.prodErr = cmpOr(w.prodErr, err)
				return
			}
			w.acked[seq] = true
		})
	}
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func (w *failoverWorkload) consume(ctx context.Context) {
	defer w.consumer.Done()
	for ctx.Err() == nil {
		fs := w.cons.PollFetches(ctx)
		w.mu.Lock()
		fs.EachRecord(func(r *kgo.Record) {
			if seq, err := strconv.ParseInt(string(r.Value), 10, 64); err == nil {
				w.read[seq]++
			}
		})
		w.mu.Unlock()
	}
}

// adminLoop, every second with fresh connections (see kafkatest.Client.CreateTopic):
// creates churn-n, deletes churn-(n-2), sets the topic's retention.ms.
func (w *failoverWorkload) adminLoop(ctx context.Context) {
	defer w.loops.Done()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(w.addrs...))
		if err != nil {
			w.t.Error(err)
			return
		}
		adm := kadm.NewClient(cl)
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		name := fmt.Sprintf("churn-%d", n)
		_, cerr := adm.CreateTopic(actx, 1, 2, nil, name)
		old := fmt.Sprintf("churn-%d", n-2)
		w.mu.Lock()
		deleting := w.admin.present[old]
		delete(w.admin.present, old)
		w.mu.Unlock()
		var derr error
		if deleting {
			_, derr = adm.DeleteTopic(actx, old)
		}
		v := strconv.Itoa(3600000 + n)
		res, aerr := adm.AlterTopicConfigs(actx, []kadm.AlterConfig{{Name: "retention.ms", Value: &v}}, w.topic)
		aerr = firstErr(aerr, res)
		cancel()
		cl.Close()

		w.mu.Lock()
		a := &w.admin
		count := func(err error) {
			if err == nil {
				a.ok++
			} else {
				a.failed++
			}
		}
		if cerr == nil || errors.Is(cerr, kerr.TopicAlreadyExists) {
			a.present[name] = true
			cerr = nil
		}
		count(cerr)
		if deleting {
			if derr == nil || errors.Is(derr, kerr.UnknownTopicOrPartition) {
				a.gone[old] = true
				derr = nil
			}
			count(derr)
		}
		a.retention = ""
		if aerr == nil {
			a.retention = v
		}
		count(aerr)
		w.mu.Unlock()
	}
}

// waitProgress waits until n more records are acked and read by the group and the
// admin loop has had n/50 more operations answered (50 records a second, one admin round
// a second): the cluster serves every client again.
func (w *failoverWorkload) waitProgress(ctx context.Context, n int) {
	w.mu.Lock()
	acked0, read0, ok0 := len(w.acked), len(w.read), w.admin.ok
	w.mu.Unlock()
	deadline := time.Now().Add(failoverBound)
	for {
		w.mu.Lock()
		acked, read, ok := len(w.acked)-acked0, len(w.read)-read0, w.admin.ok-ok0
		w.mu.Unlock()
		if acked >= n && read >= n && ok >= n/50 {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			w.t.Fatalf("the workload makes no progress: %d more records acked, %d more read by the group, %d more admin operations answered in %v",
				acked, read, ok, failoverBound)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stop ends the producer (every record acked or failed) and the admin loop, lets the
// group read what was acked, and ends the group.
func (w *failoverWorkload) stop() {
	w.once.Do(func() {
		w.stopLoops()
		w.loops.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), failoverBound)
		defer cancel()
		if err := w.prod.Flush(ctx); err != nil {
			w.t.Errorf("producer flush: %v", err)
		}
		w.prod.Close()
		for ctx.Err() == nil && len(w.unread()) > 0 {
			time.Sleep(200 * time.Millisecond)
		}
		w.stopCons()
		w.consumer.Wait()
		w.cons.Close()
	})
}

// unread is the acked records the group has not read.
func (w *failoverWorkload) unread() []int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	var r []int64
	for seq := range w.acked {
		if w.read[seq] == 0 {
			r = append(r, seq)
		}
	}
	slices.Sort(r)
	return r
}

// judge: nothing failed to produce, the group read every acked record, a fresh read of
// the topic from its start holds each acked record (duplicates are counted and logged),
// and the admin loop's confirmed outcomes hold on every broker.
func (w *failoverWorkload) judge(ctx context.Context, addrs []string) {
	t := w.t
	if w.prodErrs > 0 {
		t.Errorf("%d of %d records failed to produce, first: %v", w.prodErrs, w.sent, w.prodErr)
	}
	if u := w.unread(); len(u) > 0 {
		t.Errorf("the group never read %d acked records, e.g. %v", len(u), u[:min(5, len(u))])
	}
	counts := readBack(t, ctx, addrs, w.topic)
	var lost []int64
	dups := 0
	for seq := range w.acked {
		switch c := counts[seq]; {
		case c == 0:
			lost = append(lost, seq)
		case c > 1:
			dups++
		}
	}
	slices.Sort(lost)
	if len(lost) > 0 {
		t.Errorf("%d of %d acked records lost, e.g. %v", len(lost), len(w.acked), lost[:min(5, len(lost))])
	}
	a := w.admin
	t.Logf("workload: %d records sent, %d acked, %d read back (%d acked ones more than once); admin loop: %d operations answered, %d failed",
		w.sent, len(w.acked), len(counts), dups, a.ok, a.failed)

	want := map[string]int{}
	for name := range a.present {
		want[name] = 1
	}
	if err := kafkatest.WaitTopicsEverywhere(ctx, addrs, want); err != nil {
		t.Error(err)
	}
	for _, addr := range addrs {
		have, err := kafkatest.TopicsOn(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		for name := range a.gone {
			if _, ok := have[name]; ok {
				t.Errorf("broker %s still serves %s, deleted by the admin loop", addr, name)
			}
		}
	}
	if a.retention == "" {
		return
	}
	cl := kafkatest.NewClient(t, addrs...)
	rc, err := cl.Admin.DescribeTopicConfigs(ctx, w.topic)
	if err != nil {
		t.Fatal(err)
	}
	c, err := rc.On(w.topic, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range c.Configs {
		if kv.Key == "retention.ms" && (kv.Value == nil || *kv.Value != a.retention) {
			t.Errorf("%s retention.ms %v, want %s (the admin loop's last alter)", w.topic, kv.Value, a.retention)
		}
	}
}

// readBack reads topic from its start to its end offsets (taken now: nothing is produced
// any more) and counts each record number.
func readBack(t *testing.T, ctx context.Context, addrs []string, topic string) map[int64]int {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil || ends.Error() != nil {
		t.Fatalf("end offsets of %s: %v %v", topic, err, ends.Error())
	}
	left := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			left[o.Partition] = o.Offset
		}
	})
	counts := map[int64]int{}
	rctx, cancel := context.WithTimeout(ctx, failoverBound)
	defer cancel()
	for len(left) > 0 {
		fs := cl.PollFetches(rctx)
		if rctx.Err() != nil {
			t.Fatalf("read back %s: partitions %v not read to their end", topic, left)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if seq, err := strconv.ParseInt(string(r.Value), 10, 64); err == nil {
				counts[seq]++
			}
			if end, ok := left[r.Partition]; ok && r.Offset+1 >= end {
				delete(left, r.Partition)
			}
		})
	}
	return counts
}
