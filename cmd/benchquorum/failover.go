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
)

// runFailover measures, with Kafka's default quorum timeouts (election 1 s,
// fetch 2 s), the time from signalling the leader to a surviving node
// answering DescribeQuorum as leader of a higher epoch: SIGTERM (graceful:
// the leader resigns with EndQuorumEpoch) and kill -9 (the followers notice
// through the fetch timeout). Each run restarts the stopped node.
func runFailover(bin string, runs int) error {
	dir, err := os.MkdirTemp("", "kraftd-failover-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	voters := fmt.Sprintf("1@127.0.0.1:%d,2@127.0.0.1:%d,3@127.0.0.1:%d", ports[0], ports[1], ports[2])
	procs := make([]*exec.Cmd, 3)
	start := func(i int) error {
		cfg := filepath.Join(dir, fmt.Sprintf("node%d.properties", i+1))
		props := fmt.Sprintf("node.id=%d\nprocess.roles=controller\nlisteners=CONTROLLER://127.0.0.1:%d\ncontroller.listener.names=CONTROLLER\ncontroller.quorum.voters=%s\nlog.dirs=%s\n",
			i+1, ports[i], voters, filepath.Join(dir, fmt.Sprintf("data%d", i+1)))
		if err := os.WriteFile(cfg, []byte(props), 0o644); err != nil {
			return err
		}
		ef, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("node%d.log", i+1)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		cmd := exec.Command(bin, "test-kraft-server-start", "--config", cfg, "--replica-directory-id", dirIDs[i],
			"--throughput", "2000", "--stats-interval", "1h", "--log-level", "warn")
		cmd.Stderr = ef
		if err := cmd.Start(); err != nil {
			return err
		}
		procs[i] = cmd
		return nil
	}
	stop := func(i int, sig syscall.Signal) {
		if procs[i] == nil {
			return
		}
		_ = procs[i].Process.Signal(sig)
		done := make(chan struct{})
		go func() { procs[i].Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = procs[i].Process.Kill()
			<-done
		}
		procs[i] = nil
	}
	defer func() {
		for i := range procs {
			stop(i, syscall.SIGTERM)
		}
	}()
	for i := 0; i < 3; i++ {
		if err := start(i); err != nil {
			return err
		}
	}
	// leader returns the node (index) answering DescribeQuorum as leader
	// with an epoch above minEpoch, skipping index skip.
	leader := func(minEpoch int32, skip int) (int, int32) {
		for i := 0; i < 3; i++ {
			if i == skip || procs[i] == nil {
				continue
			}
			if id, epoch, ok := describe(ports[i]); ok && id == int32(i+1) && epoch > minEpoch {
				return i, epoch
			}
		}
		return -1, 0
	}
	waitLeader := func(minEpoch int32, skip int, d time.Duration) (int, int32, time.Duration, error) {
		t0 := time.Now()
		for time.Since(t0) < d {
			if i, e := leader(minEpoch, skip); i >= 0 {
				return i, e, time.Since(t0), nil
			}
			time.Sleep(5 * time.Millisecond)
		}
		return -1, 0, 0, fmt.Errorf("no leader above epoch %d within %v (logs in %s)", minEpoch, d, dir)
	}
	var term, kill []time.Duration
	for r := 0; r < runs; r++ {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
			l, epoch, _, err := waitLeader(0, -1, 20*time.Second)
			if err != nil {
				return err
			}
			time.Sleep(2 * time.Second) // steady state with the workload running
			t0 := time.Now()
			stopped := make(chan struct{})
			go func() { stop(l, sig); close(stopped) }() // measured from the signal, not from the exit
			nl, ne, _, err := waitLeader(epoch, l, 30*time.Second)
			if err != nil {
				return err
			}
			took := time.Since(t0)
			name := "SIGTERM"
			if sig == syscall.SIGKILL {
				name = "kill -9"
				kill = append(kill, took)
			} else {
				term = append(term, took)
			}
			fmt.Printf("     failover %d %-7s: leader %d (epoch %d) -> %d (epoch %d) in %v\n", r+1, name, l+1, epoch, nl+1, ne, took.Round(time.Millisecond))
			<-stopped
			if err := start(l); err != nil {
				return err
			}
		}
	}
	med := func(ds []time.Duration) time.Duration {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)/2]
	}
	fmt.Printf("failover (Kafka default timeouts: election 1 s, fetch 2 s), median of %d: SIGTERM %v, kill -9 %v\n",
		runs, med(term).Round(time.Millisecond), med(kill).Round(time.Millisecond))
	return nil
}

// describe asks the node on port for DescribeQuorum; ok when it answers as
// leader.
func describe(port int) (int32, int32, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	dq, err := admin.DescribeQuorumAt(ctx, fmt.Sprintf("127.0.0.1:%d", port), admin.MetadataTopic)
	if err != nil {
		return 0, 0, false
	}
	p := dq.Topics[0].Partitions[0]
	return p.LeaderID, p.LeaderEpoch, true
}
