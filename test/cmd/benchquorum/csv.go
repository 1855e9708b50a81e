package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kraftd/kraftd/workload"
)

// writeRunCSV writes one run's time series, every node's stats rows one
// after the other (node_id tells them apart, elapsed_sec is the time axis,
// final=true rows are the summaries), to DIR/SCENARIO-PROTOCOL-runN.csv.
func writeRunCSV(dir, scenario, proto string, run int, outs []string) (string, error) {
	var rows [][]string
	for _, out := range outs {
		lines, err := readStats(out)
		if err != nil {
			return "", err
		}
		for _, s := range lines {
			rows = append(rows, s.CSVRecord())
		}
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s-run%d.csv", scenario, proto, run))
	return path, writeCSVFile(path, workload.CSVHeader(), rows)
}

// failoverRow is one failover of -scenarios failover, as a CSV row.
func failoverRow(run int, signal string, took time.Duration) []string {
	return []string{strconv.Itoa(run), signal, strconv.FormatFloat(float64(took)/float64(time.Millisecond), 'f', 3, 64)}
}

var failoverHeader = []string{"run", "signal", "took_ms"}

func writeCSVFile(path string, header []string, rows [][]string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write(header)
	_ = w.WriteAll(rows) // flushes; the error, if any, is w.Error()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
