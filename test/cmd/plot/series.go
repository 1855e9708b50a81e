package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// series is one line of the plot: a y column, for one value of the -by
// column when there is one.
type series struct {
	name string
	x, y []float64
}

// seriesOptions say which columns of the CSV to plot.
type seriesOptions struct {
	x  string   // the x column; "" for the first
	y  []string // the y columns
	by string   // split each y column by this column's values; "" for no split
	// byRequired makes a missing by column an error; otherwise (the default
	// -by node_id on a single node's CSV) there is no split.
	byRequired bool
}

// readSeries reads a CSV with a header row into one series per y column
// (and -by value, in order of appearance). Rows whose "final" column is
// true are summaries, not points in time, and are left out.
func readSeries(r io.Reader, o seriesOptions) (xName string, out []series, err error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return "", nil, err
	}
	if len(rows) < 2 {
		return "", nil, fmt.Errorf("no rows under the header")
	}
	header := rows[0]
	col := func(name string) (int, error) {
		i := slices.Index(header, name)
		if i < 0 {
			return 0, fmt.Errorf("no column %q (columns: %s)", name, strings.Join(header, ", "))
		}
		return i, nil
	}
	xName = header[0]
	if o.x != "" {
		xName = o.x
	}
	xi, err := col(xName)
	if err != nil {
		return "", nil, err
	}
	if len(o.y) == 0 {
		return "", nil, fmt.Errorf("name the columns to plot (columns: %s)", strings.Join(header, ", "))
	}
	yi := make([]int, len(o.y))
	for i, name := range o.y {
		if yi[i], err = col(name); err != nil {
			return "", nil, err
		}
	}
	bi, finalCol := -1, slices.Index(header, "final")
	if o.by != "" && (o.byRequired || slices.Contains(header, o.by)) {
		if bi, err = col(o.by); err != nil {
			return "", nil, err
		}
	}
	index := map[string]int{} // series name -> index in out
	for n, row := range rows[1:] {
		if finalCol >= 0 && row[finalCol] == "true" {
			continue
		}
		x, err := number(row, xi, header, n)
		if err != nil {
			return "", nil, err
		}
		for i, c := range yi {
			if row[c] == "" {
				continue // no value: no point
			}
			y, err := number(row, c, header, n)
			if err != nil {
				return "", nil, err
			}
			name := o.y[i]
			switch {
			case bi >= 0 && len(yi) == 1:
				name = fmt.Sprintf("%s=%s", o.by, row[bi]) // the one column is the title's
			case bi >= 0:
				name = fmt.Sprintf("%s %s=%s", name, o.by, row[bi])
			}
			k, ok := index[name]
			if !ok {
				k = len(out)
				index[name] = k
				out = append(out, series{name: name})
			}
			out[k].x, out[k].y = append(out[k].x, x), append(out[k].y, y)
		}
	}
	if len(out) == 0 {
		return "", nil, fmt.Errorf("no rows to plot (only summaries)")
	}
	return xName, out, nil
}

func number(row []string, c int, header []string, n int) (float64, error) {
	f, err := strconv.ParseFloat(row[c], 64)
	if err != nil {
		return 0, fmt.Errorf("row %d, column %s: %q is not a number", n+1, header[c], row[c])
	}
	return f, nil
}
