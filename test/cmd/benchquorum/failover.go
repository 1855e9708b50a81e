package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/kraftd/kraftd/admin"
	"github.com/kraftd/kraftd/topics"
)

// runFailover measures, with Kafka's default quorum timeouts (election 1 s,
// fetch 2 s), the time from signalling the leader to a surviving node
// answering DescribeQuorum as leader of a higher epoch: SIGTERM (graceful:
// the leader resigns with EndQuorumEpoch) and kill -9 (the followers notice
// through the fetch timeout). Each run restarts the stopped node. With
// csvDir, each failover is a row of csvDir/failover.csv.
func runFailover(bin string, runs int, csvDir string) error {
	dir, err := os.MkdirTemp("", "kraftd-failover-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	c, err := newCluster(bin, dir, extraProps)
	if err != nil {
		return err
	}
	q := &failoverQuorum{cluster: c, procs: make([]*exec.Cmd, 3)}
	defer q.stopAll()
	for i := 0; i < 3; i++ {
		if err := q.start(i); err != nil {
			return err
		}
	}
	var term, kill []time.Duration
	var rows [][]string
	for r := 0; r < runs; r++ {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
			took, err := q.failover(r, sig)
			if err != nil {
				return err
			}
			if sig == syscall.SIGKILL {
				kill = append(kill, took)
			} else {
				term = append(term, took)
			}
			rows = append(rows, failoverRow(r+1, signalName(sig), took))
		}
	}
	fmt.Printf("failover (Kafka default timeouts: election 1 s, fetch 2 s), median of %d: SIGTERM %v, kill -9 %v\n",
		runs, medianDuration(term).Round(time.Millisecond), medianDuration(kill).Round(time.Millisecond))
	if csvDir == "" {
		return nil
	}
	return writeCSVFile(filepath.Join(csvDir, "failover.csv"), failoverHeader, rows)
}

// failoverQuorum is a cluster whose nodes run a light workload with
// Kafka's default timeouts; procs[i] is nil while node i is stopped.
type failoverQuorum struct {
	*cluster
	procs []*exec.Cmd
}

func (q *failoverQuorum) start(i int) error {
	cfg, err := q.writeConfig(i, "")
	if err != nil {
		return err
	}
	// Appended to: a restarted node keeps its earlier log.
	ef, err := os.OpenFile(q.path("node%d.log", i), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(q.bin, "test-kraft-server-start", "--config", cfg, "--replica-directory-id", dirIDs[i],
		"--throughput", "2000", "--stats-interval", "1h", "--log-level", "warn")
	cmd.Stderr = ef
	if err := cmd.Start(); err != nil {
		return err
	}
	q.procs[i] = cmd
	return nil
}

// stop signals node i and waits for it to exit (killing it after 15 s).
func (q *failoverQuorum) stop(i int, sig syscall.Signal) {
	if q.procs[i] == nil {
		return
	}
	_ = q.procs[i].Process.Signal(sig)
	waitOrKill(q.procs[i], 15*time.Second)
	q.procs[i] = nil
}

func (q *failoverQuorum) stopAll() {
	for i := range q.procs {
		q.stop(i, syscall.SIGTERM)
	}
}

// failover stops the current leader with sig, returns how long until
// another node led a higher epoch, and restarts the stopped node.
func (q *failoverQuorum) failover(run int, sig syscall.Signal) (time.Duration, error) {
	l, epoch, err := q.waitLeader(0, -1, 20*time.Second)
	if err != nil {
		return 0, err
	}
	time.Sleep(2 * time.Second) // steady state with the workload running
	t0 := time.Now()
	stopped := make(chan struct{})
	go func() { q.stop(l, sig); close(stopped) }() // measured from the signal, not from the exit
	nl, ne, err := q.waitLeader(epoch, l, 30*time.Second)
	if err != nil {
		return 0, err
	}
	took := time.Since(t0)
	fmt.Printf("     failover %d %-7s: leader %d (epoch %d) -> %d (epoch %d) in %v\n", run+1, signalName(sig), l+1, epoch, nl+1, ne, took.Round(time.Millisecond))
	<-stopped
	return took, q.start(l)
}

// waitLeader polls until a node other than skip answers DescribeQuorum as
// leader with an epoch above minEpoch, and returns its index and epoch.
func (q *failoverQuorum) waitLeader(minEpoch int32, skip int, d time.Duration) (int, int32, error) {
	t0 := time.Now()
	for time.Since(t0) < d {
		if i, e := q.leader(minEpoch, skip); i >= 0 {
			return i, e, nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return -1, 0, fmt.Errorf("no leader above epoch %d within %v (logs in %s)", minEpoch, d, q.dir)
}

// leader returns the node (index) answering DescribeQuorum as leader with
// an epoch above minEpoch, skipping index skip; -1 when there is none.
func (q *failoverQuorum) leader(minEpoch int32, skip int) (int, int32) {
	for i := 0; i < 3; i++ {
		if i == skip || q.procs[i] == nil {
			continue
		}
		if id, epoch, ok := describe(q.ports[i]); ok && id == int32(i+1) && epoch > minEpoch {
			return i, epoch
		}
	}
	return -1, 0
}

func signalName(sig syscall.Signal) string {
	if sig == syscall.SIGKILL {
		return "kill -9"
	}
	return "SIGTERM"
}

func medianDuration(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

// describe asks the node on port for DescribeQuorum; ok when it answers as
// leader.
func describe(port int) (int32, int32, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	dq, err := admin.DescribeQuorumAt(ctx, fmt.Sprintf("127.0.0.1:%d", port), topics.ClusterMetadata)
	if err != nil {
		return 0, 0, false
	}
	p := dq.Topics[0].Partitions[0]
	return p.LeaderID, p.LeaderEpoch, true
}
