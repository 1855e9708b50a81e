// Package storage is a node's storage tooling and identity on disk, as
// Kafka's kafka-storage tool and org.apache.kafka.metadata.storage: the
// meta.properties of every log dir, and the logic of the
// `kafka-storage`-compatible commands `format` and `info` (ids are package
// uuid's; `random-uuid` prints uuid.Random()).
//
// meta.properties (Java Properties text, package javaprops) is read with
// ReadMetaProperties and written atomically (meta.properties.tmp, fsync,
// rename, dir fsync) with WriteMetaProperties. Version 1 (KRaft) requires
// cluster.id and node.id.
//
// Commands, for cmd/controller:
//
//	format:       err := storage.Format(storage.FormatOptions{
//	                  Dirs: logDirs, MetadataDir: metadataLogDir,
//	                  ClusterID: id, NodeID: nodeID, IgnoreFormatted: ignore,
//	                  DynamicQuorum: len(voters) == 0, InitialControllers: ics,
//	                  ControllerListener: listener, Out: os.Stdout})
//	info:         text, err := storage.Info(dirs) // print text; exit 1 if err != nil
//	start-up:     node, err := storage.Load(logDirs, metadataLogDir, nodeID)
//	              // node.ClusterID, node.DirectoryID (raft replica directory id)
//
// Format does what Kafka 4.4's kafka-storage format does, with its checks,
// order and messages (features.go applies its Formatter's rules to the
// levels of package features). It refuses an already formatted dir unless
// IgnoreFormatted, and refuses dirs formatted with another cluster id or
// node id in any case. It prints the bootstrap records, then for each new
// dir writes, for a controller's metadata dir, the bootstrap snapshot
// __cluster_metadata-0/00000000000000000000-0000000000.checkpoint (Kafka
// 4.4's bootstrap: a control batch with the SnapshotHeader and, for
// kraft.version 1, the KRaftVersion and Voters records, then the
// FeatureLevelRecords, then a footer, as RecordsSnapshotWriter writes them),
// and last meta.properties v1, so a crash mid-format leaves the dir looking
// unformatted. kraft.version is 1 exactly when controller.quorum.voters is
// empty (DynamicQuorum); InitialControllers (ParseInitialControllers parses
// --initial-controllers; --standalone is one entry for the node itself with
// uuid.RandomDirectoryID) fills the Voters record and gives a voter's
// metadata dir its directory id. Voters and dirs come in the order Kafka's
// HashMaps give them (javaorder.go), so the bytes and lines match Kafka's.
//
// Every file is read and written through vfs.FS (FormatOptions.FS, LoadFS,
// InfoFS; nil = the OS) and every write is vfs.WriteFileAtomic, so the
// tests format on vfs.MemFS and check the power-loss image after every
// single file-system operation, and run format under faultfs.FS (full
// disk, fsync errors).
//
// Load makes the start-up checks Kafka makes: every dir formatted, one
// cluster.id and node.id across dirs (errors name both files), node.id equal
// to the configured one, directory ids valid and distinct; a missing
// directory.id is generated and written back.
//
// The package imports neither config nor the metadata log: it reads what it
// needs of a node's configuration from its caller, and raft's tests write
// its bootstrap snapshot. Its errors start with "storage: ".
package storage
