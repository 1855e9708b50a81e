// Command plot draws columns of a CSV time series, as written by
// `controller test-kraft-server-start --stats-format csv` and
// `benchquorum -csv DIR`, into a PNG, SVG or PDF:
//
//	go run ./cmd/plot [-o OUT.png|.svg|.pdf] [-x COLUMN] [-by COLUMN] [-title TEXT] FILE.csv COLUMN...
//
// The x axis is the first column (elapsed_sec for the stats) unless -x
// names another; each COLUMN is a line, one per node when the CSV has a
// node_id column (-by "" plots them as one; -by system one per system of a
// bench-report's results.csv). Rows with final=true (the summaries) and
// empty cells are left out; -logy draws y on a log scale, -points marks
// every point. Without -o the plot is written beside the CSV
// as FILE.png.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	out, err := run(os.Args[1:], os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "plot:", err)
		os.Exit(1)
	}
	fmt.Println(out)
}

// run plots as the command line says and returns the file written.
func run(args []string, stderr io.Writer) (string, error) {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "output file; its extension picks the format: .png, .svg or .pdf (default: the CSV's name with .png)")
	var o seriesOptions
	fs.StringVar(&o.x, "x", "", "x column (default: the first)")
	fs.StringVar(&o.by, "by", "node_id", "draw one line per value of this column, when the CSV has it; \"\" for none")
	title := fs.String("title", "", "title (default: the CSV's name)")
	var st style
	fs.BoolVar(&st.logY, "logy", false, "logarithmic y axis (values <= 0 are left out)")
	fs.BoolVar(&st.points, "points", false, "mark every point (for few points, e.g. one per measured rate)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: plot [flags] FILE.csv COLUMN...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	fs.Visit(func(f *flag.Flag) { o.byRequired = o.byRequired || f.Name == "by" })
	if fs.NArg() < 1 {
		fs.Usage()
		return "", flag.ErrHelp
	}
	in := fs.Arg(0)
	o.y = fs.Args()[1:]
	if *out == "" {
		*out = strings.TrimSuffix(in, filepath.Ext(in)) + ".png"
	}
	if *title == "" {
		*title = filepath.Base(in)
	}
	f, err := os.Open(in)
	if err != nil {
		return "", err
	}
	defer f.Close()
	xName, ss, err := readSeries(f, o)
	if err != nil {
		return "", fmt.Errorf("%s: %w", in, err)
	}
	return *out, draw(*out, *title, xName, ss, st)
}
