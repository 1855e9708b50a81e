package dashboards

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// KraftdPath is kraftd's Grafana dashboard, as imported into Grafana, relative to this
// package's directory (the directory go test runs in).
const KraftdPath = "../../dashboards/kraftd.json"

// PanelQuery is one query of a dashboard, with where it is.
type PanelQuery struct {
	Where string // panel title and refId, or "variable NAME"
	Expr  string
	Query Query
}

// dashboard is the part of Grafana's dashboard model that holds queries.
type dashboard struct {
	Panels     []panel `json:"panels"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []struct {
			Name string `json:"name"`
			Expr string `json:"expr"`
		} `json:"list"`
	} `json:"annotations"`
}

type panel struct {
	Title   string  `json:"title"`
	Type    string  `json:"type"`
	Panels  []panel `json:"panels"` // a collapsed row's
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

type variable struct {
	Name  string          `json:"name"`
	Type  string          `json:"type"`
	Query json.RawMessage `json:"query"` // a string, or {"query": "..."} since Grafana 9
}

// Queries reads every PromQL query of a Grafana dashboard: its panels'
// targets (collapsed rows' included), query variables and annotations.
func Queries(dashboardJSON []byte) ([]PanelQuery, error) {
	var d dashboard
	if err := json.Unmarshal(dashboardJSON, &d); err != nil {
		return nil, err
	}
	var out []PanelQuery
	add := func(where, expr string, parse func(string) (Query, error)) error {
		q, err := parse(expr)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		out = append(out, PanelQuery{Where: where, Expr: expr, Query: q})
		return nil
	}
	var walk func([]panel) error
	walk = func(ps []panel) error {
		for _, p := range ps {
			for _, t := range p.Targets {
				if err := add(fmt.Sprintf("panel %q query %s", p.Title, t.RefID), t.Expr, ParseQuery); err != nil {
					return err
				}
			}
			if err := walk(p.Panels); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(d.Panels); err != nil {
		return nil, err
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		expr, err := variableQuery(v.Query)
		if err != nil {
			return nil, fmt.Errorf("variable %s: %w", v.Name, err)
		}
		if err := add("variable "+v.Name, expr, parseVariableQuery); err != nil {
			return nil, err
		}
	}
	for _, a := range d.Annotations.List {
		if a.Expr != "" {
			if err := add("annotation "+a.Name, a.Expr, ParseQuery); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func variableQuery(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var o struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return "", fmt.Errorf("query %s: %w", raw, err)
	}
	return o.Query, nil
}

var (
	labelValues = regexp.MustCompile(`^label_values\((.+),\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)$`)
	queryResult = regexp.MustCompile(`^query_result\((.+)\)$`)
)

// parseVariableQuery reads the Prometheus data source's variable queries:
// label_values(SELECTOR, LABEL) and query_result(EXPR). label_values(LABEL)
// is refused: without a metric it cannot be checked, and would list values
// from every job in Prometheus.
func parseVariableQuery(expr string) (Query, error) {
	expr = strings.TrimSpace(expr)
	if m := labelValues.FindStringSubmatch(expr); m != nil {
		q, err := ParseQuery(m[1])
		q.Grouping = append(q.Grouping, m[2])
		return q, err
	}
	if m := queryResult.FindStringSubmatch(expr); m != nil {
		return ParseQuery(m[1])
	}
	return Query{}, fmt.Errorf("variable query %q: want label_values(SELECTOR, LABEL) or query_result(EXPR)", expr)
}
