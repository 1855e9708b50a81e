// Package purgatory holds delayed operations that wait for a threshold or a
// deadline, whichever comes first.
//
// The raft leader parks a Fetch with nothing new to return until its log end
// offset passes the fetch offset or MaxWaitMs elapses; a follower-facing
// operation might wait for the high watermark instead. Kafka keeps these in a
// ThresholdPurgatory sorted by (threshold, sequence) and expires them on a
// separate thread. Here the purgatory is a passive value owned by the driver
// goroutine: the caller passes the time in, asks for NextDeadline to know when
// to wake, and completes operations itself. There are no goroutines and no
// timers, and memory is proportional to the number of parked operations.
//
// Two binary heaps index the same entries: one ordered by (threshold, seq)
// for CompleteUpTo and CompleteAll, one ordered by (deadline, seq) for Expire
// and NextDeadline. Each entry records its position in both heaps, so removing
// it from the other heap costs O(log n).
package purgatory
