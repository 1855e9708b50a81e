package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kraftd/kraftd/workload"
)

// A run's CSV holds every node's stats rows under the workload's header.
func TestWriteRunCSV(t *testing.T) {
	dir := t.TempDir()
	var outs []string
	for node := int32(1); node <= 2; node++ {
		var b []byte
		for i, final := range []bool{false, false, true} {
			line, _ := json.Marshal(workload.Stats{NodeID: node, ElapsedSec: float64(i + 1), RecordsPerSec: 100, Final: final})
			b = append(append(b, line...), '\n')
		}
		b = append(b, "not a stats line\n"...)
		out := filepath.Join(dir, "node.out"+string('0'+node))
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	path, err := writeRunCSV(filepath.Join(dir, "csv"), "a0", "PLAINTEXT", 2, outs)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != "a0-PLAINTEXT-run2.csv" {
		t.Errorf("path %s", path)
	}
	rows := readCSV(t, path)
	if !slices.Equal(rows[0], workload.CSVHeader()) || len(rows) != 7 {
		t.Fatalf("header %v and %d rows, want the workload's header and 6 rows", rows[0], len(rows)-1)
	}
	node := slices.Index(rows[0], "node_id")
	if rows[1][node] != "1" || rows[6][node] != "2" || rows[6][len(rows[6])-1] != "true" {
		t.Errorf("rows %v", rows[1:])
	}
}

func TestFailoverCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "failover.csv")
	rows := [][]string{failoverRow(1, "SIGTERM", 1500*time.Microsecond)}
	if err := writeCSVFile(path, failoverHeader, rows); err != nil {
		t.Fatal(err)
	}
	if got := readCSV(t, path); len(got) != 2 || !slices.Equal(got[1], []string{"1", "SIGTERM", "1.500"}) {
		t.Errorf("failover.csv %v", got)
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
