// Package osched holds kraftd's requests to the operating system's CPU
// scheduler.
//
// A controller spends most of its time asleep and the latency of a commit is
// a chain of short wake-ups across three processes: read a request, append,
// fsync (itself several waits for the disk), answer. On a machine whose cores
// are busy with other work, each wake-up may wait for the running task's time
// slice to end. Linux 6.12 and later (EEVDF) let a task ask for a shorter
// slice (sched_setattr's sched_runtime for SCHED_OTHER, 0.1 to 100 ms): a
// waking task with a shorter slice than the running one preempts it, so
// kraftd's threads run when they wake instead of after a busy neighbour's
// slice. The slice is a request for latency, not for more CPU: the share of
// each task is unchanged.
package osched
