package main

import (
	"bytes"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Three nodes' stats, as benchquorum -csv writes them: two intervals and a
// summary each.
const statsCSV = `elapsed_sec,node_id,records_per_sec,p99_ms,final
1,1,100,2.5,false
2,1,120,3,false
2,1,110,3,true
1,2,0,0,false
2,2,0,0,false
1,3,0,0,false
`

func writeCSV(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stats.csv")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPlotPNG(t *testing.T) {
	in := writeCSV(t, statsCSV)
	out, err := run([]string{in, "records_per_sec", "p99_ms"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if out != strings.TrimSuffix(in, ".csv")+".png" {
		t.Errorf("wrote %s", out)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
		t.Errorf("image %v", b)
	}
}

func TestPlotSVG(t *testing.T) {
	out := filepath.Join(t.TempDir(), "p.svg")
	if _, err := run([]string{"-o", out, "-title", "a0", writeCSV(t, statsCSV), "records_per_sec"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// One legend entry per node.
	if !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("node_id=3")) || !bytes.Contains(b, []byte("a0")) {
		t.Errorf("svg of %d bytes without the plot, the legend or the title", len(b))
	}
}

func TestReadSeries(t *testing.T) {
	// Two columns split by node: each line names its column and node.
	_, ss2, err := readSeries(strings.NewReader(statsCSV), seriesOptions{y: []string{"records_per_sec", "p99_ms"}, by: "node_id"})
	if err != nil || len(ss2) != 6 || ss2[1].name != "p99_ms node_id=1" {
		t.Errorf("two columns: %+v, %v", ss2, err)
	}
	x, ss, err := readSeries(strings.NewReader(statsCSV), seriesOptions{y: []string{"records_per_sec"}, by: "node_id"})
	if err != nil {
		t.Fatal(err)
	}
	if x != "elapsed_sec" || len(ss) != 3 || ss[0].name != "node_id=1" || len(ss[0].x) != 2 || ss[0].y[1] != 120 {
		t.Errorf("x %s, series %+v (the summary row left out)", x, ss)
	}
	// The default -by node_id on a CSV without it: one series.
	_, ss, err = readSeries(strings.NewReader("t,v\n0,1\n1,2\n"), seriesOptions{y: []string{"v"}, by: "node_id"})
	if err != nil || len(ss) != 1 || len(ss[0].x) != 2 {
		t.Errorf("no node_id column: %+v, %v", ss, err)
	}
}

// A bench-report's results: one line per system, log y, points marked; an empty
// cell (a value a system does not report) and a y <= 0 are left out.
func TestPlotReportLogY(t *testing.T) {
	in := writeCSV(t, "system,committed_per_s,p50_ms,p99_ms\nkraftd,5000,0.9,2\nkafka,5000,,40\nkraftd,20000,1.5,3\nkafka,20000,,45\netcd,20000,0,4\n")
	_, ss, err := readSeries(strings.NewReader("system,x,p50_ms\na,1,\nb,1,2\n"), seriesOptions{x: "x", y: []string{"p50_ms"}, by: "system"})
	if err != nil || len(ss) != 1 || ss[0].name != "system=b" {
		t.Fatalf("empty cells: %+v, %v", ss, err)
	}
	out := filepath.Join(t.TempDir(), "p.svg")
	if _, err := run([]string{"-o", out, "-x", "committed_per_s", "-by", "system", "-logy", "-points", in, "p50_ms"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("system=kraftd")) || bytes.Contains(b, []byte("system=kafka")) || bytes.Contains(b, []byte("system=etcd")) {
		t.Errorf("legend: want kraftd only (kafka has no p50, etcd's is 0 on a log scale)")
	}
	if _, err := run([]string{"-o", out, "-by", "system", "-logy", writeCSV(t, "x,system,v\n1,a,0\n"), "v"}, io.Discard); err == nil || !strings.Contains(err.Error(), "no point") {
		t.Errorf("nothing drawable: %v", err)
	}
}

func TestPlotErrors(t *testing.T) {
	csv := writeCSV(t, statsCSV)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{csv}, "name the columns to plot"},
		{[]string{csv, "nope"}, `no column "nope"`},
		{[]string{"-x", "nope", csv, "p99_ms"}, `no column "nope"`},
		{[]string{"-by", "peer", csv, "p99_ms"}, `no column "peer"`},
		{[]string{"-o", filepath.Join(t.TempDir(), "p.gif"), csv, "p99_ms"}, "must end in .png, .svg or .pdf"},
		{[]string{writeCSV(t, "t,v\n0,x\n"), "v"}, `row 1, column v: "x" is not a number`},
		{[]string{writeCSV(t, "t,v\n"), "v"}, "no rows"},
		{[]string{writeCSV(t, "t,v,final\n0,1,true\n"), "v"}, "only summaries"},
		{[]string{writeCSV(t, "t,v\n0,1,2\n"), "v"}, "wrong number of fields"},
		{[]string{filepath.Join(t.TempDir(), "missing.csv"), "v"}, "no such file"},
	} {
		if _, err := run(c.args, io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error saying %q", c.args, err, c.want)
		}
	}
}
