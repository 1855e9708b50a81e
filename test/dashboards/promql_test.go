package dashboards

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseQuery(t *testing.T) {
	cases := []struct {
		expr     string
		want     []Selector
		grouping []string
	}{
		{`up`, []Selector{{Metric: "up"}}, nil},
		{`kafka_server_raft_metrics_current_state{job=~"$job", state="leader"} == 1`,
			[]Selector{{"kafka_server_raft_metrics_current_state", []string{"job", "state"}}}, nil},
		{`histogram_quantile(0.99, sum by (instance, le) (rate(x_bucket{instance=~"${instance:regex}"}[$__rate_interval])))`,
			[]Selector{{"x_bucket", []string{"instance"}}}, []string{"instance", "le"}},
		{`sum(rate(a_total[5m] offset 1h)) without (api) / on (instance) group_left (listener) b`,
			[]Selector{{Metric: "a_total"}, {Metric: "b"}}, []string{"api", "instance", "listener"}},
		{`max_over_time(a[1h:5m]) > bool 0.5e-3 and ignoring(x) b @ start()`,
			[]Selector{{Metric: "a"}, {Metric: "b"}}, []string{"x"}},
		{`{__name__="a:rate5m", le!~'0\\.1|"x"'} or vector(0)`, []Selector{{"a:rate5m", []string{"le"}}}, nil},
		{"topk(5, a) # the biggest\n  + 0x1F", []Selector{{Metric: "a"}}, nil},
		{`count_values("value", a) * -Inf`, []Selector{{Metric: "a"}}, nil},
	}
	for _, c := range cases {
		q, err := ParseQuery(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if !reflect.DeepEqual(q.Selectors, c.want) || !reflect.DeepEqual(q.Grouping, c.grouping) {
			t.Errorf("%s:\n got %+v by %v\nwant %+v by %v", c.expr, q.Selectors, q.Grouping, c.want, c.grouping)
		}
	}
}

// What the scanner cannot read is an error, never a silently unchecked query.
func TestParseQueryRejects(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{`rat(a[5m])`, `unknown function "rat"`},
		{`label_replace(a, "x", "$1", "y", "(.*)")`, `unknown function "label_replace"`},
		{`sum by (a`, `label list`},
		{`sum by a (b)`, `without a label list`},
		{`a{b="c"`, `label matcher`},
		{`a{b=c}`, `label matcher`},
		{`a{b="c}`, `cannot read`},
		{`a[5m`, `unclosed [`},
		{`a}`, `unbalanced }`},
		{`{__name__=~"a.*"}`, `only an exact metric name`},
		{`{b="c"}`, `without a metric name`},
		{`1 + 2`, `reads no metric`},
		{`a ! b`, `cannot read`},
		{`${job`, `cannot read`},
	} {
		_, err := ParseQuery(c.expr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.expr, err, c.want)
		}
	}
}

func TestParseVariableQuery(t *testing.T) {
	q, err := parseVariableQuery(`label_values(a{job=~"$job"}, instance)`)
	if err != nil || !reflect.DeepEqual(q, Query{Selectors: []Selector{{"a", []string{"job"}}}, Grouping: []string{"instance"}}) {
		t.Errorf("label_values: %+v, %v", q, err)
	}
	if q, err := parseVariableQuery(`query_result(topk(1, a))`); err != nil || len(q.Selectors) != 1 {
		t.Errorf("query_result: %+v, %v", q, err)
	}
	for _, bad := range []string{`label_values(instance)`, `metrics(a_.*)`} {
		if _, err := parseVariableQuery(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
