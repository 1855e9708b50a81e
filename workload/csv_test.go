package workload

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/raft"
)

// statsRun drives one workload through two intervals and its summary,
// printing in format f.
func statsRun(t *testing.T, f StatsFormat) string {
	t.Helper()
	t0 := time.Unix(1000, 0)
	var out bytes.Buffer
	w := New(Config{RecordSize: 100, MaxInFlight: 50, MaxPerAppend: 50, StatsFormat: f}, 1, true, &out, zap.NewNop(), t0)
	d := &fakeDriver{}
	w.clock = func() time.Time { return t0.Add(20 * time.Millisecond) }
	w.Tick(t0, leaderStatus(2), d)
	w.HandleCommit([]raft.CommittedBatch{{BaseOffset: 0, LastOffset: 49, Epoch: 2, Records: recordsOf(50, 100)}})
	w.printStats(t0.Add(2*time.Second), leaderStatus(2), false)
	w.printStats(t0.Add(4*time.Second), leaderStatus(2), false)
	w.printStats(t0.Add(5*time.Second), leaderStatus(2), true)
	return out.String()
}

// --stats-format csv prints the header once and then, row for row, the
// values --stats-format json prints, the summary last with final=true.
func TestStatsCSVMatchesJSON(t *testing.T) {
	rows, err := csv.NewReader(bytes.NewReader([]byte(statsRun(t, StatsCSV)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var objs []map[string]any
	sc := bufio.NewScanner(bytes.NewReader([]byte(statsRun(t, StatsJSON))))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, m)
	}
	if len(rows) != 4 || len(objs) != 3 {
		t.Fatalf("%d csv rows and %d json lines, want a header and 3 rows, 3 lines", len(rows), len(objs))
	}
	header := rows[0]
	if header[0] != "elapsed_sec" || len(header) != len(objs[0]) {
		t.Fatalf("header %v: want elapsed_sec first and the %d JSON fields", header, len(objs[0]))
	}
	for i, row := range rows[1:] {
		for j, col := range header {
			want, ok := objs[i][col]
			if !ok {
				t.Fatalf("column %q is not a JSON field", col)
			}
			if col == "cpu_seconds" || col == "peak_rss_mb" { // the process's, read at each print
				if _, err := strconv.ParseFloat(row[j], 64); err != nil {
					t.Errorf("row %d %s = %q: %v", i+1, col, row[j], err)
				}
				continue
			}
			if got := csvValue(row[j], want); got != want {
				t.Errorf("row %d %s = %q, json %v", i+1, col, row[j], want)
			}
		}
	}
	if last := rows[3]; last[len(last)-1] != "true" || rows[1][len(rows[1])-1] != "false" {
		t.Errorf("final column: interval %q summary %q", rows[1][len(rows[1])-1], last[len(last)-1])
	}
	if rows[2][0] != "4" {
		t.Errorf("elapsed_sec of the second interval %q, want 4", rows[2][0])
	}
}

// csvValue decodes a CSV cell as the type JSON decoded like (a float64,
// bool or string).
func csvValue(cell string, like any) any {
	switch like.(type) {
	case float64:
		f, err := strconv.ParseFloat(cell, 64)
		if err != nil {
			return cell
		}
		return f
	case bool:
		b, err := strconv.ParseBool(cell)
		if err != nil {
			return cell
		}
		return b
	}
	return cell
}
