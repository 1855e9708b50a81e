package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// draw writes the series as lines to path, in the format its extension
// names.
func draw(path, title, xName string, ss []series) error {
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
	for i, s := range ss {
		xys := make(plotter.XYs, len(s.x))
		for j := range s.x {
			xys[j] = plotter.XY{X: s.x[j], Y: s.y[j]}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	// Headroom above the lines for the legend, which sits top right.
	p.Y.Max += (p.Y.Max - p.Y.Min) * min(0.07*float64(len(ss)), 1)
	return p.Save(24*vg.Centimeter, 14*vg.Centimeter, path)
}
