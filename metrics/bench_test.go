package metrics

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/network"
)

// BenchmarkLeaderBatchEvents: what a leader's metrics cost per appended
// and committed batch (Appended then Committed, as the driver calls them).
func BenchmarkLeaderBatchEvents(b *testing.B) {
	r := newMetrics(fixedView(View{}), time.Now, time.Now).Raft()
	b.ReportAllocs()
	for b.Loop() {
		r.Appended(100)
		r.Committed(100, 3*time.Millisecond)
	}
}

// BenchmarkRequestEvent: the per-request cost of the network hook.
func BenchmarkRequestEvent(b *testing.B) {
	m := newMetrics(fixedView(View{}), time.Now, time.Now)
	d := network.RequestDone{Listener: "CONTROLLER", APIKey: 1, Response: kmsg.NewPtrFetchResponse(), Took: time.Millisecond}
	b.ReportAllocs()
	for b.Loop() {
		m.OnRequest(d)
	}
}

// BenchmarkScrape: one /metrics collection of a leader's view.
func BenchmarkScrape(b *testing.B) {
	v := leaderView(b)
	m := newMetrics(fixedView(v), time.Now, time.Now)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Registry().Gather(); err != nil {
			b.Fatal(err)
		}
	}
}
