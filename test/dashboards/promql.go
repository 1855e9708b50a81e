package dashboards

import (
	"fmt"
	"strings"
)

// Selector is one series selector of a query: a metric name and the labels
// its matchers name.
type Selector struct {
	Metric string
	Labels []string
}

// Query is what a PromQL expression asks of the series it reads.
type Query struct {
	Selectors []Selector
	// Grouping are the labels of by, without, on, ignoring, group_left and
	// group_right clauses: each must be a label of a series the query reads.
	Grouping []string
}

// ParseQuery scans a PromQL expression, with Grafana's variables in it, for
// the metrics and labels it uses. It is a scanner, not a parser: it checks
// what a dashboard needs checked (every name it reads exists, every function
// is PromQL's) and rejects what it cannot read, rather than guessing.
func ParseQuery(expr string) (Query, error) {
	toks, err := lex(expr)
	if err != nil {
		return Query{}, err
	}
	s := &scanner{toks: toks}
	if err := s.scan(); err != nil {
		return Query{}, fmt.Errorf("%q: %w", expr, err)
	}
	if len(s.q.Selectors) == 0 {
		return Query{}, fmt.Errorf("%q reads no metric", expr)
	}
	return s.q, nil
}

type scanner struct {
	toks []token
	i    int
	q    Query
}

func (s *scanner) peek(k int) token {
	if s.i+k < len(s.toks) {
		return s.toks[s.i+k]
	}
	return token{kind: tEOF}
}

func (s *scanner) scan() error {
	for s.i < len(s.toks) {
		t := s.toks[s.i]
		var err error
		switch t.kind {
		case tIdent:
			err = s.ident(t.text)
		case tPunct:
			err = s.punct(t.text)
		default: // numbers, strings, operators, Grafana variables
			s.i++
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *scanner) ident(name string) error {
	next := s.peek(1)
	switch {
	case groupingKeywords[name]:
		s.i++
		if s.peek(0).text != "(" {
			if name == "group_left" || name == "group_right" {
				return nil // no extra labels
			}
			return fmt.Errorf("%s without a label list", name)
		}
		labels, err := s.labelList()
		s.q.Grouping = append(s.q.Grouping, labels...)
		return err
	case otherKeywords[name]:
		s.i++
		return nil
	case next.text == "(" || (next.kind == tIdent && (next.text == "by" || next.text == "without")):
		if !functions[name] && !aggregations[name] {
			return fmt.Errorf("unknown function %q", name)
		}
		s.i++
		return nil
	}
	s.i++
	sel := Selector{Metric: name}
	if s.peek(0).text == "{" {
		labels, _, err := s.matchers()
		if err != nil {
			return err
		}
		sel.Labels = labels
	}
	s.q.Selectors = append(s.q.Selectors, sel)
	return nil
}

func (s *scanner) punct(p string) error {
	switch p {
	case "{": // a selector by matchers only: {__name__="x", ...}
		labels, name, err := s.matchers()
		if err != nil {
			return err
		}
		if name == "" {
			return fmt.Errorf("selector without a metric name")
		}
		s.q.Selectors = append(s.q.Selectors, Selector{Metric: name, Labels: labels})
		return nil
	case "[": // a range or subquery: durations, a step, Grafana variables
		for s.i++; s.peek(0).text != "]"; s.i++ {
			if s.peek(0).kind == tEOF {
				return fmt.Errorf("unclosed [")
			}
		}
		s.i++
		return nil
	case "}", "]":
		return fmt.Errorf("unbalanced %s", p)
	}
	s.i++
	return nil
}

// labelList reads "(a, b, ...)" at the current token.
func (s *scanner) labelList() ([]string, error) {
	var labels []string
	for s.i++; ; s.i++ {
		t := s.peek(0)
		switch {
		case t.text == ")":
			s.i++
			return labels, nil
		case t.text == ",":
		case t.kind == tIdent:
			labels = append(labels, t.text)
		default:
			return nil, fmt.Errorf("%q in a label list", t.text)
		}
	}
}

// matchers reads "{label op "value", ...}" at the current token: the labels
// named, and the metric name a __name__="x" matcher gives.
func (s *scanner) matchers() (labels []string, name string, err error) {
	for s.i++; ; {
		t := s.peek(0)
		switch {
		case t.text == "}":
			s.i++
			return labels, name, nil
		case t.text == ",":
			s.i++
			continue
		case t.kind != tIdent:
			return nil, "", fmt.Errorf("%q in a label matcher", t.text)
		}
		op, val := s.peek(1), s.peek(2)
		if op.kind != tOp || !matchOps[op.text] || val.kind != tString {
			return nil, "", fmt.Errorf("label matcher %s %s %s", t.text, op.text, val.text)
		}
		if t.text == "__name__" {
			if op.text != "=" {
				return nil, "", fmt.Errorf("__name__%s: only an exact metric name can be checked", op.text)
			}
			name = unquote(val.text)
		} else {
			labels = append(labels, t.text)
		}
		s.i += 3
	}
}

func unquote(s string) string {
	if len(s) >= 2 {
		s = s[1 : len(s)-1]
	}
	return strings.NewReplacer(`\"`, `"`, `\'`, `'`, `\\`, `\`).Replace(s)
}

var matchOps = map[string]bool{"=": true, "!=": true, "=~": true, "!~": true}

var groupingKeywords = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true,
	"group_left": true, "group_right": true}

// otherKeywords are words of PromQL that name no series.
var otherKeywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true,
	"atan2": true, "Inf": true, "inf": true, "NaN": true, "nan": true}

var aggregations = map[string]bool{}

var functions = map[string]bool{}

func init() {
	for _, a := range strings.Fields(`sum min max avg group stddev stdvar count count_values bottomk topk
		quantile limitk limit_ratio`) {
		aggregations[a] = true
	}
	// label_replace and label_join are left out on purpose: the labels they
	// make would not be found on the series, and the check would fail for
	// the wrong reason.
	for _, f := range strings.Fields(`abs absent absent_over_time ceil changes clamp clamp_max clamp_min
		day_of_month day_of_week day_of_year days_in_month delta deriv exp floor histogram_avg
		histogram_count histogram_fraction histogram_quantile histogram_stddev histogram_stdvar
		histogram_sum holt_winters double_exponential_smoothing hour idelta increase irate ln log2
		log10 minute month predict_linear rate resets round scalar sgn sort sort_desc sort_by_label
		sort_by_label_desc sqrt time timestamp vector year avg_over_time min_over_time max_over_time
		sum_over_time count_over_time quantile_over_time stddev_over_time stdvar_over_time
		last_over_time present_over_time mad_over_time acos acosh asin asinh atan atanh cos cosh sin
		sinh tan tanh deg pi rad start end`) {
		functions[f] = true
	}
}
