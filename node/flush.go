package node

import (
	"time"

	"github.com/kraftd/kraftd/raft"
)

// flushDone is a leader fsync that ran off the loop (raft.Config.Flusher).
type flushDone struct {
	job raft.FlushJob
	err error
}

// flushOffLoop is the driver's Flusher when leader fsync deferral is on
// (kraftd.controller.quorum.leader.fsync.deferral.enable): the fsync runs
// on a goroutine of its own, so the loop keeps serving fetches, and the
// loop hands its end to the driver (Driver.FlushDone). The driver keeps
// at most one job in flight; the log runs or waits for it before it cuts
// or closes files, so the goroutine never outlives them.
func (n *Node) flushOffLoop(job raft.FlushJob) {
	go func() {
		start := time.Now()
		err := job.Run()
		if m := n.obs.m; m != nil {
			m.Raft().Fsync(time.Since(start))
		}
		select {
		case n.flushed <- flushDone{job: job, err: err}:
		case <-n.stopped:
		}
	}()
}
