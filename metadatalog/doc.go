// Package metadatalog is kraftd's durable storage in Apache Kafka's on-disk
// formats: the replicated log (raft.Log), its snapshots
// (raft.SnapshotReader/Writer) and the quorum-state file
// (raft.QuorumStateStore).
//
// # Layout
//
// One partition dir, <metadata.log.dir>/__cluster_metadata-0 (or
// __raft_performance_test-0 for the test workload; see PartitionDir):
//
//	00000000000000000000.log      segments: v2 record batches, exactly the bytes
//	                              raft appended (Kafka's kafka-dump-log reads them)
//	leader-epoch-checkpoint       epoch cache, Kafka's text format
//	partition.metadata            topic id (when Options.TopicID is set)
//	quorum-state                  election state JSON (QuorumStateStore)
//	<offset 20>-<epoch 10>.checkpoint   frozen snapshots
//
// No .index/.timeindex files are written: the offset index is kept in memory
// (one entry per 4 KiB, rebuilt at open), Kafka's dump tool reads .log files
// directly, and Kafka's log loader rebuilds missing indexes. Stale Kafka index
// and producer-state files are removed at open, because kraftd would not keep
// them in step with the .log files.
//
// Reads near the log end (each follower's fetch, the listener) are served from
// an in-memory copy of the newest appended bytes (memtail.go: two append-only
// 1 MiB chunks), others with one pread; either way the bytes returned never
// change afterwards.
//
// # Durability
//
// Append writes without fsync; Flush fsyncs every segment written since the
// previous flush and then rewrites leader-epoch-checkpoint if it changed.
// FlushedOffset is the first offset not yet durable, so raft can defer and
// batch flushes. A segment is fsynced before the next one is created (roll),
// so only the last segment can ever hold a torn tail. Truncation fsyncs the cut
// and the dir before returning. The first write or fsync error is sticky:
// every later write fails (fsync errors are never retried, since the kernel may
// have dropped the dirty pages), reads keep working.
//
// # Recovery
//
// Open re-validates every segment, as Kafka does for the metadata log
// (recovery point 0): each batch's length, magic, CRC-32C, base offset
// continuity and non-decreasing epoch. In the last segment, a bad batch with no
// valid batch anywhere after it is a torn tail: the file is truncated at the
// last good batch and a warning names file, position and offset. Any other bad
// batch (in an earlier segment, or followed by valid data) stops Open with an
// error wrapping ErrCorrupt that names file and position: the data may be
// committed and must not be dropped silently. Leftover *.checkpoint.part,
// *.deleted and *.tmp files are removed; snapshots below the log start are
// deleted; a log start > 0 without a snapshot at or above it is an error; the
// log start is the first segment's base unless that is > 0 and no snapshot
// ends there, then it is the earliest snapshot (retention deletes only whole
// segments, so the start may lie inside the first segment; Kafka does not
// checkpoint the metadata log's start, so it is recovered from the
// snapshots); a newest snapshot past the log end (crash during snapshot
// install) restarts the log at it. Recovered bytes are fsynced before they
// count as flushed.
//
// The partition leader epoch is not covered by the batch CRC (Kafka's
// format), so a bit flip there that keeps epochs non-decreasing is not
// detectable.
//
// # Usage
//
//	l, err := metadatalog.Open(metadatalog.Options{
//		Dir:     topics.PartitionDir(metadataLogDir, topics.ClusterMetadata),
//		TopicID: uuid.MetadataTopicID, Logger: logger})
//	store := metadatalog.NewQuorumStateStore(nil, l.Dir())
//	last, err := l.Append(batches) // follower: offsets given
//	last, err = l.AppendAsLeader(batches, epoch) // leader: offsets and epoch stamped
//	err = l.Flush()
//	data, err := l.Read(offset, 8<<20) // raw batches, a fresh buffer
//
// Tools and tests can read a dir without changing it:
//
//	l, err := metadatalog.OpenReadOnly(dir)
//	err = l.Batches(l.StartOffset(), func(batch []byte) error { ...; return nil })
//
// Log is not safe for concurrent use; the raft driver goroutine owns it. Only a
// FlushJob (BeginFlush) may run on another goroutine.
//
// MaybeClean applies metadata.max.retention.bytes/.ms and must be called
// periodically by the owner (Kafka: every 60 s).
//
// All file access goes through vfs.FS (Options.FS, NewQuorumStateStore),
// so the crash tests run the log on vfs.MemFS and open it on the power-loss
// image taken after every single file-system operation, and the fault tests
// run it under faultfs.FS (full disk, fsync errors).
package metadatalog
