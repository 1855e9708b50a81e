// Package rafttest holds in-memory implementations of the raft core's storage
// seams and a scripted quorum, for the core's own tests, the deterministic
// simulator and the tests of anything built on the core.
//
//   - MemLog implements raft.Log with record batches kept as raw v2 bytes. It
//     keeps the flushed and unflushed parts apart: Crash drops everything at
//     or above FlushedOffset, as a process kill before fsync would (Kafka's
//     MockLog.reopen). Snapshots live in memory.
//   - MemStateStore implements raft.QuorumStateStore. A write is durable the
//     moment it returns; writes can be made to fail on demand.
//   - FailingLog wraps any raft.Log and fails Append or Flush on demand, for
//     the fail-stop tests (an fsync error must end the node's participation).
//   - InteractionEnv runs golden interaction scripts (cockroachdb/datadriven)
//     against a quorum of real drivers over MemLogs, in virtual time, with a
//     message queue the script moves (interaction_env.go; one file per
//     command, interaction_env_handler_*.go). The raft package's own
//     scripts run through it (raft/testdata/interaction), and a state
//     machine's tests plug into it (InteractionOpts).
//   - The request builders (VoteRequest, FetchRequest, ...) and Reseal make
//     the requests and forged batches of a peer, JVM-like or hostile.
//
// None of these types is safe for concurrent use, like the driver that owns
// them. The package is for tests only: no binary links it.
package rafttest
