// Package rafttest holds in-memory implementations of the raft core's storage
// seams, for the core's own tests, the deterministic simulator and anyone
// who needs a quorum without disks.
//
//   - MemLog implements raft.Log with record batches kept as raw v2 bytes. It
//     keeps the flushed and unflushed parts apart: Crash drops everything at
//     or above FlushedOffset, as a process kill before fsync would (Kafka's
//     MockLog.reopen). Snapshots live in memory.
//   - MemStateStore implements raft.QuorumStateStore. A write is durable the
//     moment it returns; writes can be made to fail on demand.
//   - FailingLog wraps any raft.Log and fails Append or Flush on demand, for
//     the fail-stop tests (an fsync error must end the node's participation).
//
// None of these types is safe for concurrent use, like the driver that owns
// them.
package rafttest
