package metrics

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// fakeClock is a settable clock for the windows and health checks.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time       { return c.t }
func (c *fakeClock) add(d time.Duration)  { c.t = c.t.Add(d) }
func newClock() *fakeClock                { return &fakeClock{t: time.Unix(1_700_000_000, 0)} }
func fixedView(v View) Source             { return func() (View, bool) { return v, true } }
func (c *fakeClock) fn() func() time.Time { return func() time.Time { return c.t } }

// gather scrapes g into "name{k=v,...}" -> value (histograms: their
// _count).
func gather(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(labels)
			key := mf.GetName()
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				out[key+"_count"] = float64(m.GetHistogram().GetSampleCount())
			case m.GetUntyped() != nil:
				out[key] = m.GetUntyped().GetValue()
			}
		}
	}
	return out
}
