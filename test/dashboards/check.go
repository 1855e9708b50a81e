package dashboards

import (
	"errors"
	"fmt"
	"io"
	"slices"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Exposed is what a node's /metrics offers a query: each series name, with
// the labels its series carry. A histogram x is x_bucket (with le), x_sum
// and x_count; a summary x is x (with quantile), x_sum and x_count.
type Exposed map[string]map[string]bool

// targetLabels are the labels Prometheus attaches to every scraped series.
var targetLabels = []string{"job", "instance"}

// ParseExposed reads a /metrics answer in Prometheus' text format.
func ParseExposed(r io.Reader) (Exposed, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	e := Exposed{}
	for name, f := range fams {
		e.addFamily(name, f)
	}
	return e, nil
}

func (e Exposed) addFamily(name string, f *dto.MetricFamily) {
	add := func(series string, extra ...string) {
		ls := e[series]
		if ls == nil {
			ls = map[string]bool{}
			e[series] = ls
		}
		for _, l := range targetLabels {
			ls[l] = true
		}
		for _, l := range extra {
			ls[l] = true
		}
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				ls[lp.GetName()] = true
			}
		}
	}
	switch f.GetType() {
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		add(name+"_bucket", "le")
		add(name + "_sum")
		add(name + "_count")
	case dto.MetricType_SUMMARY:
		add(name, "quantile")
		add(name + "_sum")
		add(name + "_count")
	default:
		add(name)
	}
}

// Check reports every metric q reads that e lacks, every matcher label its
// metric lacks, and every grouping label none of q's metrics has.
func (e Exposed) Check(q Query) error {
	var errs []error
	for _, s := range q.Selectors {
		labels, ok := e[s.Metric]
		if !ok {
			errs = append(errs, fmt.Errorf("no metric %s", s.Metric))
			continue
		}
		for _, l := range s.Labels {
			if !labels[l] {
				errs = append(errs, fmt.Errorf("metric %s has no label %s", s.Metric, l))
			}
		}
	}
	for _, l := range q.Grouping {
		if !slices.ContainsFunc(q.Selectors, func(s Selector) bool { return e[s.Metric][l] }) {
			errs = append(errs, fmt.Errorf("no metric of the query has label %s", l))
		}
	}
	return errors.Join(errs...)
}
