package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// style is how the series are drawn.
type style struct {
	logY   bool // log-scale y axis
	points bool // a glyph at every point
}

// draw writes the series as lines to path, in the format its extension
// names.
func draw(path, title, xName string, ss []series, st style) error {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".png", ".svg", ".pdf":
	default:
		return fmt.Errorf("%s: the output must end in .png, .svg or .pdf", path)
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xName
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	if st.logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	drawn := 0
	for i, s := range ss {
		var xys plotter.XYs
		for j := range s.x {
			if st.logY && s.y[j] <= 0 {
				continue // no place on a log scale
			}
			xys = append(xys, plotter.XY{X: s.x[j], Y: s.y[j]})
		}
		if len(xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
		p.Add(l)
		if st.points {
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			sc.Color = l.Color
			sc.Shape = plotutil.Shape(i)
			p.Add(sc)
			p.Legend.Add(s.name, l, sc)
		} else {
			p.Legend.Add(s.name, l)
		}
		drawn++
	}
	if drawn == 0 {
		return fmt.Errorf("no point to draw")
	}
	// Headroom above the lines for the legend, which sits top right.
	if st.logY {
		p.Y.Max *= math.Pow(p.Y.Max/p.Y.Min, min(0.07*float64(len(ss)), 1))
	} else {
		p.Y.Max += (p.Y.Max - p.Y.Min) * min(0.07*float64(len(ss)), 1)
	}
	return p.Save(24*vg.Centimeter, 14*vg.Centimeter, path)
}
