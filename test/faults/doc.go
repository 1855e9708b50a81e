// Package faults runs real kraftd processes under real faults and checks
// that nothing acknowledged was lost (docs/design/faults.md 3.5: the
// real-process layer, and the process side of the disk rows).
//
// A Cluster runs N test-kraft-server-start processes on 127.0.0.1, built
// once with -tags faultfs. Every directed peer link i->j goes through its
// own in-process toxiproxy (Mesh) listening on its own loopback address
// (127.1.i.j): a kraftd node names each peer at its link's address in
// controller.quorum.voters; a Kafka node names peers by host name and
// resolves each through its own hosts file (jdk.net.hosts.file) to its
// link's address, which also catches the leader endpoint Kafka followers
// dial. A test can block, delay, throttle or reset any direction of any
// link.
// Processes are killed (-9), stopped (SIGSTOP/SIGCONT), terminated and
// restarted by pid on the same dir and port. Each node's file layer follows
// a control file (faultfs.ParseControl) for fsync stalls, EIO and ENOSPC; a
// tmpfs the test mounts fills up for real. The file layer also records
// each file's size at its last fsync (faultfs.SyncLedger), so PowerLoss can cut
// a killed node's files back to what a power loss would leave.
//
// # Acknowledged
//
// A batch is acknowledged when the leader's workload, in the epoch it
// appended the batch, was told by raft that the batch committed, and the
// entry (base and last offset, epoch, CRC of the record values) was then
// written and fsynced to that node's commit journal (--commit-journal, a
// file outside the data dir). An entry not yet fsynced when its process
// died was never acknowledged.
//
// # The checker
//
// Check is a pure function over a History: every node's log (read with
// metadatalog.OpenReadOnly) and its last reported high watermark, the
// journals, DescribeQuorum samples taken every 100 ms from each node, and
// the fault rounds. Journals and high watermarks are read before the logs,
// so the logs must hold everything they name. It reports each violation
// with its kind, node, offset and round: an ack on fewer than a majority
// (S11), a node holding other data below its high watermark (S6), two logs
// differing below both high watermarks, two leaders in one epoch (S1), a
// node leading at a lower epoch after a higher one (S2), a leader's high
// watermark below one reported before in the same or a lower epoch (S7),
// no commit within LivenessBound after a heal (L1, FT + 10·ET scaled for a
// loaded 2-core machine), fewer than a majority of logs agreeing below the
// highest high watermark any leader reported (S6 on the leader's word,
// which judges Kafka leaders too: they write no journal), and a leader's
// high watermark covering no entry of its own epoch (S8).
//
// # Fault-matrix rows
//
// In make test (no build tag): TestLeaderIsolated (row 13),
// TestKillLeaderCycles (1), TestPowerLoss (3 and 5: unflushed tails cut
// off, torn batches, on the leader and on every node at once; 2),
// TestDiskErrorsFailStop (10), TestDiskFull (9: append and segment roll,
// leader and follower), TestMixedKillPauseIsolate (1, 13, 16, 18 on two
// kraftd nodes and one Kafka 4.4.0 TestRaftServer; skipped without java
// and interop/lib). With -tags faults
// (make faults): TestFiveVoterPartitions (14, 16), TestLinkFaults (16, 13:
// one-way, flapping, latency, throttle, reset), TestPauseLeader (18),
// TestTermLeaderAndDuringElection (32), TestAllKilledMajorityRestarts (2),
// TestFsyncStalls (11, with a bound on every node's peak RSS),
// TestQuorumStateWriteCrashes (4), TestDataDirLoss (12),
// TestCorruptionRefusesStart (6, 7), TestSnapshotCatchUpUnderKills (31),
// TestMixedOneKraftdTwoKafka (1, 13, 16, 18), TestMixedControllers (1, 2,
// 3, 5, 13, 16, 18 with kafka.Kafka controllers), TestMixedDiskFull (9)
// and TestMixedCorruption (6), each fault on a Kafka node and on a kraftd
// node of one quorum, TestMixedNemesisLong (the nemesis on 2+1 and 1+2
// mixed quorums, TestRaftServer and controllers), TestCheckerCatchesRealLoss
// (the checker on real logs cut in half), and TestNemesisLong, the seeded
// mix of all of them for FAULT_MINUTES.
//
// # Mixed quorums
//
// Options.Kafka runs chosen nodes as Kafka's TestRaftServer (kafka.go),
// behind the same mesh; every fault applies to them except the disk ones
// (their file layer is Kafka's own) and the cut of PowerLoss. With
// Options.Controllers every node is a real controller on
// __cluster_metadata instead: kraftd `start` beside Kafka's kafka.Kafka
// (controllers.go). Mixed runs end by reading every log with Kafka's
// kafka-dump-log (dump.go).
package faults
