package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/workload"
)

// retentionOffProps keep every segment, so a run's window can be counted in
// a follower's log (the product's default retention deletes segments once a
// snapshot covers them: at 400,000 records/s within seconds).
const retentionOffProps = "metadata.max.retention.bytes=-1\nmetadata.max.retention.ms=-1\n"

// logCount is what -count-log adds to a run: the leader's own committed
// records/s over its measured stats intervals, and the records of the batches
// the leader stamped in the same span of wall time counted in a follower's
// log (the report's count: bench_report_test.go).
type logCount struct {
	leaderRate float64    // from the leader's stats lines, the measured intervals
	followers  []int      // node ids (1-based)
	logRate    [2]float64 // counted in each follower's log over the same span
	complete   [2]bool    // false: retention had removed part of the span
}

// countLog counts both followers' logs over the span the leader's measured
// stats intervals cover: the workload's elapsed_sec is from its start, about
// when the process started (started[i]). The leader commits what one of them
// has: the other may lag, and its log then holds less of the span.
func countLog(c *cluster, leader int32, lines []workload.Stats, warmup int, started []time.Time) (logCount, error) {
	var lc logCount
	for id := 1; id <= 3; id++ {
		if int32(id) != leader {
			lc.followers = append(lc.followers, id)
		}
	}
	var first, last float64 = -1, -1
	var recs, secs float64
	for j, s := range lines {
		if s.Final || s.Role != "Leader" || j < warmup {
			continue
		}
		if first < 0 {
			first = s.ElapsedSec - s.IntervalSec
		}
		last = s.ElapsedSec
		recs += s.RecordsPerSec * s.IntervalSec
		secs += s.IntervalSec
	}
	if secs <= 0 {
		return lc, fmt.Errorf("the leader reported no measured interval")
	}
	lc.leaderRate = recs / secs
	t0 := started[leader-1]
	from := t0.Add(time.Duration(first * float64(time.Second)))
	to := t0.Add(time.Duration(last * float64(time.Second)))
	for i, id := range lc.followers {
		n, complete, err := countStamped(filepath.Join(c.path("data%d", id-1), "__raft_performance_test-0"), from, to)
		if err != nil {
			return lc, fmt.Errorf("node %d: %w", id, err)
		}
		lc.logRate[i], lc.complete[i] = float64(n)/to.Sub(from).Seconds(), complete
	}
	return lc, nil
}

// countStamped counts the data records of the batches in the partition dir
// stamped in [from, to); complete is false when the log starts after from.
func countStamped(dir string, from, to time.Time) (n int64, complete bool, err error) {
	l, err := metadatalog.OpenReadOnly(dir)
	if err != nil {
		return 0, false, err
	}
	defer l.Close()
	complete = true
	firstBatch := true
	err = l.Batches(l.StartOffset(), func(b []byte) error {
		h, err := protocol.CheckBatch(b)
		if err != nil {
			return err
		}
		if firstBatch && h.BaseTimestamp >= from.UnixMilli() {
			complete = false // the span's start was already deleted
		}
		firstBatch = false
		if !h.IsControl() && h.BaseTimestamp >= from.UnixMilli() && h.BaseTimestamp < to.UnixMilli() {
			n += int64(h.RecordCount)
		}
		return nil
	})
	return n, complete, err
}
